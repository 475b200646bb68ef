"""Fingerprints the store keys on: normalised error texts, content hashes, a task's shapes, the toolchain.

An error text is normalised by replacing what varies between occurrences of the same failure —
paths, line numbers, shapes, addresses, numbers — with placeholders, keeping the exception class
and the words; its hash (`error_hash`, stored in the `error_signature` columns) identifies it, so
the same failure counts up instead of being stored again.
"""

from __future__ import annotations

import hashlib
import io
import re
import tokenize
from functools import cache
from importlib import metadata

from kope.cases.task import Task
from kope.hashing import content_hash

_PATH = re.compile(r"""(?:[A-Za-z]:)?(?:[/\\][^\s:'",()\[\]]+){2,}""")
_FILE_LINE = re.compile(r"\bline \d+")
_SHAPE = re.compile(r"(?:torch\.Size\()?[\[(]\s*-?\d+(?:\s*,\s*-?\d+)*\s*,?\s*[\])]\)?")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_NUMBER = re.compile(r"(?<![A-Za-z_<])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_SPACE = re.compile(r"\s+")
_DTYPE = re.compile(r"dtype\s*=\s*torch\.(\w+)")


def normalize_error(text: str, kind: str | None = None) -> str:
    """The signature text of an error: varying parts replaced by placeholders, at most 300 characters."""
    body = _PATH.sub("<path>", text)
    body = _FILE_LINE.sub("line <n>", body)
    body = _SHAPE.sub("<shape>", body)
    body = _HEX.sub("<addr>", body)
    body = _NUMBER.sub("<num>", body)
    body = _SPACE.sub(" ", body).strip()[:300]
    return f"{kind}: {body}" if kind else body


def error_hash(normalized: str) -> str:
    return hashlib.sha256(normalized.encode()).hexdigest()[:16]


def normalized_hash(source: str) -> str:
    """A hash that ignores comments, blank lines and trailing whitespace (same code, same hash)."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type != tokenize.COMMENT]
        kept = tokenize.untokenize(tokens)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        kept = source
    lines = [line.rstrip() for line in kept.splitlines() if line.strip()]
    return content_hash("\n".join(lines))


def task_fingerprint(task: Task) -> str:
    """Shape and dtype fingerprint (a task's stored `signature`): its literal size parameters and input dtypes."""
    sizes = ",".join(f"{name}={value}" for name, value in sorted(task.literal_sizes.items()))
    dtypes = sorted(set(_DTYPE.findall(task.source))) or ["float32"]
    return f"{sizes or '-'}|{','.join(dtypes)}"


_FAMILY_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("attention", ("scaled_dot_product", "attention", "softmax(q", "q @ k")),
    ("convolution", ("conv1d", "conv2d", "conv3d", "conv_transpose")),
    ("matmul", ("matmul", "torch.mm", "torch.bmm", " @ ", "nn.linear", "f.linear", "einsum")),
    ("normalization", ("softmax", "layer_norm", "layernorm", "rms", "batch_norm", "group_norm", "normalize")),
    ("loss", ("loss", "cross_entropy", "nll")),
    ("scan", ("cumsum", "cumprod", "cummax")),
    ("gather", ("embedding", "gather", "index_select")),
    ("reduction", (".sum(", ".mean(", ".max(", ".min(", "argmax", "argmin", ".prod(", "torch.sum", "torch.mean")),
)


def task_family(task: Task) -> str:
    """The operator family: the built-in suite's when the task is one of its operators, else guessed from the code."""
    from kope.ops import list_ops

    for op in list_ops():
        if op.task_path.resolve() == task.path.resolve() or _same_file(op.task_path, task.source):
            return op.family
    forward = task.source.lower()
    for family, words in _FAMILY_WORDS:
        if any(word in forward for word in words):
            return family
    return "elementwise"


def _same_file(path: object, source: str) -> bool:
    from pathlib import Path

    try:
        return Path(str(path)).read_text() == source
    except OSError:
        return False


@cache
def toolchain() -> str:
    """Versions that change generated code and timing: Triton and PyTorch (read without importing them)."""
    parts = []
    for package in ("triton", "torch"):
        try:
            parts.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            continue
    return ", ".join(parts) or "unknown"


def device_label(device: str) -> str:
    """The device as the store records it: `cpu-interpreter`, or `cuda:<GPU name>` where it can be read."""
    if not device.startswith("cuda"):
        return "cpu-interpreter"
    return f"cuda:{_gpu_name()}"


@cache
def _gpu_name() -> str:
    import shutil
    import subprocess

    if shutil.which("nvidia-smi") is None:
        return "gpu"
    try:
        found = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "gpu"
    name = found.stdout.strip().splitlines()[0].strip() if found.stdout.strip() else ""
    return name or "gpu"
