"""`kope bench`: build near-miss suites (mutate), run a strategy over one (run), report on the runs."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated

import typer

from kope.cli.app import bench_app
from kope.cli.options import (
    AddressOpt,
    BaseUrlOpt,
    CacheDirOpt,
    DeviceOpt,
    ExecutorOpt,
    JsonOpt,
    MaxIterationsOpt,
    PolicyOpt,
    SandboxOpt,
    TimeoutOpt,
    ToleranceOpt,
    TrialsOpt,
)
from kope.cli.run import (
    Evaluation,
    UsageProblem,
    emit,
    executor_for,
    given,
    model,
    progress,
    reported,
    say,
    writable_dir,
)

SuiteArg = Annotated[str, typer.Argument(help="A suite directory or manifest, or `default` (shipped).")]


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
    cache_dir: CacheDirOpt = None,
) -> None:
    """Build a near-miss suite: mutate correct kernels, keep the mutants that compile, run and fail a case."""
    from kope.bench.corpus import build_suite, counts
    from kope.bugs.mutation import operators as known_operators
    from kope.ops import UnknownOpError, get_op, list_ops

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
    with reported(False):
        writable_dir(out_dir, "--out")
        run = Evaluation("cpu", cache_dir=cache_dir).check()
        known_operators(chosen)
        for name in names:
            try:
                get_op(name)
            except UnknownOpError as exc:
                raise UsageProblem(str(exc.args[0]), hint="`kope ops list` shows the operators") from None
        with progress(True, "mutating") as report, run.evaluator(max_parallel=1) as evaluator:
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
                progress=report,
            )
    say(f"{len(manifest.entries)} near misses in {out_dir} ({manifest.seconds:.0f} s)")
    for name, count in sorted(counts(manifest.entries, "label").items()):
        say(f"  {name:24s} {count}")


@bench_app.command("suite")
def bench_suite(suite: SuiteArg = "default", as_json: JsonOpt = False) -> None:
    """Show a near-miss suite: where it is and its cases per taxonomy id, operator and task."""
    from kope.bench.corpus import counts, load_suite

    with reported(as_json):
        loaded = load_suite(suite)
    entries = loaded.entries
    summary = {key: dict(sorted(counts(entries, key).items())) for key in ("label", "operator", "task")}
    if as_json:
        emit({"root": str(loaded.root), "cases": len(entries), **summary})
        return
    say(f"{loaded.root}: {len(entries)} cases")
    for key, table in summary.items():
        say(f"per {key}: " + ", ".join(f"{k} {v}" for k, v in table.items()))


@bench_app.command("run")
def bench_run(
    suite: SuiteArg,
    out_dir: Annotated[Path, typer.Option("--out", help="Results directory (attempts.jsonl; reruns resume).")],
    strategy: Annotated[str, typer.Option("--strategy", help="debug or regenerate.")] = "debug",
    model_spec: Annotated[
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
    sandbox: SandboxOpt = None,
    policy: PolicyOpt = None,
    tolerance: ToleranceOpt = None,
    trials: TrialsOpt = None,
    timeout: TimeoutOpt = None,
    cache_dir: CacheDirOpt = None,
    max_iterations: MaxIterationsOpt = None,
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
    executor: ExecutorOpt = "local",
    address: AddressOpt = None,
) -> None:
    """Run a strategy over a suite in worker processes (or on Ray); one JSONL row per attempt, resumable."""
    from kope.agents import LoopLimits
    from kope.bench.corpus import load_suite
    from kope.bench.harness import Attempt, ModelFactory, parse_arms, run_bench
    from kope.models import load_model

    with reported(False):
        if strategy not in ("debug", "regenerate"):
            raise UsageProblem(f"unknown strategy {strategy!r}", hint="use --strategy debug or --strategy regenerate")
        run = Evaluation(device, sandbox, policy, tolerance, trials, timeout, cache_dir=cache_dir).check()
        writable_dir(out_dir, "--out")
        loaded = load_suite(suite)
        arms = parse_arms(ablate or [], baseline=not no_baseline)
        model(model_spec, base_url=base_url, needed=strategy == "regenerate")
        factory: ModelFactory | None = None
        if base_url is not None or temperature is not None:
            factory = functools.partial(load_model, base_url=base_url, temperature=temperature)
        n = samples or (k if strategy == "regenerate" else 1)

        def show(row: object, done: int, total: int) -> None:
            if isinstance(row, Attempt):
                say(
                    f"[{done}/{total}] {row.case} {row.strategy} {row.arm} s{row.sample}: {row.outcome} "
                    f"({row.iterations} step(s), {row.tokens} tokens, {row.job_s:.0f} s)",
                    stderr=True,
                )

        chosen = None if executor == "local" else executor_for(executor, workers, address, run.resolved)
        summary = run_bench(
            loaded,
            strategy=strategy,  # type: ignore[arg-type]
            model=model_spec,
            out=out_dir,
            arms=arms,
            samples=n,
            workers=workers,
            limit=limit,
            every=every,
            options=run.options(),
            limits=LoopLimits(**given(max_iterations=max_iterations)),
            cache_dir=run.cache(),
            model_factory=factory,
            progress=show,
            probes=not no_probes,
            memory=memory,
            executor=chosen,  # type: ignore[arg-type]
        )
    passed = sum(r.passed for r in summary.rows)
    say(
        f"{summary.ran} attempt(s) run, {summary.skipped} already done, {passed} passed; "
        f"{summary.seconds:.0f} s; rows in {out_dir / 'attempts.jsonl'}"
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

    with reported(False):
        missing = [str(p) for p in results if not p.exists()]
        if missing:
            raise UsageProblem(
                f"no such results: {', '.join(missing)}", hint="give the --out folders of `kope bench run`"
            )
        writable_dir(out_dir, "--out")
        report = write_report(results, out_dir, k=k)
    say(f"wrote {report} and charts in {out_dir}")
