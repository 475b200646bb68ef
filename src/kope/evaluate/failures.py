"""What went wrong in a job, in words: the error of a failed candidate run, the failure of a task run.

The supervisor's outcome (`kope.evaluate.sandbox.Outcome`) and the worker's result become one typed
`EvalError` (or, for the trusted task's runs, one message), with the signal explained, the user's path in
place of the sandbox's copy, and the failing line of an exception raised without a message.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from kope import protocol
from kope.cases.task import Task
from kope.evaluate.options import EvalOptions
from kope.evaluate.sandbox import Outcome
from kope.protocol import WorkerResult
from kope.protocol.results import EvalError

_STDOUT_KEEP = 2000


def stdout_excerpt(outcome: Outcome) -> str:
    text = outcome.stdout
    return text if len(text) <= _STDOUT_KEEP else text[: _STDOUT_KEEP // 2] + "\n[...]\n" + text[-_STDOUT_KEEP // 2 :]


def _stderr_tail(outcome: Outcome, lines: int = 12) -> str:
    tail = outcome.stderr.strip().splitlines()[-lines:]
    return ("\n" + "\n".join(tail)) if tail else ""


def classify(
    result: WorkerResult | None, outcome: Outcome, options: EvalOptions, *, expected_trials: int
) -> EvalError | None:
    if outcome.timed_out:
        return EvalError(kind="timeout", message=f"the run exceeded its {options.timeout_s:g} s wall-time limit")
    if outcome.memory_exceeded:
        return EvalError(kind="memory", message=f"the run exceeded its {options.memory_mb} MB memory limit")
    if outcome.disk_exceeded:
        return EvalError(kind="disk", message=f"the run wrote more than its {options.disk_mb} MB disk limit")
    if outcome.channel_error is not None:
        return EvalError(kind="exit", message=f"the job's results were refused: {outcome.channel_error}")
    if result is not None and result.error is not None:
        return EvalError(
            kind=result.error.kind,
            message=result.error.message,
            traceback=result.error.traceback,
            hint=result.error.hint,
        )
    if outcome.signal is not None:
        meaning = _SIGNALS.get(outcome.signal_name or "", "")
        return EvalError(
            kind="crash",
            message=f"the process was killed by signal {outcome.signal} ({outcome.signal_name})"
            f"{': ' + meaning if meaning else ''}{_stderr_tail(outcome)}",
        )
    if result is None or outcome.exit_code != 0:
        return EvalError(
            kind="exit",
            message=f"the process exited with code {outcome.exit_code} without a result{_stderr_tail(outcome)}",
        )
    if len(result.trials) != expected_trials:
        return EvalError(kind="exit", message=f"the process reported {len(result.trials)} of {expected_trials} trials")
    return None


_SIGNALS = {
    "SIGSEGV": "segmentation fault — usually an out-of-bounds pointer; run `kope diagnose`",
    "SIGBUS": "bus error — usually a misaligned or out-of-bounds pointer; run `kope diagnose`",
    "SIGABRT": "aborted — a library gave up (a failed C++ assertion, a CUDA or memory error); see the output",
    "SIGKILL": "killed outright — usually the memory or time limit (or the system's out-of-memory killer)",
    "SIGFPE": "arithmetic fault — usually an integer division by zero",
    "SIGILL": "illegal instruction — code built for another processor, or a corrupted jump",
    "SIGTERM": "asked to stop (by kope's limits or by the system)",
    "SIGXCPU": "CPU-time limit exceeded",
    "SIGXFSZ": "file-size limit exceeded (the job's disk limit)",
    "SIGPIPE": "wrote to a pipe nobody reads",
    "SIGSYS": "a system call the sandbox forbids",
}
"""What a signal that killed a job usually means, in plain words."""

_BARE = re.compile(r"(\w+(?:Error|Exception|Exit|Interrupt|Warning)?): ?$")


def name_candidate(error: EvalError, job_dir: Path, candidate_name: str, source: str = "") -> EvalError:
    """Tracebacks name the sandbox's copy of the candidate; show the user's path instead. An exception
    raised without a message (a bare `assert`) gets the line of the candidate that raised it."""
    copy = str(job_dir / protocol.CANDIDATE_FILE)
    message = _with_failing_line(error.message, error.traceback or "", copy, source)
    return error.model_copy(
        update={
            "message": message.replace(copy, candidate_name),
            "traceback": error.traceback.replace(copy, candidate_name) if error.traceback else None,
        }
    )


def _with_failing_line(message: str, traceback: str, copy: str, source: str) -> str:
    """`... AssertionError: ` (nothing after the name) → `... AssertionError at line 12: assert x.is_cuda`."""
    bare = _BARE.search(message.rstrip("\n"))
    if bare is None:
        return message if message.strip() else "the candidate failed without a message"
    name = re.escape(Path(copy).name)
    lines = re.findall(rf'File "(?:{re.escape(copy)}|[^"\n]*/{name})", line (\d+)', traceback)
    code = source.splitlines()
    if lines and 0 < int(lines[-1]) <= len(code):
        number = int(lines[-1])
        return f"{message[: bare.start()]}{bare.group(1)} at line {number}: {code[number - 1].strip()}"
    return f"{message[: bare.start()]}{bare.group(1)} (raised without a message)"


def too_large_hint(fixes: Sequence[str]) -> str:
    if not fixes:
        return "give smaller sizes with --set NAME=VALUE, or a task with get_cases()"
    return "it would fit with " + " or ".join(fixes)


def task_failure(task: Task, what: str, result: WorkerResult | None, outcome: Outcome) -> str:
    if result is not None and result.error is not None:
        detail = result.error.message
        if result.error.traceback:
            detail += "\n" + result.error.traceback
    elif outcome.timed_out:
        detail = "it exceeded the wall-time limit"
    elif outcome.memory_exceeded:
        detail = "it exceeded the memory limit"
    elif outcome.signal is not None:
        meaning = _SIGNALS.get(outcome.signal_name or "", "").split(";")[0]  # no advice: the task is the user's
        detail = f"it was killed by {outcome.signal_name}{': ' + meaning if meaning else ''}"
    else:
        detail = f"it exited with code {outcome.exit_code} without a result{_stderr_tail(outcome)}"
    return f"{what} failed for task {task.path}: {detail}"
