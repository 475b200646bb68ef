"""Commands that search for a better kernel: debug (repair), regenerate (the from-scratch baseline), optimize.

`--out` is written only when the kernel passes. An unrepaired attempt goes beside it, named so:
`<out>.unrepaired.py`.
"""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from kope.cli.app import app
from kope.cli.options import (
    STOP_HELP,
    BaseUrlOpt,
    CacheDirOpt,
    CasesOpt,
    DeprecatedBudgetSeconds,
    DeprecatedBudgetTokens,
    DeprecatedIterations,
    DeprecatedOutDir,
    DeviceOpt,
    JsonOpt,
    MaxIterationsOpt,
    MaxSecondsOpt,
    MaxTokensOpt,
    ModelOpt,
    ModuleModeOpt,
    PolicyOpt,
    RecordOpt,
    RepairChoice,
    SandboxOpt,
    SetOpt,
    StoreOpt,
    TimeoutOpt,
    ToleranceOpt,
    TrialsOpt,
)
from kope.cli.run import (
    Evaluation,
    UsageProblem,
    emit,
    exit_with,
    fail,
    given,
    model,
    out,
    renamed,
    reported,
    say,
    store,
    task_and_candidate,
    writable_dir,
    writable_file,
)

if TYPE_CHECKING:
    from kope.agents.debug import DebugReport

TaskArg = Annotated[Path, typer.Argument(help="Task file in KernelBench format.")]
PromptTokensOpt = Annotated[int | None, typer.Option("--prompt-tokens", min=1000, help="Token budget of one prompt.")]
TranscriptOpt = Annotated[
    Path | None, typer.Option("--transcript", help="Write the transcript here (default: OUT.transcript.jsonl).")
]


def unrepaired_path(target: Path) -> Path:
    """Where an attempt that did not pass goes: beside --out, under a name that says so."""
    return target.with_name(f"{target.stem}.unrepaired{target.suffix or '.py'}")


def _model_failure(report: DebugReport) -> str:
    step = next((s for s in reversed(report.steps) if s.action == "model-error"), None)
    return step.outcome if step is not None and step.outcome else "the model call failed"


@app.command("debug", epilog=STOP_HELP)
def debug_command(
    task: TaskArg,
    candidate: Annotated[Path, typer.Argument(help="The near-miss kernel to repair (defines ModelNew).")],
    model_spec: ModelOpt = "offline",
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Where the repaired kernel goes, written only when it passes (default: CANDIDATE.repaired.py); "
            "an unrepaired attempt goes beside it as OUT.unrepaired.py.",
        ),
    ] = None,
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
    store_at: StoreOpt = None,
    max_tokens: MaxTokensOpt = None,
    max_seconds: MaxSecondsOpt = None,
    max_iterations: MaxIterationsOpt = None,
    base_url: BaseUrlOpt = None,
    prompt_tokens: PromptTokensOpt = None,
    recipes_first: Annotated[
        bool,
        typer.Option("--recipes-first", help="With an LLM: try the knowledge base's recipes before spending tokens."),
    ] = False,
    record: RecordOpt = None,
    transcript: TranscriptOpt = None,
    no_probes: Annotated[
        bool, typer.Option("--no-probes", help="Diagnose without probes (faster, less evidence).")
    ] = False,
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
    budget_tokens: DeprecatedBudgetTokens = None,
    budget_seconds: DeprecatedBudgetSeconds = None,
) -> None:
    """Repair a near-miss kernel: diagnose, ask the model for an edit, evaluate, repeat, bounded.

    A version counts as repaired only when it passes every case (hidden ones too) and the integrity
    gates; a kernel already right on every case as given ends `pass`, unchanged. Exit status: 0 repaired or
    pass, 1 unrepaired or rejected, 2 a usage or environment error (an unreachable model endpoint, a missing key).
    """
    from kope.agents import DebugConfig, LoopLimits
    from kope.agents.debug import DebugLoop, Step

    with reported(as_json):
        max_tokens = renamed(max_tokens, budget_tokens, "--budget-tokens")
        max_seconds = renamed(max_seconds, budget_seconds, "--budget-seconds")
        run = Evaluation(
            device, sandbox, policy, tolerance, trials, timeout, set_, cases_file, cache_dir, module_mode=module_mode
        ).check()
        loaded = task_and_candidate(task, candidate)
        target = writable_file(out_path or candidate.with_name(candidate.stem + ".repaired.py"), "--out")
        transcript = writable_file(transcript or target.with_suffix(".transcript.jsonl"), "--transcript")
        chosen = model(model_spec, base_url=base_url, record=record)
        config = DebugConfig(
            limits=LoopLimits(**given(max_iterations=max_iterations, max_tokens=max_tokens, max_seconds=max_seconds)),
            recipes_first=recipes_first,
            probes=not no_probes,
            options=run.options(),
            search=repair is RepairChoice.search,
            **given(prompt_budget=prompt_tokens),
        )

        def show(step: object) -> None:
            if isinstance(step, Step) and not as_json:
                tokens = step.tokens.prompt + step.tokens.completion
                say(
                    Text.assemble(
                        (f"step {step.iteration}", "bold"),
                        f" {step.model}: {step.action} — {step.outcome}",
                        (f" ({tokens} tokens)" if tokens else "", "dim"),
                    ),
                    stderr=True,
                )

        if not as_json:
            say(f"repairing {candidate} with {chosen.name if chosen else 'offline'} (on {run.resolved})", stderr=True)
        attempt = unrepaired_path(target)
        with run.evaluator() as evaluator, store(store_at) as memory:
            loop = DebugLoop(chosen, evaluator, config=config, transcript=transcript, progress=show, store=memory)
            cases = run.cases(evaluator, loaded, config.options) if run.overridden else None
            report = loop.run(loaded, candidate, attempt, cases=cases)
        if report.status in ("repaired", "pass"):
            shutil.move(attempt, target)
            report = report.model_copy(update={"output": str(target)})
    if report.stop_reason == "model-error":
        fail(
            f"{_model_failure(report)}; the attempt so far is in {report.output}",
            as_json=as_json,
            kind="model",
            hint="check --model, --base-url and the API key, then run again",
        )
    if as_json:
        emit(report.model_dump_json(exclude={"steps"} if explain else {"steps", "search"}))
    else:
        _print_debug(report, candidate, explain)
    exit_with(0 if report.status in ("repaired", "pass") else 1)


def _print_debug(report: DebugReport, candidate: Path, explain: bool) -> None:
    if explain:
        from kope.repair.explain import explain as explained

        for part in explained(report.search):
            out.print(part, highlight=False)
    if report.sandbox is not None and report.sandbox.weaker_than_namespaces:
        from kope.render import sandbox_warning

        say(sandbox_warning(report.sandbox), stderr=True, style="bold yellow")
    style = {"repaired": "bold green", "pass": "bold green", "rejected": "bold magenta", "unrepaired": "bold red"}[
        report.status
    ]
    final = report.final
    if report.smaller_cases:
        say(f"note: {report.smaller_cases}", style="yellow")
    if report.hypotheses:
        say(f"diagnosis: {', '.join(report.hypotheses[:3])} (most likely first)")
    print_diff(candidate, Path(report.output) if report.output else None)
    tokens = report.tokens.prompt + report.tokens.completion
    say(
        Text.assemble(
            (report.status.upper(), style),
            f" after {report.iterations} step(s), {tokens} tokens, {report.seconds:.1f} s "
            f"(stop: {report.stop_reason})\n"
            f"output: {report.output}  — every case: {final.cases_passed}/{final.cases} pass"
            f"{f' ({final.not_judged} refused by its own precondition: not judged)' if final.not_judged else ''}, "
            f"integrity {final.integrity}\ntranscript: {report.transcript}",
        )
    )


def print_diff(before: Path, after: Path | None) -> None:
    """The unified diff from `before` to `after` (the first 60 lines), whole when piped."""
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
        say("no change to the kernel")
        return
    out.print_diff(diff[:60] + ([f"... ({len(diff) - 60} more diff lines)"] if len(diff) > 60 else []))


@app.command("regenerate")
def regenerate_command(
    task: TaskArg,
    model_spec: Annotated[
        str,
        typer.Option(
            "--model", help="The model that writes the kernels: openai:MODEL, anthropic:MODEL or replay:FILE."
        ),
    ] = "offline",
    k: Annotated[int, typer.Option("-k", min=1, help="How many kernels to write from scratch.")] = 3,
    out_dir: Annotated[Path | None, typer.Option("--out", help="The folder the samples go to.")] = None,
    as_json: JsonOpt = False,
    device: DeviceOpt = "auto",
    sandbox: SandboxOpt = None,
    policy: PolicyOpt = None,
    tolerance: ToleranceOpt = None,
    trials: TrialsOpt = None,
    timeout: TimeoutOpt = None,
    set_: SetOpt = None,
    cases_file: CasesOpt = None,
    cache_dir: CacheDirOpt = None,
    base_url: BaseUrlOpt = None,
    record: RecordOpt = None,
    old_out_dir: DeprecatedOutDir = None,
) -> None:
    """The baseline: write the kernel from scratch k times, each evaluated on every case with the gates.

    Needs a model (`--model`): offline, nothing writes code. Exit status: 0 a sample passes, 1 none
    does, 2 a usage or environment error.
    """
    from kope.agents import regenerate

    with reported(as_json):
        folder = renamed(out_dir, old_out_dir, "--out-dir") or Path("regenerated")
        run = Evaluation(device, sandbox, policy, tolerance, trials, timeout, set_, cases_file, cache_dir).check()
        loaded = task_and_candidate(task)
        writable_dir(folder, "--out")
        if run.overridden:
            raise UsageProblem("regenerate evaluates on the task's own cases; --set and --cases are not taken here")
        chosen = model(model_spec, base_url=base_url, record=record, needed=True)
        with run.evaluator() as evaluator:
            report = regenerate(
                loaded,
                chosen,
                k=k,
                out_dir=folder,
                evaluator=evaluator,
                options=run.options(),
                transcript=folder / "transcript.jsonl",
            )
    failed = [s for s in report.samples if s.status == "model-error"]
    if failed and len(failed) == len(report.samples):
        fail(
            f"every sample failed to reach the model: {failed[0].detail}",
            as_json=as_json,
            kind="model",
            hint="check --model, --base-url and the API key, then run again",
        )
    if as_json:
        emit(report.model_dump_json())
    else:
        if report.note:
            say(report.note, style="yellow")
        for sample in report.samples:
            say(f"sample {sample.index}: {sample.status} {sample.detail}")
        say(
            f"{report.passes}/{len(report.samples)} pass; pass@1 {report.pass_at_1:.2f}, pass@{k} "
            f"{report.pass_at_k:.2f}; {report.tokens.prompt + report.tokens.completion} tokens"
        )
    exit_with(0 if report.passes else 1)


@app.command("optimize", epilog=STOP_HELP)
def optimize_command(
    task: TaskArg,
    kernel: Annotated[Path, typer.Argument(help="A correct kernel to make faster (defines ModelNew).")],
    model_spec: ModelOpt = "offline",
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Where the fastest correct version goes (default: KERNEL.optimized.py); nothing is written when "
            "the starting kernel is wrong.",
        ),
    ] = None,
    as_json: JsonOpt = False,
    device: DeviceOpt = "auto",
    sandbox: SandboxOpt = None,
    policy: PolicyOpt = None,
    tolerance: ToleranceOpt = None,
    trials: TrialsOpt = None,
    timeout: TimeoutOpt = None,
    set_: SetOpt = None,
    cases_file: CasesOpt = None,
    cache_dir: CacheDirOpt = None,
    store_at: StoreOpt = None,
    max_tokens: MaxTokensOpt = None,
    max_seconds: MaxSecondsOpt = None,
    max_iterations: MaxIterationsOpt = None,
    prompt_tokens: PromptTokensOpt = None,
    no_memory: Annotated[
        bool, typer.Option("--no-memory", help="Do not use the store's experience (the run is still recorded).")
    ] = False,
    confirm: Annotated[
        int, typer.Option("--confirm", min=0, help="Re-measure the start and the best version this many times each.")
    ] = 1,
    base_url: BaseUrlOpt = None,
    record: RecordOpt = None,
    transcript: TranscriptOpt = None,
    budget_tokens: DeprecatedBudgetTokens = None,
    budget_seconds: DeprecatedBudgetSeconds = None,
    iterations: DeprecatedIterations = None,
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

    with reported(as_json):
        max_tokens = renamed(max_tokens, budget_tokens, "--budget-tokens")
        max_seconds = renamed(max_seconds, budget_seconds, "--budget-seconds")
        max_iterations = renamed(max_iterations, iterations, "--iterations")
        run = Evaluation(device, sandbox, policy, tolerance, trials, timeout, set_, cases_file, cache_dir).check()
        loaded = task_and_candidate(task, kernel, "kernel")
        target = writable_file(out_path or kernel.with_name(kernel.stem + ".optimized.py"), "--out")
        transcript = writable_file(transcript or target.with_suffix(".transcript.jsonl"), "--transcript")
        chosen = model(model_spec, base_url=base_url, record=record)
        config = OptimizeConfig(
            options=run.options(timing=True),
            memory=not no_memory,
            confirm=confirm,
            **given(
                iterations=max_iterations, max_tokens=max_tokens, max_seconds=max_seconds, prompt_budget=prompt_tokens
            ),
        )

        def show(node: Node) -> None:
            if as_json:
                return
            timing = f"{node.time_ms:.4g} ms" if node.time_ms else ""
            speed = f" ({node.speedup_vs_start:.2f}x the start)" if node.speedup_vs_start and node.index else ""
            say(
                Text.assemble(
                    (str(node.index), "bold"), f" {node.kind}: {node.decision[:90]} — {node.status} {timing}{speed}"
                ),
                stderr=True,
            )

        if not as_json:
            say(
                f"optimizing {kernel} with {chosen.name if chosen else 'offline'} (timing on {run.resolved})",
                stderr=True,
            )
        with run.evaluator() as evaluator, store(store_at) as memory:
            loop = OptimizeLoop(chosen, evaluator, config=config, store=memory, transcript=transcript, progress=show)
            cases = run.cases(evaluator, loaded, config.options) if run.overridden else None
            report = loop.run(loaded, kernel, target, cases=cases)
    if report.stop_reason == "model-error":
        failure = next((n.decision for n in reversed(report.trajectory) if n.kind == "model-error"), "")
        fail(
            f"the model call failed{': ' + failure if failure else ''}; the best correct version so far is in "
            f"{report.output}",
            as_json=as_json,
            kind="model",
            hint="check --model, --base-url and the API key, then run again",
        )
    if as_json:
        emit(report.model_dump_json())
    else:
        _print_optimize(report)
    exit_with(report.exit_code)


def _print_optimize(report: Any) -> None:
    tokens = report.tokens.prompt + report.tokens.completion
    say(
        Text.assemble(
            (report.status.upper(), "bold"),
            f" after {report.evaluations} evaluation(s), {tokens} tokens, {report.seconds:.1f} s "
            f"(stop: {report.stop_reason})",
        )
    )
    if report.start_ms is not None and report.best_ms is not None:
        say(
            f"start {report.start_ms:.4g} ms → best {report.best_ms:.4g} ms ({report.timing_method}): "
            f"{report.speedup_vs_start or 1:.2f}x over the starting kernel"
            + (f", confirmed {report.confirmed_speedup_vs_start:.2f}x" if report.confirmed_speedup_vs_start else "")
            + (f", found at evaluation {report.best_found_at}" if report.best_found_at else "")
        )
    if report.speedup_vs_reference is not None:
        say(f"{report.speedup_vs_reference:.2f}x over the PyTorch reference")
    if report.timing_note:
        say(report.timing_note, style="dim")
    if report.best_config:
        say("configuration: " + ", ".join(f"{k}={v}" for k, v in sorted(report.best_config.items())))
    say(f"output: {report.output}" + (f"  (run {report.run_id} in the experience store)" if report.run_id else ""))


__all__ = ["debug_command", "optimize_command", "print_diff", "regenerate_command", "unrepaired_path"]
