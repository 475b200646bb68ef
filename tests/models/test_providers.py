"""The OpenAI and Anthropic adapters against local servers speaking their protocols."""

from __future__ import annotations

from pathlib import Path

import pytest
from servers import Script, anthropic_reply, error, openai_reply, serve

from kope.models import (
    Message,
    ModelAuthError,
    ModelConfigError,
    ModelError,
    ModelNotFoundError,
    ModelUnavailableError,
    load_model,
)
from kope.models.anthropic_model import AnthropicModel
from kope.models.openai_model import OpenAIModel
from kope.models.replay import ReplayModel

ASK = [Message(role="system", content="be brief"), Message(role="user", content="fix the kernel")]
KEY = "sk-test-not-a-real-key-123"


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def openai(url: str, **kwargs: object) -> OpenAIModel:
    return OpenAIModel("local-model", base_url=f"{url}/v1", max_retries=2, **kwargs)  # type: ignore[arg-type]


def anthropic(url: str) -> AnthropicModel:
    return AnthropicModel("claude-local", base_url=url, max_retries=2)


@pytest.mark.slow
def test_openai_reply_and_usage() -> None:
    script = Script([(200, openai_reply("here is the fix", 120, 30), {})])
    with serve(script) as url:
        reply = openai(url).complete(ASK, max_tokens=64)
    assert reply.text == "here is the fix" and reply.usage.prompt == 120 and reply.usage.completion == 30
    assert reply.stop_reason == "stop"
    request = script.requests[0]
    assert request["model"] == "local-model" and request["max_tokens"] == 64
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert script.headers[0]["authorization"] == f"Bearer {KEY}"


@pytest.mark.slow
def test_openai_rate_limit_then_success() -> None:
    script = Script([error(429, "slow down", "rate_limit"), (200, openai_reply("ok"), {})])
    with serve(script) as url:
        assert openai(url).complete(ASK).text == "ok"
    assert len(script.requests) == 2


@pytest.mark.slow
def test_openai_server_error_outlasts_retries() -> None:
    script = Script([error(500, "boom")])
    with serve(script) as url, pytest.raises(ModelUnavailableError, match="after retries"):
        openai(url).complete(ASK)
    assert len(script.requests) == 3


@pytest.mark.slow
def test_openai_bad_key_unknown_model_malformed() -> None:
    with serve(Script([error(401, "invalid api key")])) as url, pytest.raises(ModelAuthError, match="refused the key"):
        openai(url).complete(ASK)
    with serve(Script([error(404, "no such model")])) as url, pytest.raises(ModelNotFoundError):
        openai(url).complete(ASK)
    with serve(Script([(200, "{not json", {})])) as url, pytest.raises(ModelError):
        openai(url).complete(ASK)
    with (
        serve(Script([(200, {"id": "x", "object": "chat.completion", "choices": []}, {})])) as url,
        pytest.raises(ModelError, match="no message"),
    ):
        openai(url).complete(ASK)


def test_openai_needs_a_key_unless_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ModelAuthError, match="OPENAI_API_KEY"):
        OpenAIModel("gpt-4o")
    with serve(Script([(200, openai_reply("local"), {})])) as url:
        assert openai(url).complete(ASK).text == "local"


@pytest.mark.slow
def test_anthropic_reply_usage_and_system() -> None:
    script = Script([(200, anthropic_reply("patched", 40, 9), {})])
    with serve(script) as url:
        reply = anthropic(url).complete(ASK, max_tokens=32)
    assert reply.text == "patched" and (reply.usage.prompt, reply.usage.completion) == (40, 9)
    request = script.requests[0]
    assert request["system"] == "be brief" and [m["role"] for m in request["messages"]] == ["user"]
    assert KEY in (script.headers[0].get("x-api-key", "") + script.headers[0].get("authorization", ""))


@pytest.mark.slow
def test_anthropic_errors() -> None:
    script = Script([error(429, "slow down", "rate_limit_error"), (200, anthropic_reply("ok"), {})])
    with serve(script) as url:
        assert anthropic(url).complete(ASK).text == "ok"
    with serve(Script([error(529, "overloaded", "overloaded_error")])) as url, pytest.raises(ModelError):
        anthropic(url).complete(ASK)
    with serve(Script([error(401, "bad key", "authentication_error")])) as url, pytest.raises(ModelAuthError):
        anthropic(url).complete(ASK)
    with serve(Script([error(404, "unknown model", "not_found_error")])) as url, pytest.raises(ModelNotFoundError):
        anthropic(url).complete(ASK)


def test_recording_never_holds_the_key_and_replays_exactly(tmp_path: Path) -> None:
    record = tmp_path / "run.jsonl"
    script = Script([(200, openai_reply("first"), {}), (200, openai_reply("second"), {})])
    with serve(script) as url:
        model = load_model("openai:local-model", base_url=f"{url}/v1", record=record)
        replies = [model.complete(ASK).text, model.complete(ASK).text]
    assert KEY not in record.read_text()
    replay = ReplayModel(record, strict=True)
    assert [replay.complete(ASK).text, replay.complete(ASK).text] == replies
    with pytest.raises(ModelError, match="only 2 replies"):
        replay.complete(ASK)
    strict = ReplayModel(record, strict=True)
    with pytest.raises(ModelError, match="differs"):
        strict.complete([Message(role="user", content="something else")])


def test_specs() -> None:
    assert load_model("offline") is None, "offline is no model: the loops' own proposers"
    for spec in ("gpt-4", "openai", "local:thing", "replay"):
        with pytest.raises(ModelConfigError, match="unknown model spec"):
            load_model(spec)
    with pytest.raises(ModelConfigError, match="cannot read"):
        load_model("replay:/nonexistent/run.jsonl")
