"""Local HTTP servers that speak the OpenAI and Anthropic protocols, scripted per test."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Script:
    """Responses served in order: (status, body dict or raw str, headers)."""

    def __init__(self, responses: list[tuple[int, Any, dict[str, str]]]) -> None:
        self.responses = responses
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []


@contextmanager
def serve(script: Script) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            body = self.rfile.read(length)
            script.requests.append(json.loads(body or b"{}"))
            script.headers.append({k.lower(): v for k, v in self.headers.items()})
            index = min(len(script.requests) - 1, len(script.responses) - 1)
            status, payload, headers = script.responses[index]
            data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def openai_reply(text: str, prompt: int = 11, completion: int = 7) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "local-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


def anthropic_reply(text: str, prompt: int = 13, completion: int = 5) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-local",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": completion},
    }


def error(status: int, message: str, kind: str = "error") -> tuple[int, Any, dict[str, str]]:
    return status, {"error": {"message": message, "type": kind}}, {"retry-after-ms": "1"}
