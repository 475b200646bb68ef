"""The sealed channel: how a candidate job's results leave its worker (format and the supervisor's reader).

A candidate job's outputs and observations never travel through files the candidate's process could
rewrite. The supervisor opens a pipe before it forks the worker and gives the worker its write end
(`CHANNEL_FD`) and a key of 32 random bytes (read once from `KEY_FD`, which the worker closes before it
runs any task or candidate code). The worker writes one stream:

    MAGIC, then records: kind (1 byte), name length (2 bytes), name, payload length (8 bytes), payload

The same supervisor hands the worker its trial inputs one at a time (`FEED_DIR`): the candidate's process
holds only the inputs of the trials it has run and the one it is running. Each is given once: inputs the
candidate asked for early are refused to kope's code later, which makes the job fail as tampered.

In the stream, kind is `F` (a file: an outputs safetensors file, packed by kope's code when the trial ends), `R`
(`result.json`, once, last) or `E` (the end: its payload is the HMAC-SHA256, under the key, of every byte
before the record). Right after the end record the worker kills itself with SIGKILL, so no code of the
candidate (a `__del__`, an `atexit` hook, a thread) runs after its results are out.

The supervisor keeps the stream (in an unnamed file of its own) and reads it only when every process of
the job is dead. It accepts exactly one well-formed stream ending in a valid MAC and nothing after it;
anything else (bytes the candidate wrote into the pipe, a stream cut short, a second message) is
refused with a reason, and then no result exists. Accepted files are written, by the supervisor, into a
fresh `SEALED_DIR` of the job directory, which is what the evaluator reads for candidate jobs.

Limits, said plainly: the key lives in the worker's memory while the candidate runs. A candidate that
searches that memory (through `gc`, frames, `ctypes` or `/proc/self/mem`) could find it and forge a
whole stream; the static gate flags those means, and the values are still compared in the parent.
"""

from __future__ import annotations

import hmac
import os
import re
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

CHANNEL_FD = 4
KEY_FD = 5
FEED_FD = 6
FEED_DIR = "feed"
"""A candidate job's trial inputs: the supervisor opens them and removes the folder before the worker starts,
then hands each file over once, when the worker asks for it (a descriptor passed on the `FEED_FD` socket)."""
ENV = "KOPE_SEALED_CHANNEL"
"""Set (to "1") in a worker's environment when the supervisor opened the channel for it."""
SEALED_DIR = "sealed"
MAGIC = b"KOPESEAL1\n"
KEY_BYTES = 32
MAC_BYTES = 32
FILE, RESULT, END = b"F", b"R", b"E"
_NAME = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$")
_MAX_NAME = 200


def record(kind: bytes, name: str, payload: bytes) -> bytes:
    encoded = name.encode()
    return kind + len(encoded).to_bytes(2, "little") + encoded + len(payload).to_bytes(8, "little") + payload


class ChannelError(ValueError):
    """The stream is not exactly one sealed message: the reason says how."""


class Incomplete(ChannelError):
    """The stream ends before its end record: the worker died before it sealed its results (no result, no
    tampering: the job failed the way its outcome says)."""


@dataclass
class Unsealed:
    files: dict[str, tuple[int, int]] = field(default_factory=dict)
    """name -> (offset, length) of its payload in the stream."""
    result: tuple[int, int] | None = None


def parse(stream: IO[bytes], size: int, key: bytes) -> Unsealed:
    """Check the stream (`size` bytes) and say where its files are; raises ChannelError."""
    if size == 0:
        raise Incomplete("the worker sent no results")
    stream.seek(0)
    mac = hmac.new(key, digestmod="sha256")
    head = stream.read(len(MAGIC))
    if head != MAGIC:
        raise ChannelError("the stream does not start as kope's does (something else wrote into the channel)")
    mac.update(head)
    position = len(head)
    found = Unsealed()
    while True:
        header = stream.read(3)
        if len(header) < 3:
            raise Incomplete("the stream ends without its end record (cut short)")
        kind, name_length = header[:1], int.from_bytes(header[1:3], "little")
        if name_length > _MAX_NAME:
            raise ChannelError("a record names a file too long to be kope's")
        name_bytes = stream.read(name_length)
        length_bytes = stream.read(8)
        if len(name_bytes) < name_length or len(length_bytes) < 8:
            raise Incomplete("the stream ends inside a record header")
        length = int.from_bytes(length_bytes, "little")
        start = position + 3 + name_length + 8
        if start + length > size:
            raise Incomplete("a record is longer than the stream")
        if kind == END:
            if length != MAC_BYTES or start + length != size:
                raise ChannelError("bytes follow the end record (something wrote after kope sealed the results)")
            expected = stream.read(MAC_BYTES)
            mac.update(header + name_bytes + length_bytes)
            # the MAC covers every byte before the end record's payload
            if not hmac.compare_digest(mac.digest(), expected):
                raise ChannelError("the results' signature does not match (they were not sealed by kope)")
            if found.result is None:
                raise ChannelError("the stream holds no result")
            return found
        mac.update(header + name_bytes + length_bytes)
        _hash_span(stream, mac, length)
        name = name_bytes.decode(errors="replace")
        if kind not in (FILE, RESULT) or not _NAME.match(name) or name in found.files:
            raise ChannelError(f"a record kope does not write ({kind!r}, {name!r})")
        if kind == RESULT:
            if found.result is not None:
                raise ChannelError("two results in one stream")
            found.result = (start, length)
        else:
            found.files[name] = (start, length)
        position = start + length


def _hash_span(stream: IO[bytes], mac: hmac.HMAC, length: int) -> None:
    left = length
    while left:
        chunk = stream.read(min(left, 1 << 20))
        if not chunk:
            raise Incomplete("the stream ends inside a record")
        mac.update(chunk)
        left -= len(chunk)


def write_sealed(stream: IO[bytes], found: Unsealed, job_dir: Path, result_name: str) -> Path:
    """Supervisor side, once every process of the job is dead: write the accepted files into a fresh
    `SEALED_DIR` (whatever the job left under that name is removed first)."""
    target = job_dir / SEALED_DIR
    remove(target)
    os.mkdir(target, 0o700)
    assert found.result is not None
    for name, (offset, length) in [*found.files.items(), (result_name, found.result)]:
        descriptor = os.open(target / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            stream.seek(offset)
            left = length
            while left:
                chunk = stream.read(min(left, 1 << 20))
                handle.write(chunk)
                left -= len(chunk)
    return target


def remove(path: Path) -> None:
    """Remove whatever is at `path` without following a link."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)
