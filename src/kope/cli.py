"""The `kope` command line: each command is a thin call into the library."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, NoReturn, cast

import typer
from rich.markup import escape
from typer.core import TyperGroup, TyperOption

from kope.console import KopeConsole
from kope.errors import KopeError
from kope.evaluate.confine import SANDBOX_MODES, SandboxMode

if TYPE_CHECKING:
    from typer._click import Command, Context, Parameter

    from kope.cases.tolerance import ToleranceChoice
    from kope.memory import ExperienceStore
    from kope.triage import TriageSummary
    from kope.triage.causes import Cause


class _Group(TyperGroup):
    """kope's command group: its help, and its commands' (sub-groups' too), show no type after a flag.

    Typer's rich help prints `<bool>` after every flag (`--json <bool>`), as if the flag took a value;
    an empty metavar on each flag option (the `--help` option included) leaves the column blank.
    """

    def get_params(self, ctx: Context) -> list[Parameter]:
        return _blank_flags(super().get_params(ctx))

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            _plain_flags(command, ctx)
        return command


def _blank_flags(params: list[Parameter]) -> list[Parameter]:
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and not param.count:
            param.metavar = ""
    return params


def _plain_flags(command: Command, ctx: Context) -> None:
    _blank_flags(command.get_params(ctx))
    for sub in getattr(command, "commands", {}).values():
        _plain_flags(sub, ctx)


app = typer.Typer(
    name="kope",
    cls=_Group,
    help=(
        "Repair and optimize hardware kernels (Triton first, CUDA C++ second), honestly.\n\n"
        "`kope debug TASK CANDIDATE` repairs a near-miss kernel (offline recipes by default, or an LLM with "
        "`--model`); `kope eval TASK CANDIDATE` checks a kernel against a KernelBench-format task on every "
        "case, with the integrity gates; `kope ops list` shows the built-in operator suite."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
ops_app = typer.Typer(help="The built-in operator suite: tasks with correct Triton kernels.", no_args_is_help=True)
cache_app = typer.Typer(help="kope's cache of reference outputs.", no_args_is_help=True)
kb_app = typer.Typer(help="The knowledge base of bug patterns used by diagnosis and repair.", no_args_is_help=True)
app.add_typer(ops_app, name="ops")
app.add_typer(cache_app, name="cache")
app.add_typer(kb_app, name="kb")
bench_app = typer.Typer(help="Near-miss suites and the experiments on them: mutate, run, report.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")
memory_app = typer.Typer(help="The experience store: what every debug and optimize run recorded.", no_args_is_help=True)
app.add_typer(memory_app, name="memory")

out = KopeConsole()
err = KopeConsole(stderr=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a readable report.")]


class PolicyChoice(StrEnum):
    strict = "strict"
    partial = "partial"
    auto = "auto"


PolicyOpt = Annotated[
    PolicyChoice | None,
    typer.Option(
        "--policy",
        help="Integrity policy: strict (the kernels compute the function) or partial (PyTorch may compute some "
        "of the model's operators, every output passes through a computing kernel), or auto (the default: the "
        "task's INTEGRITY_POLICY, else decided from what the reference calls).",
    ),
]


class ToleranceChoiceOpt(StrEnum):
    strict = "strict"
    kernelbench = "kernelbench"
    auto = "auto"


ToleranceOpt = Annotated[
    ToleranceChoiceOpt,
    typer.Option(
        "--tolerance",
        help="Tolerance profile: strict (kope's, about 1e-4 in float32), kernelbench (KernelBench's, atol = rtol "
        "= 1e-2), or auto (kernelbench for a KernelBench task file levelL/N_Name.py, strict elsewhere). A task's "
        "own TOLERANCES win.",
    ),
]
ExecutorOpt = Annotated[
    str, typer.Option("--executor", help="Where jobs run: local (worker processes) or ray (a Ray cluster).")
]
AddressOpt = Annotated[
    str | None,
    typer.Option("--address", help="Ray: auto (the running cluster) or ray://HOST:PORT; default: a local cluster."),
]


DeviceOpt = Annotated[
    str,
    typer.Option(
        "--device",
        help="cpu (Triton runs in its interpreter), cuda, cuda:N, or auto (cuda when an NVIDIA driver is present).",
    ),
]


class RepairChoice(StrEnum):
    search = "search"
    recipes = "recipes"


class SandboxChoice(StrEnum):
    strict = "strict"
    auto = "auto"
    off = "off"


EmulationOpt = Annotated[
    bool,
    typer.Option(
        "--cuda-emulation/--no-cuda-emulation",
        help="On the CPU, run kernels written for CUDA (is_cuda asserts, device='cuda', torch.cuda queries) in the "
        "interpreter as on a GPU; every verdict made so says so. Never applies on a GPU.",
    ),
]
SandboxOpt = Annotated[
    SandboxChoice,
    typer.Option(
        "--sandbox",
        help="The OS boundary around task and candidate code: auto (the strongest this machine allows: "
        "namespaces, else Landlock, else process isolation), strict (refuse to run without namespaces), "
        "off (process isolation only). `kope doctor` says what this machine supports.",
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a size parameter of the task in every case: NAME=VALUE (repeatable)."),
]
CasesOpt = Annotated[
    Path | None,
    typer.Option(
        "--cases", help="A JSON file with a list of override dicts, one per case (replaces the task's cases)."
    ),
]
MaxElementsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-elements",
        min=1,
        help="Tasks without get_cases(): the most elements the inputs (or the outputs) of one derived case "
        "may hold (default: 300000 on the CPU, 2^26 on CUDA).",
    ),
]


def _mode(sandbox: SandboxChoice | str) -> SandboxMode:
    value = sandbox.value if isinstance(sandbox, SandboxChoice) else sandbox
    if value not in SANDBOX_MODES:
        raise typer.BadParameter(f"--sandbox must be one of strict, auto, off (got {value!r})")
    return cast("SandboxMode", value)


def _policy(choice: PolicyChoice | None) -> Literal["strict", "partial"] | None:
    """--policy as EvalOptions takes it: None (decided per task) for auto or no option."""
    if choice is None or choice == PolicyChoice.auto:
        return None
    return "strict" if choice == PolicyChoice.strict else "partial"


def _tolerance(choice: ToleranceChoiceOpt) -> ToleranceChoice:
    return cast("ToleranceChoice", choice.value)


def _fail(message: str, *, as_json: bool, code: int = 2, kind: str = "task", hint: str | None = None) -> NoReturn:
    if as_json:
        error = {"kind": kind, "message": message} | ({"hint": hint} if hint else {})
        out.print_json(json.dumps({"status": "error", "error": error}))
    else:
        err.print(
            f"[bold red]error ({kind}):[/] {message}" if kind != "task" else f"[bold red]error:[/] {message}",
            highlight=False,
        )
        if hint:
            err.print(f"hint: {hint}", highlight=False)
    raise typer.Exit(code)


@contextmanager
def _errors_reported(as_json: bool) -> Iterator[None]:
    try:
        yield
    except KopeError as exc:
        _fail(str(exc), as_json=as_json, kind=getattr(exc, "kind", "task"), hint=getattr(exc, "hint", None))


@app.command("eval")
def eval_command(
    task: Annotated[Path, typer.Argument(help="Task file in KernelBench format (Model, get_inputs, get_init_inputs).")],
    candidate: Annotated[Path, typer.Argument(help="Candidate file defining class ModelNew.")],
    as_json: JsonOpt = False,
    device: DeviceOpt = "auto",
    set_: SetOpt = None,
    cases_file: CasesOpt = None,
    case: Annotated[
        list[str] | None, typer.Option("--case", help="Run only the case of this name (repeatable).")
    ] = None,
    visible_only: Annotated[
        bool, typer.Option("--visible-only", help="Run only the cases an agent is shown (default: every case).")
    ] = False,
    trials: Annotated[int, typer.Option("--trials", min=1, help="Runs per case, each with fresh seeded inputs.")] = 3,
    seed: Annotated[int, typer.Option("--seed", help="Base seed of inputs and parameters.")] = 0,
    timeout: Annotated[float, typer.Option("--timeout", min=1, help="Wall-time limit of each run, in seconds.")] = 60.0,
    memory: Annotated[int, typer.Option("--memory", min=64, help="Memory limit of each run, in MB.")] = 4096,
    timing: Annotated[
        bool | None,
        typer.Option("--timing/--no-timing", help="Measure time (default: on for CUDA, off for the CPU interpreter)."),
    ] = None,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Where reference outputs are cached (default ~/.cache/kope).")
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Recompute reference outputs.")] = False,
    max_elements: MaxElementsOpt = None,
    sandbox: SandboxOpt = SandboxChoice.auto,
    policy: PolicyOpt = None,
    tolerance: ToleranceOpt = ToleranceChoiceOpt.auto,
    cuda_emulation: EmulationOpt = True,
) -> None:
    """Evaluate CANDIDATE against TASK on every case, sandboxed.

    Exit status: 0 pass, 1 fail or reject, 2 error.
    """
    from kope import paths
    from kope.cases.task import load_cases_file, load_task, override_notes, parse_set
    from kope.evaluate import EvalOptions, Evaluator
    from kope.render import case_outcome, print_eval

    with _errors_reported(as_json):
        resolved = _device(device, as_json=as_json)
        options = EvalOptions(
            sandbox=_mode(sandbox),
            device=resolved,
            trials=trials,
            seed=seed,
            timeout_s=timeout,
            memory_mb=memory,
            timing=resolved.startswith("cuda") if timing is None else timing,
            max_elements=max_elements,
            policy=_policy(policy),
            tolerance=_tolerance(tolerance),
            cuda_emulation=cuda_emulation,
        )
        loaded = load_task(task)
        overrides = parse_set(set_ or [])
        for note in override_notes(loaded.source, overrides):
            err.print(f"note: {note}", highlight=False)
        declared = load_cases_file(cases_file) if cases_file is not None else None
        which: list[str] | str = list(case) if case else ("visible" if visible_only else "all")
        cache = None if no_cache else (cache_dir or paths.cache_dir() / "reference")
        with Evaluator(cache_dir=cache) as evaluator, _progress(not as_json) as report:
            chosen = evaluator.cases(loaded, set_overrides=overrides, declared=declared, options=options)

            def on_case(result: object) -> None:
                from kope.evaluate.results import CaseResult

                if isinstance(result, CaseResult):
                    report(f"case {result.name}: {case_outcome(result).plain}")

            result = evaluator.evaluate(loaded, candidate, options=options, cases=chosen, which=which, on_case=on_case)
    if as_json:
        out.print_json(result.model_dump_json())
    else:
        print_eval(result, out)
    raise typer.Exit(result.exit_code)


@app.command("doctor")
def doctor_command(as_json: JsonOpt = False) -> None:
    """Say what this machine offers kope's sandbox, and which level jobs get here.

    Runs a trivial job through the real sandbox (namespaces where allowed, then the Landlock
    fallback) and reports what held, with the kernel settings that explain a refusal: user
    namespaces, Landlock ABI, seccomp, cgroup delegation, GPU device nodes and driver libraries.
    Exit status: 0 when jobs get the namespace sandbox, 1 when they get less.
    """
    from kope.evaluate.doctor import inspect_machine

    report = inspect_machine()
    level = report.auto.level if report.auto else "process"
    if as_json:
        out.print_json(report.model_dump_json())
        raise typer.Exit(0 if level == "namespaces" else 1)
    from rich.table import Table

    style = {"namespaces": "bold green", "landlock": "bold yellow", "process": "bold red"}[level]
    out.print(f"sandbox level for `--sandbox auto`: [{style}]{level}[/]", highlight=False)
    table = Table("check", "result", show_header=True, header_style="bold")
    if report.auto is not None:
        table.add_row("protections", ", ".join(report.auto.protections))
        if report.auto.missing:
            table.add_row("did not hold", "; ".join(report.auto.missing))
    fallback = report.landlock_fallback
    table.add_row("landlock fallback", f"{fallback.level}: {', '.join(fallback.protections)}" if fallback else "failed")
    table.add_row("landlock ABI", str(report.landlock_abi) if report.landlock_abi else "none")
    table.add_row("seccomp", "yes" if report.seccomp else "no")
    table.add_row("cgroup delegation", "yes" if report.cgroup_delegated else "no (memory: RSS polling + RLIMIT_AS)")
    table.add_row("GPU device nodes", ", ".join(report.gpu_devices) or "none")
    if report.gpu_library_dirs:
        table.add_row("GPU driver libraries", ", ".join(report.gpu_library_dirs))
    for name, value in report.kernel_settings.items():
        table.add_row(name, value)
    out.print(table)
    for line in report.advice:
        out.print(f"- {line}", highlight=False)
    raise typer.Exit(0 if level == "namespaces" else 1)


@app.command("check")
def check_command(
    task: Annotated[Path, typer.Argument(help="Task file in KernelBench format.")],
    candidate: Annotated[Path, typer.Argument(help="Candidate file defining class ModelNew.")],
    as_json: JsonOpt = False,
    device: DeviceOpt = "auto",
    set_: SetOpt = None,
    cases_file: CasesOpt = None,
    all_cases: Annotated[
        bool, typer.Option("--all-cases", help="Run the dynamic checks on every case (default: the visible ones).")
    ] = False,
    timeout: Annotated[float, typer.Option("--timeout", min=1, help="Wall-time limit of each run, in seconds.")] = 60.0,
    max_elements: MaxElementsOpt = None,
    sandbox: SandboxOpt = SandboxChoice.auto,
    policy: PolicyOpt = None,
) -> None:
    """Run the integrity gates on CANDIDATE and explain each finding in plain words.

    Static rules read the source; dynamic rules watch it run on the task's visible case(s) (two
    trials, so the caching probe can run). Exit status: 0 clean, 1 rejected, 2 error.
    """
    from kope.cases.task import load_cases_file, load_task, parse_set
    from kope.evaluate import EvalOptions, Evaluator
    from kope.render import integrity_report

    with _errors_reported(as_json):
        resolved = _device(device, as_json=as_json)
        options = EvalOptions(
            sandbox=_mode(sandbox),
            device=resolved,
            trials=2,
            timeout_s=timeout,
            max_elements=max_elements,
            policy=_policy(policy),
        )
        loaded = load_task(task)
        with Evaluator() as evaluator, _progress(not as_json) as report:
            report("running the candidate")
            chosen = evaluator.cases(
                loaded,
                set_overrides=parse_set(set_ or []),
                declared=load_cases_file(cases_file) if cases_file else None,
                options=options,
            )
            result = evaluator.evaluate(
                loaded, candidate, options=options, cases=chosen, which="all" if all_cases else "visible"
            )
    integrity = result.integrity
    code = 1 if integrity.verdict == "reject" else 0
    if result.error is not None:
        code = 2 if integrity.verdict == "clean" else 1
    if as_json:
        out.print_json(
            json.dumps(
                {
                    "verdict": integrity.verdict,
                    "findings": [f.model_dump() for f in integrity.findings],
                    "policy": integrity.policy,
                    "policy_reason": integrity.policy_reason,
                    "numeric_status": result.status,
                    "error": result.error.model_dump() if result.error else None,
                }
            )
        )
    else:
        out.print(integrity_report(integrity, candidate.read_text(errors="replace")))
        if result.error is not None:
            out.print(
                f"[yellow]the candidate did not run to the end ({result.error.kind}): {escape(result.error.message)}; "
                "dynamic checks are incomplete[/]",
                highlight=False,
            )
    raise typer.Exit(code)


@app.command("cases")
def cases_command(
    task: Annotated[Path, typer.Argument(help="Task file in KernelBench format.")],
    as_json: JsonOpt = False,
    device: DeviceOpt = "auto",
    max_elements: MaxElementsOpt = None,
    derive: Annotated[
        bool, typer.Option("--derive", help="Derive cases even when the task declares its own get_cases().")
    ] = False,
    timeout: Annotated[float, typer.Option("--timeout", min=1, help="Wall-time limit of each run, in seconds.")] = 60.0,
    sandbox: SandboxOpt = SandboxChoice.auto,
) -> None:
    """Show the cases of TASK: its own get_cases(), or those kope derives from its single shape.

    For derived cases: which module-level names size the inputs, and every variant considered
    (original or shrunk, odd, prime, one, scaled and shifted inputs, widened inputs for a low-signal
    task), kept or dropped, and why.
    """
    from kope.cases.derive import mark_low_signal
    from kope.cases.render import cases_table, derivation_report
    from kope.cases.task import build_cases, load_task
    from kope.evaluate import EvalOptions, Evaluator

    with _errors_reported(as_json):
        resolved = _device(device, as_json=as_json)
        options = EvalOptions(sandbox=_mode(sandbox), device=resolved, timeout_s=timeout, max_elements=max_elements)
        loaded = load_task(task)
        with Evaluator() as evaluator, _progress(not as_json, "deriving cases"):
            derivation = evaluator.derivation(loaded, options) if derive or not loaded.defines_get_cases else None
            if derivation is None:
                cases = evaluator.cases(loaded, options=options)
            else:
                cases = mark_low_signal(
                    build_cases(loaded, derivation.case_dicts(), source="derived cases"), derivation
                )
    if as_json:
        rows = [
            {
                "name": c.name,
                "visible": c.visible,
                "overrides": dict(c.overrides),
                "inputs": c.inputs.model_dump() if c.inputs else None,
                "low_signal": c.low_signal,
                "widened": c.widened,
            }
            for c in cases
        ]
        payload = {
            "task": str(loaded.path),
            "source": "get_cases" if derivation is None else "derived",
            "cases": rows,
            "derivation": derivation.model_dump(mode="json") if derivation else None,
        }
        out.print_json(json.dumps(payload))
    elif derivation is None:
        out.print(cases_table(cases, f"{loaded.path}: the task's own cases (get_cases); --derive shows derived ones"))
    else:
        out.print(derivation_report(derivation))
    raise typer.Exit(0)


@app.command("diagnose")
def diagnose_command(
    task: Annotated[Path, typer.Argument(help="Task file in KernelBench format.")],
    candidate: Annotated[Path, typer.Argument(help="Candidate file defining class ModelNew.")],
    as_json: JsonOpt = False,
    device: DeviceOpt = "auto",
    set_: SetOpt = None,
    cases_file: CasesOpt = None,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Write a heatmap of where the first failing output is wrong (PNG).")
    ] = None,
    no_probes: Annotated[
        bool, typer.Option("--no-probes", help="Skip the probes (bounds checker, determinism, size sweep): faster.")
    ] = False,
    patterns: Annotated[
        list[Path] | None, typer.Option("--patterns", help="A directory of extra pattern files (repeatable).")
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", min=1, help="Wall-time limit of each run, in seconds.")] = 60.0,
    sandbox: SandboxOpt = SandboxChoice.auto,
    tolerance: ToleranceOpt = ToleranceChoiceOpt.auto,
) -> None:
    """Say what is wrong with a failing kernel, and which known bug it is.

    Evaluates every case, computes where and how each output is wrong (mismatch signature), runs
    probes (bounds checker, determinism rerun, sizes around the kernel's block sizes), reads the
    kernel for code cues, and ranks the knowledge base's bug patterns. Exit status: 0 when the
    candidate passes (nothing to diagnose), 1 when a diagnosis was made, 2 on error.
    """
    from kope.cases.task import load_cases_file, load_task, parse_set
    from kope.diagnose.diagnoser import Diagnoser
    from kope.evaluate import EvalOptions, Evaluator
    from kope.knowledge.base import KnowledgeBase
    from kope.render import diagnosis_report

    with _errors_reported(as_json):
        resolved = _device(device, as_json=as_json)
        options = EvalOptions(
            sandbox=_mode(sandbox), device=resolved, timeout_s=timeout, tolerance=_tolerance(tolerance)
        )
        loaded = load_task(task)
        knowledge = KnowledgeBase.load(extra_dirs=patterns or [])
        with Evaluator() as evaluator, _progress(not as_json, "diagnosing") as report:
            chosen = evaluator.cases(
                loaded,
                set_overrides=parse_set(set_ or []),
                declared=load_cases_file(cases_file) if cases_file else None,
                options=options,
            )
            diagnosis = Diagnoser(evaluator, knowledge).diagnose(
                loaded, candidate, options=options, cases=chosen, probes=not no_probes, progress=report, plot=plot
            )
    if as_json:
        out.print_json(diagnosis.model_dump_json())
    else:
        out.print(diagnosis_report(diagnosis))
        if plot is not None and plot.exists():
            out.print(f"heatmap: {plot}", highlight=False)
    raise typer.Exit(0 if diagnosis.status == "pass" else 1)


@app.command("trace")
def trace_command(
    task: Annotated[Path, typer.Argument(help="Task file in KernelBench format.")],
    candidate: Annotated[Path, typer.Argument(help="Candidate file defining class ModelNew.")],
    kernel: Annotated[str, typer.Option("--kernel", help="Name of the @triton.jit function to look inside.")],
    line: Annotated[int, typer.Option("--line", help="Line of the candidate file (inside that kernel).")],
    pid: Annotated[
        str, typer.Option("--pid", help="Program id to watch, e.g. 0 or 3,0,0 (a prefix matches).")
    ] = "0,0,0",
    as_json: JsonOpt = False,
    set_: SetOpt = None,
    case: Annotated[str | None, typer.Option("--case", help="Case to run (default: the visible one).")] = None,
    sandbox: SandboxOpt = SandboxChoice.auto,
) -> None:
    """Print a kernel's local variables at one line, for one program (Triton interpreter, on the CPU).

    The values are those the variables hold each time the line is about to run (up to 16 times,
    e.g. in a loop), for the program whose id starts with --pid.
    """
    from kope.cases.task import load_task, parse_set
    from kope.evaluate import EvalOptions, Evaluator
    from kope.evaluate.protocol import TraceSpec

    try:
        program = [int(part) for part in pid.split(",") if part.strip()]
    except ValueError:
        _fail(f"--pid expects integers such as 0 or 3,0,0, got {pid!r}", as_json=as_json)
    with _errors_reported(as_json):
        loaded = load_task(task)
        options = EvalOptions(
            sandbox=_mode(sandbox),
            device="cpu",
            trials=1,
            integrity=False,
            trace=TraceSpec(kernel=kernel, line=line, pid=program),
        )
        with Evaluator() as evaluator:
            cases = evaluator.cases(loaded, set_overrides=parse_set(set_ or []))
            result = evaluator.evaluate(
                loaded, candidate, options=options, cases=cases, which=[case] if case else "visible"
            )
    case_result = result.cases[0]
    hits = case_result.trace or []
    if as_json:
        out.print_json(
            json.dumps(
                {
                    "case": case_result.name,
                    "kernel": kernel,
                    "line": line,
                    "pid": program,
                    "hits": [h.model_dump() for h in hits],
                    "error": case_result.error.model_dump() if case_result.error else None,
                }
            )
        )
    else:
        source = candidate.read_text(errors="replace").splitlines()
        shown = source[line - 1].strip() if 0 < line <= len(source) else "?"
        out.print(f"[bold]{kernel}[/] line {line}: [cyan]{shown}[/]  (case {case_result.name})", highlight=False)
        if not hits:
            out.print("[yellow]the line was never reached by that program (check --kernel, --line and --pid)[/]")
        for index, hit in enumerate(hits):
            out.print(f"[bold]hit {index + 1}[/], program {tuple(hit.pid)}:")
            for name, value in hit.variables.items():
                out.print(f"  {name} = {value}", highlight=False, soft_wrap=True)
        if case_result.error is not None:
            out.print(
                f"[yellow]the run ended with an error: {case_result.error.kind}: {escape(case_result.error.message)}[/]"
            )
    raise typer.Exit(0 if hits else 1)


ModelOpt = Annotated[
    str,
    typer.Option(
        "--model",
        help="offline (kope's recipes: no network, no tokens), openai:MODEL, anthropic:MODEL or replay:FILE.",
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="Endpoint of an OpenAI-compatible server (vLLM, SGLang, Ollama...)."),
]
StoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="The experience store: a SQLAlchemy URL (postgresql+psycopg://... for a shared one) or a SQLite file "
        "(default: ~/.local/share/kope/memory.db, or under $XDG_DATA_HOME). `none` records nothing.",
    ),
]


@app.command("debug")
def debug_command(
    task: Annotated[Path, typer.Argument(help="Task file in KernelBench format.")],
    candidate: Annotated[Path, typer.Argument(help="The near-miss kernel to repair (defines ModelNew).")],
    model: ModelOpt = "offline",
    out_path: Annotated[
        Path | None,
        typer.Option("--out", help="Where to write the repaired kernel (default: CANDIDATE.repaired.py)."),
    ] = None,
    as_json: JsonOpt = False,
    device: DeviceOpt = "auto",
    base_url: BaseUrlOpt = None,
    max_iterations: Annotated[int, typer.Option("--max-iterations", min=1, help="Model calls at most.")] = 8,
    budget_tokens: Annotated[
        int, typer.Option("--budget-tokens", min=1, help="Prompt + completion tokens at most.")
    ] = 200_000,
    budget_seconds: Annotated[float, typer.Option("--budget-seconds", min=1, help="Wall-clock budget.")] = 1800.0,
    prompt_tokens: Annotated[
        int, typer.Option("--prompt-tokens", min=1000, help="Token budget of one prompt.")
    ] = 12_000,
    recipes_first: Annotated[
        bool,
        typer.Option("--recipes-first", help="With an LLM: try the knowledge base's recipes before spending tokens."),
    ] = False,
    record: Annotated[
        Path | None, typer.Option("--record", help="Record every model exchange to this JSONL file (replay:FILE).")
    ] = None,
    transcript: Annotated[
        Path | None, typer.Option("--transcript", help="Write the transcript here (default: OUT.transcript.jsonl).")
    ] = None,
    no_probes: Annotated[
        bool, typer.Option("--no-probes", help="Diagnose without probes (faster, less evidence).")
    ] = False,
    store: StoreOpt = None,
    sandbox: SandboxOpt = SandboxChoice.auto,
    repair: Annotated[
        RepairChoice,
        typer.Option("--repair", help="Offline repair: the search over edits (default) or the recipe loop alone."),
    ] = RepairChoice.search,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain", help="Print what the offline search tried, in order, and why each was kept or dropped."
        ),
    ] = False,
    tolerance: ToleranceOpt = ToleranceChoiceOpt.auto,
) -> None:
    """Repair a near-miss kernel: diagnose, ask the model for an edit, evaluate, repeat, bounded.

    A version counts as repaired only when it passes every case (hidden ones too) and the integrity
    gates. Exit status: 0 repaired, 1 unrepaired or rejected, 2 error.
    """
    from kope.agents import DebugConfig, LoopLimits
    from kope.agents.debug import DebugLoop
    from kope.cases.task import load_task
    from kope.evaluate import EvalOptions, Evaluator
    from kope.models import load_model

    target = out_path or candidate.with_name(candidate.stem + ".repaired.py")
    transcript = transcript or target.with_suffix(".transcript.jsonl")
    with _errors_reported(as_json):
        resolved = _device(device, as_json=as_json)
        loaded = load_task(task)
        chosen = load_model(model, base_url=base_url, record=record)
        config = DebugConfig(
            limits=LoopLimits(max_iterations=max_iterations, max_tokens=budget_tokens, max_seconds=budget_seconds),
            prompt_budget=prompt_tokens,
            recipes_first=recipes_first,
            probes=not no_probes,
            options=EvalOptions(sandbox=_mode(sandbox), device=resolved, tolerance=_tolerance(tolerance)),
            search=repair is RepairChoice.search,
        )

        def show(step: object) -> None:
            from kope.agents.debug import Step

            if isinstance(step, Step) and not as_json:
                tokens = step.tokens.prompt + step.tokens.completion
                err.print(
                    f"[bold]step {step.iteration}[/] {escape(step.model)}: {step.action} — {escape(step.outcome)}"
                    + (f" [dim]({tokens} tokens)[/]" if tokens else ""),
                    highlight=False,
                )

        if not as_json:
            err.print(
                f"repairing {candidate} with {chosen.name if chosen else 'offline'} (evaluating on {resolved})",
                highlight=False,
            )
        with Evaluator() as evaluator, _store(store) as memory:
            report = DebugLoop(
                chosen, evaluator, config=config, transcript=transcript, progress=show, store=memory
            ).run(loaded, candidate, target)
    if as_json:
        out.print_json(report.model_dump_json(exclude={"steps"} if explain else {"steps", "search"}))
    else:
        if explain:
            from kope.repair.explain import explain as explained

            for part in explained(report.search):
                out.print(part, highlight=False)
        if report.sandbox is not None and report.sandbox.weaker_than_namespaces:
            from kope.render import sandbox_warning

            err.print(sandbox_warning(report.sandbox), style="bold yellow", highlight=False)
        style = {"repaired": "bold green", "rejected": "bold magenta", "unrepaired": "bold red"}[report.status]
        final = report.final
        if report.hypotheses:
            out.print(f"diagnosis: {', '.join(report.hypotheses[:3])} (most likely first)", highlight=False)
        _print_diff(candidate, Path(report.output) if report.output else None)
        out.print(
            f"[{style}]{report.status.upper()}[/] after {report.iterations} step(s), "
            f"{report.tokens.prompt + report.tokens.completion} tokens, {report.seconds:.1f} s "
            f"(stop: {report.stop_reason})\n"
            f"output: {report.output}  — every case: {final.cases_passed}/{final.cases} pass, "
            f"integrity {final.integrity}\ntranscript: {report.transcript}",
            highlight=False,
        )
    raise typer.Exit(0 if report.status == "repaired" else 1)


def _print_diff(before: Path, after: Path | None) -> None:
    import difflib

    if after is None or not after.exists():
        return
    diff = list(
        difflib.unified_diff(
            before.read_text().splitlines(),
            after.read_text().splitlines(),
            fromfile=str(before),
            tofile=str(after),
            lineterm="",
            n=1,
        )
    )
    if not diff:
        out.print("no change to the kernel")
        return
    out.print_diff(diff[:60] + ([f"... ({len(diff) - 60} more diff lines)"] if len(diff) > 60 else []))


@app.command("regenerate")
def regenerate_command(
    task: Annotated[Path, typer.Argument(help="Task file in KernelBench format.")],
    model: ModelOpt = "offline",
    k: Annotated[int, typer.Option("-k", min=1, help="How many kernels to write from scratch.")] = 3,
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Where the samples go.")] = Path("regenerated"),
    as_json: JsonOpt = False,
    device: DeviceOpt = "auto",
    base_url: BaseUrlOpt = None,
    record: Annotated[Path | None, typer.Option("--record", help="Record the exchanges (JSONL).")] = None,
    sandbox: SandboxOpt = SandboxChoice.auto,
) -> None:
    """The baseline: write the kernel from scratch k times, each evaluated on every case with the gates."""
    from kope.agents import regenerate
    from kope.cases.task import load_task
    from kope.evaluate import EvalOptions, Evaluator
    from kope.models import load_model

    with _errors_reported(as_json):
        resolved = _device(device, as_json=as_json)
        loaded = load_task(task)
        chosen = load_model(model, base_url=base_url, record=record)
        with Evaluator() as evaluator:
            report = regenerate(
                loaded,
                chosen,
                k=k,
                out_dir=out_dir,
                evaluator=evaluator,
                options=EvalOptions(sandbox=_mode(sandbox), device=resolved),
                transcript=out_dir / "transcript.jsonl",
            )
    if as_json:
        out.print_json(report.model_dump_json())
    else:
        if report.note:
            out.print(f"[yellow]{report.note}[/]")
        for sample in report.samples:
            out.print(f"sample {sample.index}: {sample.status} {sample.detail}", highlight=False, markup=False)
        out.print(
            f"{report.passes}/{len(report.samples)} pass; pass@1 {report.pass_at_1:.2f}, pass@{k} "
            f"{report.pass_at_k:.2f}; "
            f"{report.tokens.prompt + report.tokens.completion} tokens",
            highlight=False,
        )
    raise typer.Exit(0 if report.passes else 1)


@kb_app.command("list")
def kb_list(as_json: JsonOpt = False) -> None:
    """List the patterns: shipped ones and the user's own."""
    from rich.table import Table

    from kope.knowledge.base import KnowledgeBase

    with _errors_reported(as_json):
        base = KnowledgeBase.load()
    if as_json:
        out.print_json(
            json.dumps(
                [
                    {"id": p.id, "title": p.title, "origin": p.origin, "recipe": p.recipe.name if p.recipe else None}
                    for p in base.patterns.values()
                ]
            )
        )
        return
    table = Table(title=f"{len(base)} patterns", title_justify="left")
    for column in ("id", "title", "recipe", "origin"):
        table.add_column(column)
    for pattern in base.patterns.values():
        table.add_row(pattern.id, pattern.title, pattern.recipe.name if pattern.recipe else "", pattern.origin)
    out.print(table)


@kb_app.command("show")
def kb_show(
    pattern_id: Annotated[str, typer.Argument(help="Pattern id, as `kope kb list` shows it.")], as_json: JsonOpt = False
) -> None:
    """Show one pattern: symptoms, code cues, explanation, fix and example."""
    from kope.knowledge.base import KnowledgeBase

    with _errors_reported(as_json):
        pattern = KnowledgeBase.load().get(pattern_id)
    if as_json:
        out.print_json(pattern.model_dump_json())
        return
    out.print(f"[bold]{pattern.id}[/]: {pattern.title}\n{pattern.summary}\n", highlight=False)
    out.print("[bold]symptoms[/]")
    for symptom in pattern.symptoms:
        value = "" if symptom.op in ("true", "false") else f" {symptom.value}"
        out.print(f"  {symptom.weight:+.1f}  {symptom.feature} {symptom.op}{value}  {symptom.note}", highlight=False)
    if pattern.code_cues:
        out.print("[bold]code cues[/]")
        for code_cue in pattern.code_cues:
            out.print(f"  {code_cue.weight:+.1f}  {code_cue.cue}", highlight=False)
    out.print(
        f"\n[bold]explanation[/]\n{pattern.explanation.strip()}\n\n[bold]fix[/]\n{pattern.fix.strip()}", highlight=False
    )
    if pattern.example is not None:
        out.print(
            f"\n[bold]example[/] ({pattern.example.op}): {pattern.example.before!r} -> {pattern.example.after!r}",
            highlight=False,
        )
    if pattern.recipe is not None:
        out.print(f"\n[bold]recipe[/]: {pattern.recipe.name}", highlight=False)


@kb_app.command("search")
def kb_search(
    text: Annotated[str, typer.Argument(help="Words to look for (BM25 over the patterns' text).")],
    as_json: JsonOpt = False,
) -> None:
    """Find patterns by text."""
    from kope.knowledge.base import KnowledgeBase

    with _errors_reported(as_json):
        found = KnowledgeBase.load().search(text)
    if as_json:
        out.print_json(json.dumps([{"id": p.id, "score": round(score, 3), "title": p.title} for p, score in found]))
        return
    if not found:
        out.print("no pattern matches")
    for pattern, score in found:
        out.print(f"{score:6.2f}  [bold]{pattern.id}[/]: {pattern.title}", highlight=False)


@kb_app.command("add")
def kb_add(path: Annotated[Path, typer.Argument(help="A pattern file (YAML) to add to your patterns.")]) -> None:
    """Validate a pattern file and copy it into your pattern directory (~/.local/share/kope/patterns)."""
    import shutil

    from kope.knowledge.base import KnowledgeBase, load_pattern_file, user_dir

    with _errors_reported(False):
        pattern = load_pattern_file(path, str(path.parent))
        problems = KnowledgeBase([pattern]).validate()
        if problems:
            _fail("; ".join(problems), as_json=False)
        target = user_dir()
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target / f"{pattern.id}.yaml")
        if pattern.example is not None and (path.parent / pattern.example.kernel).is_file():
            shutil.copyfile(path.parent / pattern.example.kernel, target / pattern.example.kernel)
    out.print(f"added {pattern.id} to {target}", highlight=False)


@kb_app.command("validate")
def kb_validate(
    patterns: Annotated[
        list[Path] | None, typer.Option("--patterns", help="Also validate this directory of patterns.")
    ] = None,
) -> None:
    """Check every pattern: known features, cues and recipes, examples present. Exit 1 on problems."""
    from kope.knowledge.base import KnowledgeBase

    with _errors_reported(False):
        base = KnowledgeBase.load(extra_dirs=patterns or [])
        problems = base.validate()
    for problem in problems:
        err.print(f"[red]{problem}[/]", highlight=False)
    out.print(f"{len(base)} patterns, {len(problems)} problem(s)")
    raise typer.Exit(1 if problems else 0)


@contextmanager
def _progress(enabled: bool, doing: str = "evaluating") -> Iterator[Callable[[str], None]]:
    if not enabled or not err.is_terminal:
        yield lambda message: None
        return
    with err.status(f"{doing} (starting the sandbox)...") as status:
        yield lambda message: status.update(f"{doing}... {message}")


@ops_app.command("list")
def ops_list(
    as_json: JsonOpt = False,
    family: Annotated[str | None, typer.Option("--family", help="Only operators of this family.")] = None,
) -> None:
    """List the operators of the built-in suite."""
    from rich.table import Table

    from kope.ops import list_ops

    ops = list_ops(family)
    if as_json:
        rows = [
            {
                "name": op.name,
                "family": op.family,
                "summary": op.summary,
                "task": str(op.task_path),
                "kernel": str(op.kernel_path),
            }
            for op in ops
        ]
        out.print_json(json.dumps(rows))
        return
    table = Table(title=f"{len(ops)} operators", title_justify="left")
    for column in ("name", "family", "summary"):
        table.add_column(column)
    for op in ops:
        table.add_row(op.name, op.family, op.summary)
    out.print(table)


@ops_app.command("path")
def ops_path(
    name: Annotated[str, typer.Argument(help="Operator name, as `kope ops list` shows it.")],
    kernel: Annotated[bool, typer.Option("--kernel", help="Print only the kernel's path.")] = False,
    task: Annotated[bool, typer.Option("--task", help="Print only the task's path.")] = False,
) -> None:
    """Print where an operator's task and kernel live (task first)."""
    from kope.ops import UnknownOpError, get_op

    try:
        op = get_op(name)
    except UnknownOpError as exc:
        _fail(str(exc.args[0]), as_json=False)
    if kernel and not task:
        out.print(str(op.kernel_path), highlight=False, soft_wrap=True)
    elif task and not kernel:
        out.print(str(op.task_path), highlight=False, soft_wrap=True)
    else:
        out.print(f"{op.task_path}\n{op.kernel_path}", highlight=False, soft_wrap=True)


@cache_app.command("clear")
def cache_clear(
    cache_dir: Annotated[Path | None, typer.Option("--cache-dir", help="The cache to clear.")] = None,
) -> None:
    """Remove cached reference outputs."""
    from kope import paths
    from kope.evaluate.cache import ReferenceCache

    removed = ReferenceCache(cache_dir or paths.cache_dir() / "reference").clear()
    out.print(f"removed {removed} cached reference entries")


@bench_app.command("mutate")
def bench_mutate(
    out_dir: Annotated[
        Path, typer.Option("--out", help="The suite directory to write (candidates and manifest.json).")
    ],
    ops: Annotated[
        str, typer.Option("--ops", help="Operators of the built-in suite to mutate: all, or a,b,c.")
    ] = "all",
    operators: Annotated[
        str | None, typer.Option("--operators", help="Mutation operators to use, a,b,c (default: all).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the choice among each operator's sites.")] = 0,
    per_operator: Annotated[
        int, typer.Option("--per-operator", min=1, help="Near misses kept per (kernel, mutation operator).")
    ] = 1,
    tries: Annotated[int, typer.Option("--tries", min=1, help="Mutants evaluated at most per (kernel, operator).")] = 4,
    min_per_label: Annotated[
        int, typer.Option("--min-per-label", min=0, help="Second pass: top up each taxonomy id to this many.")
    ] = 6,
    label_tries: Annotated[
        int, typer.Option("--label-tries", min=0, help="Second pass: mutants evaluated at most per taxonomy id.")
    ] = 40,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Mutants evaluated at the same time.")] = 2,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Reference cache (default ~/.cache/kope).")
    ] = None,
) -> None:
    """Build a near-miss suite: mutate correct kernels, keep the mutants that compile, run and fail a case."""
    from kope import paths
    from kope.bench.corpus import build_suite, counts
    from kope.bugs.mutation import operators as known_operators
    from kope.evaluate import Evaluator
    from kope.ops import get_op, list_ops

    names = [op.name for op in list_ops()] if ops == "all" else [o.strip() for o in ops.split(",") if o.strip()]
    chosen = [o.strip() for o in operators.split(",") if o.strip()] if operators else None
    command = " ".join(
        [
            "kope bench mutate",
            f"--ops {ops}",
            f"--out {out_dir}",
            f"--seed {seed}",
            f"--per-operator {per_operator}",
            f"--tries {tries}",
            f"--min-per-label {min_per_label}",
            f"--label-tries {label_tries}",
        ]
        + ([f"--operators {operators}"] if operators else [])
    )
    with _errors_reported(False):
        known_operators(chosen)
        for name in names:
            get_op(name)
        with (
            _progress(True, "mutating") as say,
            Evaluator(cache_dir=cache_dir or paths.cache_dir() / "reference", max_parallel=1) as evaluator,
        ):
            manifest = build_suite(
                out_dir,
                ops=names,
                operator_names=chosen,
                seed=seed,
                per_operator=per_operator,
                tries=tries,
                min_per_label=min_per_label,
                label_tries=label_tries,
                evaluator=evaluator,
                workers=workers,
                command=command,
                progress=say,
            )
    out.print(f"{len(manifest.entries)} near misses in {out_dir} ({manifest.seconds:.0f} s)", highlight=False)
    for name, count in sorted(counts(manifest.entries, "label").items()):
        out.print(f"  {name:24s} {count}", highlight=False)


@bench_app.command("suite")
def bench_suite(
    suite: Annotated[str, typer.Argument(help="A suite directory or manifest, or `default` (shipped).")] = "default",
    as_json: JsonOpt = False,
) -> None:
    """Show a near-miss suite: where it is and its cases per taxonomy id, operator and task."""
    from kope.bench.corpus import counts, load_suite

    with _errors_reported(as_json):
        loaded = load_suite(suite)
    entries = loaded.entries
    summary = {key: dict(sorted(counts(entries, key).items())) for key in ("label", "operator", "task")}
    if as_json:
        out.print_json(json.dumps({"root": str(loaded.root), "cases": len(entries), **summary}))
        return
    out.print(f"{loaded.root}: {len(entries)} cases", highlight=False)
    for key, table in summary.items():
        out.print(f"[bold]per {key}[/]: " + ", ".join(f"{k} {v}" for k, v in table.items()), highlight=False)


@bench_app.command("run")
def bench_run(
    suite: Annotated[str, typer.Argument(help="A suite directory or manifest, or `default` (shipped).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Results directory (attempts.jsonl; reruns resume).")],
    strategy: Annotated[str, typer.Option("--strategy", help="debug or regenerate.")] = "debug",
    model: Annotated[
        str, typer.Option("--model", help="offline, openai:MODEL, anthropic:MODEL or replay:FILE.")
    ] = "offline",
    k: Annotated[int, typer.Option("-k", min=1, help="Pass@k to report; regenerate draws k samples per case.")] = 3,
    samples: Annotated[
        int | None, typer.Option("--samples", min=1, help="Attempts per case (default: k for regenerate, 1 for debug).")
    ] = None,
    ablate: Annotated[
        list[str] | None,
        typer.Option(
            "--ablate",
            help="Arms beside the full system: kb, diagnosis, integrity, memory, recipes (comma-separated; a+b "
            "combines).",
        ),
    ] = None,
    no_baseline: Annotated[bool, typer.Option("--no-baseline", help="Run only the ablation arms.")] = False,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Worker processes.")] = 1,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N cases of the suite.")] = None,
    every: Annotated[
        int, typer.Option("--every", min=1, help="A representative sample: every K-th case of each taxonomy id.")
    ] = 1,
    device: DeviceOpt = "auto",
    trials: Annotated[int, typer.Option("--trials", min=1, help="Runs per case in every evaluation.")] = 3,
    max_iterations: Annotated[int, typer.Option("--max-iterations", min=1, help="Debug: model calls at most.")] = 8,
    no_probes: Annotated[bool, typer.Option("--no-probes", help="Debug: diagnose without probes (faster).")] = False,
    memory: Annotated[
        bool,
        typer.Option(
            "--memory",
            help="Debug: arms record into and draw from one experience store, RESULTS/memory.db "
            "(the `memory` arm runs without it).",
        ),
    ] = False,
    base_url: BaseUrlOpt = None,
    temperature: Annotated[
        float | None, typer.Option("--temperature", help="Sampling temperature of the model.")
    ] = None,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Reference cache (default ~/.cache/kope).")
    ] = None,
    sandbox: SandboxOpt = SandboxChoice.auto,
    executor: ExecutorOpt = "local",
    address: AddressOpt = None,
) -> None:
    """Run a strategy over a suite in worker processes (or on Ray); one JSONL row per attempt, resumable."""
    import functools

    from kope import paths
    from kope.agents import LoopLimits
    from kope.bench.corpus import load_suite
    from kope.bench.harness import BenchError, ModelFactory, parse_arms, run_bench
    from kope.evaluate import EvalOptions
    from kope.models import load_model

    with _errors_reported(False):
        if strategy not in ("debug", "regenerate"):
            raise BenchError(f"unknown strategy {strategy!r}: use debug or regenerate")
        resolved = _device(device, as_json=False)
        loaded = load_suite(suite)
        arms = parse_arms(ablate or [], baseline=not no_baseline)
        load_model(model, base_url=base_url)
        factory: ModelFactory | None = None
        if base_url is not None or temperature is not None:
            factory = functools.partial(load_model, base_url=base_url, temperature=temperature)
        n = samples or (k if strategy == "regenerate" else 1)

        def show(row: object, done: int, total: int) -> None:
            from kope.bench.harness import Attempt

            if isinstance(row, Attempt):
                err.print(
                    f"[{done}/{total}] {row.case} {row.strategy} {row.arm} s{row.sample}: {row.outcome} "
                    f"({row.iterations} step(s), {row.tokens} tokens, {row.job_s:.0f} s)",
                    highlight=False,
                )

        summary = run_bench(
            loaded,
            strategy=strategy,  # type: ignore[arg-type]
            model=model,
            out=out_dir,
            arms=arms,
            samples=n,
            workers=workers,
            limit=limit,
            every=every,
            options=EvalOptions(sandbox=_mode(sandbox), device=resolved, trials=trials),
            limits=LoopLimits(max_iterations=max_iterations),
            cache_dir=cache_dir or paths.cache_dir() / "reference",
            model_factory=factory,
            progress=show,
            probes=not no_probes,
            memory=memory,
            executor=None if executor == "local" else _executor(executor, workers, address, resolved),  # type: ignore[arg-type]
        )
    passed = sum(r.passed for r in summary.rows)
    out.print(
        f"{summary.ran} attempt(s) run, {summary.skipped} already done, {passed} passed; "
        f"{summary.seconds:.0f} s; rows in {out_dir / 'attempts.jsonl'}",
        highlight=False,
    )


@bench_app.command("report")
def bench_report(
    results: Annotated[
        list[Path], typer.Argument(help="Results directories (or attempts.jsonl files) of `kope bench run`.")
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for report.md and the PNG charts.")],
    k: Annotated[int, typer.Option("-k", min=1, help="Pass@k to report.")] = 3,
) -> None:
    """Markdown tables and PNG charts: pass rates per strategy, arm and taxonomy id, tokens per success, time."""
    from kope.bench.report import write_report

    missing = [str(p) for p in results if not p.exists()]
    if missing:
        _fail(f"no such results: {', '.join(missing)}", as_json=False)
    report = write_report(results, out_dir, k=k)
    out.print(f"wrote {report} and charts in {out_dir}", highlight=False)


def _device(spec: str, *, as_json: bool) -> str:
    """The device named by --device (auto, cpu, cuda, cuda:N), or a clear error."""
    from kope.device import resolve_device

    try:
        return resolve_device(spec)
    except ValueError as exc:
        _fail(str(exc), as_json=as_json)


@contextmanager
def _store(location: str | None) -> Iterator[ExperienceStore | None]:
    """The experience store named by --store (the default file when None; `none`: no store)."""
    if location is not None and location.strip().lower() == "none":
        yield None
        return
    from kope.memory import ExperienceStore

    store = ExperienceStore.open(location)
    try:
        yield store
    finally:
        store.close()


@app.command("optimize")
def optimize_command(
    task: Annotated[Path, typer.Argument(help="Task file in KernelBench format.")],
    kernel: Annotated[Path, typer.Argument(help="A correct kernel to make faster (defines ModelNew).")],
    model: ModelOpt = "offline",
    iterations: Annotated[int, typer.Option("--iterations", min=1, help="Decisions at most (versions proposed).")] = 8,
    budget_tokens: Annotated[
        int, typer.Option("--budget-tokens", min=1, help="Prompt + completion tokens at most.")
    ] = 200_000,
    budget_seconds: Annotated[float, typer.Option("--budget-seconds", min=1, help="Wall-clock budget.")] = 3600.0,
    prompt_tokens: Annotated[
        int, typer.Option("--prompt-tokens", min=1000, help="Token budget of one prompt.")
    ] = 12_000,
    device: DeviceOpt = "auto",
    out_path: Annotated[
        Path | None,
        typer.Option("--out", help="Where to write the fastest correct version (default: KERNEL.optimized.py)."),
    ] = None,
    as_json: JsonOpt = False,
    store: StoreOpt = None,
    no_memory: Annotated[
        bool, typer.Option("--no-memory", help="Do not use the store's experience (the run is still recorded).")
    ] = False,
    trials: Annotated[int, typer.Option("--trials", min=1, help="Runs per case, each with fresh inputs.")] = 3,
    confirm: Annotated[
        int, typer.Option("--confirm", min=0, help="Re-measure the start and the best version this many times each.")
    ] = 1,
    base_url: BaseUrlOpt = None,
    record: Annotated[Path | None, typer.Option("--record", help="Record every model exchange (JSONL).")] = None,
    transcript: Annotated[
        Path | None, typer.Option("--transcript", help="Write the transcript here (default: OUT.transcript.jsonl).")
    ] = None,
    sandbox: SandboxOpt = SandboxChoice.auto,
) -> None:
    """Make a correct kernel faster: best-first search over decisions, each version checked on every
    case with the integrity gates, timed, and recorded in the experience store.

    With --model offline the decisions are launch parameters (block sizes, num_warps, num_stages),
    seeded by the store's best configurations for similar tasks on the same device. On the CPU the
    time is the Triton interpreter's wall time (reported as interpreter-wall, not GPU speed).
    Exit status: 0 a correct result, faster or not (improved or not-improved); 1 the starting kernel
    is wrong on some case or rejected by the gates; 2 error (it does not run or cannot be timed, bad input).
    """
    from kope.agents.optimize import Node, OptimizeConfig, OptimizeLoop
    from kope.cases.task import load_task
    from kope.evaluate import EvalOptions, Evaluator
    from kope.models import load_model

    target = out_path or kernel.with_name(kernel.stem + ".optimized.py")
    transcript = transcript or target.with_suffix(".transcript.jsonl")
    with _errors_reported(as_json):
        resolved = _device(device, as_json=as_json)
        loaded = load_task(task)
        chosen = load_model(model, base_url=base_url, record=record)
        config = OptimizeConfig(
            iterations=iterations,
            max_tokens=budget_tokens,
            max_seconds=budget_seconds,
            prompt_budget=prompt_tokens,
            options=EvalOptions(sandbox=_mode(sandbox), device=resolved, trials=trials, timing=True),
            memory=not no_memory,
            confirm=confirm,
        )

        def show(node: Node) -> None:
            if as_json:
                return
            timing = f"{node.time_ms:.4g} ms" if node.time_ms else ""
            speed = f" ({node.speedup_vs_start:.2f}x the start)" if node.speedup_vs_start and node.index else ""
            err.print(
                f"[bold]{node.index}[/] {node.kind}: {node.decision[:90]} — {node.status} {timing}{speed}",
                highlight=False,
            )

        if not as_json:
            err.print(
                f"optimizing {kernel} with {chosen.name if chosen else 'offline'} (timing on {resolved})",
                highlight=False,
            )
        with Evaluator() as evaluator, _store(store) as memory:
            report = OptimizeLoop(
                chosen, evaluator, config=config, store=memory, transcript=transcript, progress=show
            ).run(loaded, kernel, target)
    if as_json:
        out.print_json(report.model_dump_json())
    else:
        lines = [
            f"[bold]{report.status.upper()}[/] after {report.evaluations} evaluation(s), "
            f"{report.tokens.prompt + report.tokens.completion} tokens, {report.seconds:.1f} s "
            f"(stop: {report.stop_reason})"
        ]
        if report.start_ms is not None and report.best_ms is not None:
            lines.append(
                f"start {report.start_ms:.4g} ms → best {report.best_ms:.4g} ms ({report.timing_method}): "
                f"{report.speedup_vs_start or 1:.2f}x over the starting kernel"
                + (f", confirmed {report.confirmed_speedup_vs_start:.2f}x" if report.confirmed_speedup_vs_start else "")
                + (f", found at evaluation {report.best_found_at}" if report.best_found_at else "")
            )
        if report.speedup_vs_reference is not None:
            lines.append(f"{report.speedup_vs_reference:.2f}x over the PyTorch reference")
        if report.timing_note:
            lines.append(f"[dim]{report.timing_note}[/]")
        if report.best_config:
            lines.append("configuration: " + ", ".join(f"{k}={v}" for k, v in sorted(report.best_config.items())))
        lines.append(
            f"output: {report.output}" + (f"  (run {report.run_id} in the experience store)" if report.run_id else "")
        )
        out.print("\n".join(lines), highlight=False)
    raise typer.Exit(report.exit_code)


@memory_app.command("stats")
def memory_stats(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Counts of what the store holds, the most useful patterns and the commonest error signatures."""
    with _errors_reported(as_json), _store(store) as memory:
        if memory is None:
            _fail("--store none: nothing to show", as_json=as_json)
        stats = memory.stats()
        signatures = memory.signature_counts(10)
    if as_json:
        out.print_json(json.dumps({**stats.model_dump(), "error_signatures_top": signatures}))
        return
    out.print(f"[bold]{stats.url}[/] (schema {stats.schema_version})", highlight=False)
    out.print(
        f"tasks {stats.tasks}, runs {stats.runs} {stats.runs_by_kind}, versions {stats.versions}, "
        f"decisions {stats.decisions}, evaluations {stats.evaluations}",
        highlight=False,
    )
    out.print("edges: " + ", ".join(f"{k} {v}" for k, v in stats.edges.items()), highlight=False)
    out.print(
        f"pattern evidence {stats.pattern_evidence}, learned patterns {stats.learned_patterns}, "
        f"injections {stats.injections}, error signatures {stats.error_signatures}",
        highlight=False,
    )
    for row in stats.top_patterns:
        out.print(
            f"  {row['pattern']}: fixed {row['fixed']} of {row['applied']} (rate {row['rate']:.2f})", highlight=False
        )
    for text, count in signatures:
        out.print(f"  {count:4d}× {text[:120]}", highlight=False)


@memory_app.command("show")
def memory_show(
    ref: Annotated[str, typer.Argument(help="run:N, version:N, task:N, decision:N, or a bare N (a run).")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show one record with what hangs off it (a run's trajectory, a version's evaluations and edges)."""
    kind, _, key = ref.rpartition(":")
    kind = kind or "run"
    with _errors_reported(as_json), _store(store) as memory:
        if memory is None:
            _fail("--store none: nothing to show", as_json=as_json)
        if not key.isdigit() or kind not in ("run", "version", "task", "decision"):
            _fail(f"not a record reference: {ref!r} (run:N, version:N, task:N or decision:N)", as_json=as_json)
        number = int(key)
        payload: dict[str, object] = {}
        if kind == "run":
            found = memory.get_run(number)
            if found is not None:
                payload = {
                    "run": found.model_dump(),
                    "decisions": [d.model_dump() for d in memory.decisions(run_id=number)],
                    "evaluations": [e.model_dump() for e in memory.evaluations(run_id=number)],
                    "edges": [e.model_dump() for e in memory.edges(run_id=number)],
                    "injections": [i.model_dump() for i in memory.injections(run_id=number)],
                }
        elif kind == "version":
            found_version = memory.get_version(number)
            if found_version is not None:
                payload = {
                    "version": found_version.model_dump(),
                    "evaluations": [e.model_dump() for e in memory.evaluations(version_id=number)],
                    "decisions": [d.model_dump() for d in memory.decisions(child_id=number)],
                    "edges": [e.model_dump() for e in memory.edges(version_id=number)],
                    "lineage": memory.lineage(number),
                }
        elif kind == "task":
            found_task = memory.get_task(number)
            if found_task is not None:
                payload = {
                    "task": found_task.model_dump(),
                    "runs": [r.model_dump() for r in memory.runs(task_id=number)],
                }
        else:
            found_decision = memory.get_decision(number)
            if found_decision is not None:
                payload = {"decision": found_decision.model_dump()}
        if not payload:
            _fail(f"no {kind} {number} in {memory.url}", as_json=as_json, code=1)
    if as_json:
        out.print_json(json.dumps(payload, default=str))
        return
    for name, value in payload.items():
        out.print(f"[bold]{name}[/]")
        rows = value if isinstance(value, list) else [value]
        for row in rows:
            if isinstance(row, dict):
                shown = {k: (v if not isinstance(v, str) or len(v) < 200 else v[:200] + "…") for k, v in row.items()}
                out.print("  " + ", ".join(f"{k}={v}" for k, v in shown.items()), highlight=False, soft_wrap=True)
            else:
                out.print(f"  {row}", highlight=False)


@memory_app.command("export")
def memory_export(
    fmt: Annotated[
        str, typer.Option("--format", help="json (everything), dot (Graphviz) or html (a page to browse).")
    ] = "json",
    out_file: Annotated[Path | None, typer.Option("--out", help="Write here instead of standard output.")] = None,
    run: Annotated[int | None, typer.Option("--run", help="Only this run.")] = None,
    task_id: Annotated[
        int | None, typer.Option("--task", help="Only this task's runs (a task id, see `memory show`).")
    ] = None,
    store: StoreOpt = None,
) -> None:
    """Export the experience graph: versions, decisions, evaluations and edges (the HTML view draws the trees)."""
    from kope.memory.export import export

    if fmt not in ("json", "dot", "html"):
        _fail(f"unknown format {fmt!r}: json, dot or html", as_json=False)
    with _errors_reported(False), _store(store) as memory:
        if memory is None:
            _fail("--store none: nothing to export", as_json=False)
        text = export(memory, fmt, run_id=run, task_id=task_id)  # type: ignore[arg-type]
    if out_file is None:
        sys.stdout.write(text)
    else:
        out_file.parent.mkdir(parents=True, exist_ok=True)
        out_file.write_text(text)
        err.print(f"wrote {out_file}", highlight=False)


def _executor(name: str, workers: int, address: str | None, device: str) -> object:
    from kope.executors import ExecutorError, make_executor

    if name not in ("local", "ray"):
        raise ExecutorError(f"unknown executor {name!r}: use local or ray")
    return make_executor(name, workers=workers, address=address, device=device)


@app.command("triage")
def triage_command(
    tasks: Annotated[
        Path, typer.Argument(help="The task files: a folder (KernelBench levels, a task per folder) or one file.")
    ],
    candidates: Annotated[
        Path, typer.Argument(help="The candidates: a folder in a known layout, or a manifest (.csv, .json).")
    ],
    out_dir: Annotated[
        Path, typer.Option("--out", help="Results folder: results.jsonl (reruns resume), repaired/, report.html.")
    ],
    model: Annotated[
        str, typer.Option("--model", help="Repairs: offline (recipes), openai:MODEL, anthropic:MODEL, replay:FILE.")
    ] = "offline",
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", min=0, help="Token budget of the whole run's repairs.")
    ] = None,
    max_seconds: Annotated[
        float | None, typer.Option("--max-seconds", min=0, help="Time budget of the whole run, in seconds.")
    ] = None,
    max_iterations: Annotated[int, typer.Option("--max-iterations", min=1, help="Model calls per repair at most.")] = 8,
    executor: ExecutorOpt = "local",
    address: AddressOpt = None,
    workers: Annotated[
        int, typer.Option("--workers", min=1, help="Local worker processes (or a local Ray cluster's CPUs).")
    ] = 1,
    store: Annotated[
        str | None,
        typer.Option(
            "--store", help="Record repairs in this experience store (a SQLite file or postgresql+psycopg://...)."
        ),
    ] = None,
    device: DeviceOpt = "auto",
    trials: Annotated[int, typer.Option("--trials", min=1, help="Runs per case in every evaluation.")] = 3,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Reference cache (default ~/.cache/kope).")
    ] = None,
    sandbox: SandboxOpt = SandboxChoice.auto,
    timeout: Annotated[
        float,
        typer.Option("--timeout", min=1, help="Wall-time limit of each evaluation run, in seconds."),
    ] = 60.0,
    policy: Annotated[
        PolicyChoice,
        typer.Option(
            "--policy",
            help="Integrity policy for every task: strict (the kernels compute the function), partial (PyTorch may "
            "compute some of the model's operators; KernelBench levels 2-3 need it), or auto (each task's "
            "INTEGRITY_POLICY, else decided from what its reference calls).",
        ),
    ] = PolicyChoice.auto,
    as_json: JsonOpt = False,
    tolerance: ToleranceOpt = ToleranceChoiceOpt.auto,
    cuda_emulation: EmulationOpt = True,
) -> None:
    """Triage a run: match candidates to tasks, classify each (pass, near-miss, broken, cheat...), repair near misses.

    Progress goes to stderr: a bar on a terminal, one line per candidate in a log. The summary gives the
    classes before and after repair, each cause of failure once with its count and an example, and (from a
    manifest with a source_verdict column) the classes by the pipeline's own verdict.
    """
    from kope import paths
    from kope.evaluate import EvalOptions
    from kope.models import load_model
    from kope.triage import match, triage
    from kope.triage.progress import TriageProgress
    from kope.triage.run import read_rows

    with _errors_reported(as_json):
        resolved = _device(device, as_json=as_json)
        load_model(model)
        matching = match(tasks, candidates)
        for lost in matching.unmatched:
            err.print(f"no task for {lost.candidate}: {lost.reason}", highlight=False, markup=False)
        chosen = _executor(executor, workers, address, resolved)
        done = len({r.id for r in read_rows(out_dir)} & {i.id for i in matching.items}) if out_dir.exists() else 0
        bar = TriageProgress(len(matching.items), done=done, console=err)
        try:
            with bar:
                summary = triage(
                    tasks,
                    candidates,
                    out_dir,
                    executor=chosen,  # type: ignore[arg-type]
                    model=model,
                    matching=matching,
                    options=EvalOptions(
                        sandbox=_mode(sandbox),
                        device=resolved,
                        trials=trials,
                        timeout_s=timeout,
                        policy=_policy(policy),
                        tolerance=_tolerance(tolerance),
                        cuda_emulation=cuda_emulation,
                    ),
                    max_tokens=max_tokens,
                    max_seconds=max_seconds,
                    max_iterations=max_iterations,
                    store=store,
                    cache_dir=cache_dir or paths.cache_dir() / "reference",
                    progress=lambda row, s: bar.update(row, s.counts("after"), s.saved),
                )
        finally:
            chosen.close()  # type: ignore[attr-defined]
    causes = summary.causes()
    result = {
        "candidates": summary.total,
        "ran": summary.ran,
        "resumed": summary.resumed,
        "unmatched": len(summary.unmatched),
        "classes": list(summary.classes),
        "before": summary.counts("before"),
        "after": summary.counts("after"),
        "saved": summary.saved,
        "tokens": summary.tokens,
        "seconds": summary.seconds,
        "emulated": summary.emulated,
        "causes": [cause.model_dump() for cause in causes],
        "by_source_verdict": summary.by_source_verdict(),
        "by_model": summary.by_model(),
        "report": str(summary.out / "report.html"),
        "results": str(summary.out / "results.jsonl"),
    }
    if as_json:
        out.print_json(json.dumps(result))
        return
    _print_triage(summary, causes)
    out.print(
        f"{summary.total} candidate(s), {len(summary.unmatched)} without a task; pass rate "
        f"{summary.pass_rate('before'):.0%} → {summary.pass_rate('after'):.0%}, {summary.saved} saved, "
        f"{summary.tokens} tokens, {summary.seconds:.0f} s; report: {result['report']}",
        highlight=False,
        markup=False,
    )


def _print_triage(summary: TriageSummary, causes: list[Cause], shown: int = 15) -> None:
    """The classes before and after repair, the causes (the most common first), the classes by verdict."""
    from rich.table import Table
    from rich.text import Text

    classes = Table(title="classes", title_justify="left")
    classes.add_column("")
    for name in summary.classes:
        classes.add_column(name, justify="right")
    if summary.emulated:
        out.print(
            f"{summary.emulated} of {len(summary.rows)} judged with CUDA emulated on the CPU interpreter (no GPU here)",
            highlight=False,
        )
    before, after = summary.counts("before"), summary.counts("after")
    classes.add_row("before", *(str(before[n]) for n in summary.classes))
    classes.add_row("after repair", *(str(after[n]) for n in summary.classes))
    out.print(classes)
    if causes:
        out.print(f"causes ({len(causes)}), the most common first (numbers and paths taken out):", highlight=False)
        for cause in causes[:shown]:
            message = f": {cause.message}" if cause.message else ""
            out.print(
                f"  {cause.count} × {cause.klass} · {cause.kind}{message}  (e.g. {cause.example})",
                highlight=False,
                markup=False,
            )
        if len(causes) > shown:
            out.print(f"  ... {len(causes) - shown} more in the report", highlight=False)
    for title, counts in (("by source verdict", summary.by_source_verdict()), ("by model", summary.by_model())):
        if not counts:
            continue
        table = Table(title=f"classes {title}", title_justify="left")
        table.add_column(title.split()[-1])
        for name in summary.classes:
            table.add_column(name, justify="right")
        table.add_column("total", justify="right")
        for key, row in counts.items():
            table.add_row(Text(key), *(str(row[n]) for n in summary.classes), str(sum(row.values())))
        out.print(table)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
