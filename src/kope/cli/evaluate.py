"""Commands that evaluate one kernel: eval, check, cases, diagnose, trace, and doctor (the sandbox here)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from kope.cli.app import app
from kope.cli.options import (
    CacheDirOpt,
    CasesOpt,
    DeviceOpt,
    EmulationOpt,
    JsonOpt,
    MaxElementsOpt,
    ModuleModeOpt,
    PolicyOpt,
    SandboxOpt,
    SetOpt,
    TimeoutOpt,
    ToleranceOpt,
    TrialsOpt,
)
from kope.cli.run import (
    Evaluation,
    UsageProblem,
    emit,
    exit_with,
    out,
    progress,
    reported,
    say,
    task_and_candidate,
    writable_file,
)

TaskArg = Annotated[Path, typer.Argument(help="Task file in KernelBench format (Model, get_inputs, get_init_inputs).")]
CandidateArg = Annotated[Path, typer.Argument(help="Candidate file defining class ModelNew.")]


@app.command("eval")
def eval_command(
    task: TaskArg,
    candidate: CandidateArg,
    as_json: JsonOpt = False,
    device: DeviceOpt = "auto",
    sandbox: SandboxOpt = None,
    policy: PolicyOpt = None,
    tolerance: ToleranceOpt = None,
    module_mode: ModuleModeOpt = None,
    trials: TrialsOpt = None,
    timeout: TimeoutOpt = None,
    set_: SetOpt = None,
    cases_file: CasesOpt = None,
    cache_dir: CacheDirOpt = None,
    case: Annotated[
        list[str] | None, typer.Option("--case", help="Run only the case of this name (repeatable).")
    ] = None,
    visible_only: Annotated[
        bool, typer.Option("--visible-only", help="Run only the cases an agent is shown (default: every case).")
    ] = False,
    seed: Annotated[int | None, typer.Option("--seed", help="Base seed of inputs and parameters.")] = None,
    memory: Annotated[int | None, typer.Option("--memory", min=64, help="Memory limit of each run, in MB.")] = None,
    timing: Annotated[
        bool | None,
        typer.Option("--timing/--no-timing", help="Measure time (default: on for CUDA, off for the CPU interpreter)."),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Recompute reference outputs.")] = False,
    max_elements: MaxElementsOpt = None,
    cuda_emulation: EmulationOpt = True,
) -> None:
    """Evaluate CANDIDATE against TASK on every case, sandboxed.

    Exit status: 0 pass, 1 fail or reject, 2 error (the candidate does not run, or a usage error).
    """
    from kope.cases.task import override_notes, parse_set
    from kope.evaluate import Evaluator
    from kope.protocol.results import CaseResult
    from kope.render import case_outcome, print_eval

    with reported(as_json):
        run = Evaluation(
            device, sandbox, policy, tolerance, trials, timeout, set_, cases_file, cache_dir, module_mode=module_mode
        ).check()
        loaded = task_and_candidate(task, candidate)
        options = run.options(
            seed=seed,
            memory_mb=memory,
            timing=run.resolved.startswith("cuda") if timing is None else timing,
            max_elements=max_elements,
            cuda_emulation=cuda_emulation,
        )
        for note in override_notes(loaded.source, parse_set(list(set_ or []))):
            say(f"note: {note}", stderr=True)
        which: list[str] | str = list(case) if case else ("visible" if visible_only else "all")
        with (
            Evaluator(cache_dir=None if no_cache else run.cache()) as evaluator,
            progress(not as_json) as report,
        ):
            chosen = run.cases(evaluator, loaded, options)

            def on_case(result: object) -> None:
                if isinstance(result, CaseResult):
                    report(f"case {result.name}: {case_outcome(result).plain}")

            result = evaluator.evaluate(loaded, candidate, options=options, cases=chosen, which=which, on_case=on_case)
    if as_json:
        emit(result.model_dump_json())
    else:
        print_eval(result, out)
    exit_with(result.exit_code)


@app.command("check")
def check_command(
    task: TaskArg,
    candidate: CandidateArg,
    as_json: JsonOpt = False,
    device: DeviceOpt = "auto",
    sandbox: SandboxOpt = None,
    policy: PolicyOpt = None,
    tolerance: ToleranceOpt = None,
    module_mode: ModuleModeOpt = None,
    trials: Annotated[
        int, typer.Option("--trials", min=2, help="Runs per case (two at least: the caching probe compares them).")
    ] = 2,
    timeout: TimeoutOpt = None,
    set_: SetOpt = None,
    cases_file: CasesOpt = None,
    cache_dir: CacheDirOpt = None,
    all_cases: Annotated[
        bool, typer.Option("--all-cases", help="Run the dynamic checks on every case (default: the visible ones).")
    ] = False,
    max_elements: MaxElementsOpt = None,
) -> None:
    """Run the integrity gates on CANDIDATE and explain each finding in plain words.

    Static rules read the source; dynamic rules watch it run on the task's visible case(s).
    Exit status: 0 clean, 1 rejected, 2 error.
    """
    from kope.render import integrity_report

    with reported(as_json):
        run = Evaluation(
            device, sandbox, policy, tolerance, trials, timeout, set_, cases_file, cache_dir, module_mode=module_mode
        ).check()
        loaded = task_and_candidate(task, candidate)
        options = run.options(max_elements=max_elements)
        with run.evaluator() as evaluator, progress(not as_json) as report:
            report("running the candidate")
            chosen = run.cases(evaluator, loaded, options)
            result = evaluator.evaluate(
                loaded, candidate, options=options, cases=chosen, which="all" if all_cases else "visible"
            )
    integrity = result.integrity
    code = 1 if integrity.verdict == "reject" else 0
    if result.error is not None:
        code = 2 if integrity.verdict == "clean" else 1
    if as_json:
        emit(
            {
                "verdict": integrity.verdict,
                "findings": [f.model_dump() for f in integrity.findings],
                "policy": integrity.policy,
                "policy_reason": integrity.policy_reason,
                "numeric_status": result.status,
                "error": result.error.model_dump() if result.error else None,
            }
        )
    else:
        out.print(integrity_report(integrity, candidate.read_text(errors="replace")))
        if result.error is not None:
            say(
                f"the candidate did not run to the end ({result.error.kind}): {result.error.message}; "
                "dynamic checks are incomplete",
                style="yellow",
            )
    exit_with(code)


@app.command("cases")
def cases_command(
    task: TaskArg,
    as_json: JsonOpt = False,
    device: DeviceOpt = "auto",
    sandbox: SandboxOpt = None,
    timeout: TimeoutOpt = None,
    max_elements: MaxElementsOpt = None,
    derive: Annotated[
        bool, typer.Option("--derive", help="Derive cases even when the task declares its own get_cases().")
    ] = False,
) -> None:
    """Show the cases of TASK: its own get_cases(), or those kope derives from its single shape.

    For derived cases: which module-level names size the inputs, and every variant considered
    (original or shrunk, odd, prime, one, scaled and shifted inputs, widened inputs for a low-signal
    task), kept or dropped, and why.
    """
    from kope.cases.render import cases_table, derivation_report
    from kope.cases.signal import mark_low_signal
    from kope.cases.task import build_cases

    with reported(as_json):
        run = Evaluation(device, sandbox, timeout=timeout).check()
        loaded = task_and_candidate(task)
        options = run.options(max_elements=max_elements)
        with run.evaluator() as evaluator, progress(not as_json, "deriving cases"):
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
        emit(
            {
                "task": str(loaded.path),
                "source": "get_cases" if derivation is None else "derived",
                "cases": rows,
                "derivation": derivation.model_dump(mode="json") if derivation else None,
            }
        )
    elif derivation is None:
        out.print(cases_table(cases, f"{loaded.path}: the task's own cases (get_cases); --derive shows derived ones"))
    else:
        out.print(derivation_report(derivation))
    exit_with(0)


@app.command("diagnose")
def diagnose_command(
    task: TaskArg,
    candidate: CandidateArg,
    as_json: JsonOpt = False,
    device: DeviceOpt = "auto",
    sandbox: SandboxOpt = None,
    policy: PolicyOpt = None,
    tolerance: ToleranceOpt = None,
    module_mode: ModuleModeOpt = None,
    trials: TrialsOpt = None,
    timeout: TimeoutOpt = None,
    set_: SetOpt = None,
    cases_file: CasesOpt = None,
    cache_dir: CacheDirOpt = None,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Write a heatmap of where the first failing output is wrong (PNG).")
    ] = None,
    no_probes: Annotated[
        bool, typer.Option("--no-probes", help="Skip the probes (bounds checker, determinism, size sweep): faster.")
    ] = False,
    patterns: Annotated[
        list[Path] | None, typer.Option("--patterns", help="A directory of extra pattern files (repeatable).")
    ] = None,
) -> None:
    """Say what is wrong with a failing kernel, and which known bug it is.

    Evaluates every case, computes where and how each output is wrong (mismatch signature), runs
    probes (bounds checker, determinism rerun, sizes around the kernel's block sizes), reads the
    kernel for code cues, and ranks the knowledge base's bug patterns. Exit status: 0 when the
    candidate passes (nothing to diagnose), 1 when a diagnosis was made, 2 on error.
    """
    from kope.diagnose.diagnoser import Diagnoser
    from kope.knowledge.base import KnowledgeBase
    from kope.render import diagnosis_report

    with reported(as_json):
        run = Evaluation(
            device, sandbox, policy, tolerance, trials, timeout, set_, cases_file, cache_dir, module_mode=module_mode
        ).check()
        if plot is not None:
            writable_file(plot, "--plot")
        for folder in patterns or []:
            if not folder.is_dir():
                raise UsageProblem(f"--patterns {folder} is not a folder", hint="give a folder of pattern files")
        loaded = task_and_candidate(task, candidate)
        options = run.options()
        knowledge = KnowledgeBase.load(extra_dirs=patterns or [])
        if plot is not None:
            plot.parent.mkdir(parents=True, exist_ok=True)
        with run.evaluator() as evaluator, progress(not as_json, "diagnosing") as report:
            chosen = run.cases(evaluator, loaded, options)
            diagnosis = Diagnoser(evaluator, knowledge).diagnose(
                loaded, candidate, options=options, cases=chosen, probes=not no_probes, progress=report, plot=plot
            )
    if as_json:
        emit(diagnosis.model_dump_json())
    else:
        out.print(diagnosis_report(diagnosis))
        if plot is not None and plot.exists():
            say(f"heatmap: {plot}")
    exit_with(0 if diagnosis.status == "pass" else 1)


def _trace_target(candidate: Path, kernel: str, line: int) -> None:
    """The kernel exists and the line lies inside it, or a usage error naming what does exist."""
    from kope.source.parse import ParsedSource

    parsed = ParsedSource.parse(candidate.read_text(errors="replace"))
    if parsed is None:
        raise UsageProblem(f"{candidate} is not Python that parses", hint="`kope eval` shows the syntax error")
    kernels = parsed.kernel_names
    if kernel not in kernels:
        names = ", ".join(f"{name} (lines {k.body[0].lineno}-{k.end_lineno})" for name, k in kernels.items())
        raise UsageProblem(
            f"--kernel {kernel}: {candidate} has no @triton.jit function of that name; it has: {names or 'none'}",
            hint="give one of those names to --kernel, and a line of its body to --line",
        )
    node = kernels[kernel]
    first, last = node.body[0].lineno, node.end_lineno or node.lineno
    if not first <= line <= last:
        raise UsageProblem(
            f"--line {line} is not inside {kernel}, whose body is lines {first}-{last}",
            hint=f"give a line from {first} to {last}",
        )


@app.command("trace")
def trace_command(
    task: TaskArg,
    candidate: CandidateArg,
    kernel: Annotated[str, typer.Option("--kernel", help="Name of the @triton.jit function to look inside.")],
    line: Annotated[int, typer.Option("--line", help="Line of the candidate file (inside that kernel).")],
    pid: Annotated[
        str, typer.Option("--pid", help="Program id to watch, e.g. 0 or 3,0,0 (a prefix matches).")
    ] = "0,0,0",
    as_json: JsonOpt = False,
    sandbox: SandboxOpt = None,
    timeout: TimeoutOpt = None,
    set_: SetOpt = None,
    cases_file: CasesOpt = None,
    cache_dir: CacheDirOpt = None,
    case: Annotated[str | None, typer.Option("--case", help="Case to run (default: the visible one).")] = None,
) -> None:
    """Print a kernel's local variables at one line, for one program (Triton interpreter, on the CPU).

    The values are those the variables hold each time the line is about to run (up to 16 times,
    e.g. in a loop), for the program whose id starts with --pid. Exit status: 0 the line was reached,
    1 it was not, 2 a usage error (a kernel or line that does not exist is named with those that do).
    """
    from kope.protocol import TraceSpec

    with reported(as_json):
        try:
            program = [int(part) for part in pid.split(",") if part.strip()]
        except ValueError:
            raise UsageProblem(f"--pid expects integers such as 0 or 3,0,0, got {pid!r}") from None
        run = Evaluation("cpu", sandbox, timeout=timeout, set_=set_, cases_file=cases_file, cache_dir=cache_dir)
        run.check()
        loaded = task_and_candidate(task, candidate)
        _trace_target(candidate, kernel, line)
        options = run.options(trials=1, integrity=False, trace=TraceSpec(kernel=kernel, line=line, pid=program))
        with run.evaluator() as evaluator:
            cases = run.cases(evaluator, loaded, options)
            if case is not None and case not in {c.name for c in cases}:
                raise UsageProblem(f"--case {case}: no such case; the task has: {', '.join(c.name for c in cases)}")
            result = evaluator.evaluate(
                loaded, candidate, options=options, cases=cases, which=[case] if case else "visible"
            )
    case_result = result.cases[0]
    hits = case_result.trace or []
    if as_json:
        emit(
            {
                "case": case_result.name,
                "kernel": kernel,
                "line": line,
                "pid": program,
                "hits": [h.model_dump() for h in hits],
                "error": case_result.error.model_dump() if case_result.error else None,
            }
        )
    else:
        source = candidate.read_text(errors="replace").splitlines()
        say(
            Text.assemble(
                (kernel, "bold"), f" line {line}: ", (source[line - 1].strip(), "cyan"), f"  (case {case_result.name})"
            )
        )
        if not hits:
            say("the line was never reached by that program (check --pid)", style="yellow")
        for index, hit in enumerate(hits):
            say(Text.assemble((f"hit {index + 1}", "bold"), f", program {tuple(hit.pid)}:"))
            for name, value in hit.variables.items():
                say(f"  {name} = {value}")
        if case_result.error is not None:
            say(f"the run ended with an error: {case_result.error.kind}: {case_result.error.message}", style="yellow")
    exit_with(0 if hits else 1)


@app.command("doctor")
def doctor_command(as_json: JsonOpt = False) -> None:
    """Say what this machine offers kope's sandbox, and which level jobs get here.

    Runs a trivial job through the real sandbox (namespaces where allowed, then the Landlock
    fallback) and reports what held, with the kernel settings that explain a refusal: user
    namespaces, Landlock ABI, seccomp, a memory cgroup per job, GPU device nodes and driver libraries.
    Exit status: 0 when jobs get the namespace sandbox, 1 when they get less.
    """
    from rich.table import Table

    from kope.evaluate.doctor import inspect_machine

    with reported(as_json):
        report = inspect_machine()
    level = report.auto.level if report.auto else "process"
    if as_json:
        emit(report.model_dump_json())
        exit_with(0 if level == "namespaces" else 1)
    style = {"namespaces": "bold green", "landlock": "bold yellow", "process": "bold red"}[level]
    say(Text.assemble("sandbox level for `--sandbox auto`: ", (level, style)))
    table = Table("check", "result", show_header=True, header_style="bold")
    if report.auto is not None:
        table.add_row("protections", Text(", ".join(report.auto.protections)))
        if report.auto.missing:
            table.add_row("did not hold", Text("; ".join(report.auto.missing)))
    fallback = report.landlock_fallback
    table.add_row(
        "landlock fallback", Text(f"{fallback.level}: {', '.join(fallback.protections)}" if fallback else "failed")
    )
    table.add_row("landlock ABI", str(report.landlock_abi) if report.landlock_abi else "none")
    table.add_row("seccomp", "yes" if report.seccomp else "no")
    table.add_row(
        "memory cgroup per job",
        f"yes (cgroup v{report.cgroup_memory})"
        if report.cgroup_memory
        else "no (memory: the supervisor's poll + RLIMIT_AS)",
    )
    table.add_row("GPU device nodes", Text(", ".join(report.gpu_devices) or "none"))
    if report.gpu_library_dirs:
        table.add_row("GPU driver libraries", Text(", ".join(report.gpu_library_dirs)))
    for name, value in report.kernel_settings.items():
        table.add_row(Text(name), Text(value))
    out.print(table)
    for line in report.advice:
        say(f"- {line}")
    exit_with(0 if level == "namespaces" else 1)
