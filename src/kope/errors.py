"""kope's exceptions.

    KopeError
    ├── TaskError            the task file cannot be used
    │   ├── TaskFileError    it does not parse or does not define Model, get_inputs, get_init_inputs
    │   ├── CaseError        its cases, `--set` or `--cases` overrides are malformed
    │   ├── ReferenceError_  the reference failed to run on a case
    │   └── TooLargeError    no case of the task fits the element budget and the job's memory
    ├── CandidateFileError   the candidate path cannot be read (a candidate that fails is a result, not an error)
    └── SandboxError         kope's own sandbox broke (a bug or an exhausted machine, never the candidate)

A candidate that does not compile, crashes or hangs is not an exception: it is an `EvalResult`
with status `error` and an error kind.
"""

from __future__ import annotations


class KopeError(Exception):
    """Base of every error kope raises on purpose."""


class TaskError(KopeError):
    """The task file cannot be used."""


class TaskFileError(TaskError):
    """The task file does not parse or lacks what the KernelBench format needs."""


class CaseError(TaskError):
    """Cases or overrides are malformed."""


class ReferenceError_(TaskError):
    """The reference model failed on a case: the task, not the candidate, is at fault."""


class TooLargeError(TaskError):
    """No case fits the budget: kope refuses to run into the memory limit (error kind `too-large`)."""

    kind = "too-large"

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class CandidateFileError(KopeError):
    """The candidate file cannot be read."""


class SandboxError(KopeError):
    """The sandbox itself failed."""
