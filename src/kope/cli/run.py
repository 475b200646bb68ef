"""What every command shares: check the inputs, build the library objects, run with progress, print or
`--json`, and map every error to one exit status and one plain sentence.

Exit status (every command):

    0  done (the kernel passes, is repaired, the listing printed)
    1  the kernel is not right, or not repaired
    2  a usage or environment error: a bad path or option, no GPU for --device cuda, an unreachable
       model endpoint, a missing key or extra

An error is one sentence saying what is wrong and what to do next; the traceback only with
`kope --debug`. Inputs are checked before any work starts, so a usage error writes nothing.
"""

from __future__ import annotations

import json
import os
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, cast

import typer
from rich.text import Text
from typer.exceptions import TyperException

from kope.cli.options import RENAMED, ModuleModeChoice, PolicyChoice, SandboxChoice, ToleranceChoice
from kope.console import KopeConsole
from kope.errors import KopeError

if TYPE_CHECKING:
    from kope.cases.task import Case, Task
    from kope.evaluate import EvalOptions, Evaluator
    from kope.memory import ExperienceStore

out = KopeConsole()
err = KopeConsole(stderr=True)


@dataclass
class Settings:
    """The root options: `kope --debug` shows tracebacks."""

    debug: bool = False


settings = Settings()


class UsageProblem(KopeError):
    """A usage or environment error found by the command line: exit 2, nothing written."""

    def __init__(self, message: str, hint: str | None = None, kind: str = "usage") -> None:
        super().__init__(message)
        self.hint = hint
        self.kind = kind


def say(text: str | Text, *, stderr: bool = False, style: str | None = None) -> None:
    """Print `text` as text: no markup, no emoji codes (`openai:m:` stays as written), no highlighting;
    control characters a candidate put there are taken out by the console."""
    console = err if stderr else out
    if isinstance(text, Text):
        console.print(text, highlight=False)
    else:
        console.print(Text(text, style=style or ""), highlight=False)


def fail(message: str, *, as_json: bool, code: int = 2, kind: str = "usage", hint: str | None = None) -> NoReturn:
    """Report an error (stdout as JSON with --json, else one line on stderr) and exit with `code`."""
    if as_json:
        error = {"kind": kind, "message": message} | ({"hint": hint} if hint else {})
        out.print_json(json.dumps({"status": "error", "error": error}))
    else:
        say(Text.assemble(("error: ", "bold red"), message), stderr=True)
        if hint:
            say(f"hint: {hint}", stderr=True)
    raise typer.Exit(code)


def _kind_of(exc: BaseException) -> str:
    from kope.errors import CandidateFileError, TaskError

    kind = getattr(exc, "kind", None)
    if isinstance(kind, str):
        return kind
    if isinstance(exc, TaskError):
        return "task"
    if isinstance(exc, CandidateFileError):
        return "candidate"
    module = type(exc).__module__
    return "model" if module.startswith("kope.models") else "environment"


@contextmanager
def reported(as_json: bool) -> Iterator[None]:
    """Every error raised inside becomes exit 2 and one sentence (the traceback only with --debug)."""
    try:
        yield
    except (typer.Exit, typer.Abort, TyperException, KeyboardInterrupt):
        raise
    except KopeError as exc:
        if settings.debug:
            traceback.print_exc()
        fail(str(exc), as_json=as_json, kind=_kind_of(exc), hint=getattr(exc, "hint", None))
    except OSError as exc:
        if settings.debug:
            traceback.print_exc()
        where = f" ({exc.filename})" if exc.filename else ""
        fail(
            f"{exc.strerror or exc}{where}",
            as_json=as_json,
            kind="environment",
            hint="check the path and its permissions",
        )
    except ImportError as exc:
        if settings.debug:
            traceback.print_exc()
        fail(
            f"a package kope needs here is missing: {exc.name or exc}",
            as_json=as_json,
            kind="environment",
            hint="install the extra that provides it (see the README's install section)",
        )
    except Exception as exc:  # the last resort: one sentence, the traceback on request
        if settings.debug:
            raise
        fail(
            f"kope failed unexpectedly: {type(exc).__name__}: {exc}",
            as_json=as_json,
            kind="internal",
            hint="rerun with `kope --debug ...` for the traceback, and report it",
        )


# -- checking the inputs, before any work ---------------------------------------------------------


def need_file(path: Path, what: str) -> Path:
    """`path` is a readable file, or a usage error naming it."""
    if not path.exists():
        raise UsageProblem(f"no {what} at {path}", hint="check the path")
    if not path.is_file():
        raise UsageProblem(f"the {what} {path} is not a file", hint="give a file")
    if not os.access(path, os.R_OK):
        raise UsageProblem(f"the {what} {path} cannot be read", hint="check its permissions")
    return path


def writable_file(path: Path, option: str) -> Path:
    """`path` can be written: it is not a folder, and its folder exists or can be created (the nearest
    folder that exists is writable). Nothing is created here."""
    if path.is_dir():
        raise UsageProblem(f"{option} {path} is a folder", hint=f"give {option} a file name")
    writable_dir(path.parent if str(path.parent) else Path("."), option, named=path)
    return path


def writable_dir(path: Path, option: str, *, named: Path | None = None) -> Path:
    """`path` is, or can be created as, a writable folder (`named`: the option's own value, for the message)."""
    shown = named if named is not None else path
    probe = path
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        raise UsageProblem(f"{option} {shown}: {probe} is a file, not a folder", hint=f"choose another {option}")
    if not os.access(probe, os.W_OK):
        raise UsageProblem(f"{option} {shown}: the folder {probe} is not writable", hint=f"choose another {option}")
    return path


def device(spec: str) -> str:
    """The device --device names (auto, cpu, cuda, cuda:N), or a usage error; cuda needs a GPU here."""
    from kope.device import cuda_present, resolve_device

    try:
        resolved = resolve_device(spec)
    except ValueError as exc:
        raise UsageProblem(str(exc)) from None
    if resolved.startswith("cuda"):
        if not cuda_present():
            raise UsageProblem(
                f"--device {spec}: this machine has no NVIDIA GPU (no driver found)",
                hint="use --device cpu (Triton's interpreter) or run on a machine with a GPU",
                kind="environment",
            )
        import torch

        if torch.version.cuda is None:
            raise UsageProblem(
                f"--device {spec}: this torch was built without CUDA",
                hint="install a CUDA build of torch, or use --device cpu",
                kind="environment",
            )
    return resolved


def renamed(value: Any, old: Any, old_name: str) -> Any:
    """The value of an option given under its new name or its old one (which prints a deprecation line)."""
    if old is None:
        return value
    say(f"note: {old_name} is deprecated and goes in the next release; use {RENAMED[old_name]}", stderr=True)
    if value is not None:
        raise UsageProblem(f"{old_name} and {RENAMED[old_name]} are the same option; give only {RENAMED[old_name]}")
    return old


def given(**values: Any) -> dict[str, Any]:
    """The options given on the command line (None: left out, so the library's default holds)."""
    return {name: value for name, value in values.items() if value is not None}


# -- the shared vocabulary, turned into the library's objects -------------------------------------


@dataclass
class Evaluation:
    """The evaluation options every command that evaluates takes (the shared vocabulary)."""

    device: str = "auto"
    sandbox: SandboxChoice | None = None
    policy: PolicyChoice | None = None
    tolerance: ToleranceChoice | None = None
    trials: int | None = None
    timeout: float | None = None
    set_: Sequence[str] | None = None
    cases_file: Path | None = None
    cache_dir: Path | None = None
    module_mode: ModuleModeChoice | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    resolved: str = ""

    def check(self) -> Evaluation:
        """Resolve the device and check the files the options name (before any work)."""
        self.resolved = device(self.device)
        if self.cases_file is not None:
            need_file(self.cases_file, "cases file (--cases)")
        if self.cache_dir is not None:
            writable_dir(self.cache_dir, "--cache-dir")
        return self

    def options(self, **fixed: Any) -> EvalOptions:
        """`EvalOptions` with what was given (None: left out); the rest keeps the library's defaults."""
        from kope.evaluate import EvalOptions

        policy = None if self.policy in (None, PolicyChoice.auto) else cast(PolicyChoice, self.policy).value
        values = given(
            device=self.resolved or device(self.device),
            sandbox=self.sandbox.value if self.sandbox else None,
            policy=policy,
            tolerance=self.tolerance.value if self.tolerance else None,
            trials=self.trials,
            timeout_s=self.timeout,
            module_mode=self.module_mode.value if self.module_mode else None,
        )
        return EvalOptions(**(values | given(**self.extra) | given(**fixed)))

    def cache(self) -> Path:
        from kope import paths

        return self.cache_dir or paths.cache_dir() / "reference"

    def evaluator(self, **kwargs: Any) -> Evaluator:
        from kope.evaluate import Evaluator

        return Evaluator(cache_dir=self.cache(), **kwargs)

    def cases(self, evaluator: Evaluator, task: Task, options: EvalOptions) -> list[Case]:
        """The task's cases, with --set and --cases applied."""
        from kope.cases.task import load_cases_file, parse_set

        declared = load_cases_file(self.cases_file) if self.cases_file is not None else None
        return evaluator.cases(task, set_overrides=parse_set(list(self.set_ or [])), declared=declared, options=options)

    @property
    def overridden(self) -> bool:
        return bool(self.set_) or self.cases_file is not None


def task_and_candidate(task: Path, candidate: Path | None = None, what: str = "candidate") -> Task:
    """Check both files exist, then load the task (a task that does not load is a usage error, exit 2)."""
    from kope.cases.task import load_task

    need_file(task, "task file")
    if candidate is not None:
        need_file(candidate, f"{what} file")
    return load_task(task)


@contextmanager
def progress(enabled: bool, doing: str = "evaluating") -> Iterator[Callable[[str], None]]:
    """A spinner on stderr while the work runs (a terminal only); yields a function that updates it."""
    if not enabled or not err.is_terminal:
        yield lambda message: None
        return
    with err.status(Text(f"{doing} (starting the sandbox)...")) as status:
        yield lambda message: status.update(Text(f"{doing}... {message}"))


def emit(payload: str | dict[str, Any] | list[Any]) -> None:
    """One JSON document on stdout."""
    out.print_json(payload if isinstance(payload, str) else json.dumps(payload, default=str))


def no_store(location: str | None) -> bool:
    """Whether --store says `none` (record nothing)."""
    return location is not None and location.strip().lower() == "none"


@contextmanager
def store(location: str | None, *, existing: bool = False) -> Iterator[ExperienceStore | None]:
    """The experience store named by --store (the default file when None; `none`: no store). `existing`: a
    command that only reads; a SQLite file named there must exist (a typo must not create an empty store)."""
    if no_store(location):
        yield None
        return
    if existing and location is not None and "://" not in location and not Path(location).is_file():
        raise UsageProblem(f"no experience store at {location}", hint="check --store (a SQLite file or a URL)")
    from kope.memory import ExperienceStore

    opened = ExperienceStore.open(location)
    try:
        yield opened
    finally:
        opened.close()


def model(spec: str, *, base_url: str | None = None, record: Path | None = None, needed: bool = False) -> Any:
    """The model --model names (None for offline); `needed`: offline is a usage error (nothing writes code)."""
    from kope.models import OFFLINE, load_model

    if needed and spec == OFFLINE:
        raise UsageProblem(
            "this command writes kernels with a model, and --model is offline",
            hint="give --model openai:MODEL, anthropic:MODEL or replay:FILE",
        )
    if record is not None:
        writable_file(record, "--record")
    return load_model(spec, base_url=base_url, record=record)


def executor_for(name: str, workers: int, address: str | None, device: str) -> object:
    """The executor --executor names (local worker processes, or a Ray cluster)."""
    from kope.executors import make_executor

    if name not in ("local", "ray"):
        raise UsageProblem(f"unknown executor {name!r}", hint="use --executor local or --executor ray")
    return make_executor(name, workers=workers, address=address, device=device)


def exit_with(code: int) -> NoReturn:
    raise typer.Exit(code)
