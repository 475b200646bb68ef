"""A report of one or more harness runs: Markdown tables and PNG charts, each readable on its own.

report.md               overall table per arm, Pass@1 per taxonomy id, diagnosis accuracy, time
pass_rates.png          Pass@1 (and Pass@k) per arm
pass_by_label.png       Pass@1 per taxonomy id, one bar per arm
tokens_per_success.png  tokens per success per arm
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kope.bench.harness import Attempt, read_attempts, read_runs
from kope.bench.metrics import ALL, Metrics, compute

CHARTS = ("pass_rates.png", "pass_by_label.png", "tokens_per_success.png")


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _num(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def arm_name(metrics: Metrics) -> str:
    arm = "full" if metrics.arm == "none" else f"−{metrics.arm}"
    return f"{metrics.strategy} {arm} ({metrics.model})"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def load_rows(sources: Sequence[Path]) -> list[Attempt]:
    """Rows of every source (a results directory or an attempts file); a repeated key is counted once."""
    seen: dict[tuple[str, str, str, int, str], Attempt] = {}
    for source in sources:
        for row in read_attempts(source):
            seen[row.key()] = row
    return list(seen.values())


def markdown(rows: Sequence[Attempt], runs: Sequence[dict[str, Any]], sources: Sequence[Path], k: int) -> str:
    metrics = compute(rows, k=k)
    overall = [m for m in metrics if m.label == ALL]
    lines = ["# kope bench report", ""]
    lines.append(
        f"{len(rows)} attempts from {', '.join(str(s) for s in sources)}; written {time.strftime('%Y-%m-%d')}."
    )
    machines = {
        f"{r['machine'].get('node')} ({r['machine'].get('cpus')} CPUs, torch {r['machine'].get('torch')}, "
        f"triton {r['machine'].get('triton')})"
        for r in runs
        if r.get("machine")
    }
    if machines:
        lines.append(f"Machine: {'; '.join(sorted(machines))}.")
    lines += [
        "",
        "Pass@1 and Pass@k count an attempt as a success only if its result is right on every case of the task and "
        "clean for the integrity gates. *Accepted* is what the workflow itself accepted; *integrity-rejected* counts "
        "results right on every case that the gates reject. Tokens per success: all tokens spent, failed attempts "
        "included, divided by the successes; *mean tokens/success*: the mean of the successful attempts alone. "
        "Diagnosis accuracy: the label among the first (top-1) or first three (top-3) ranked hypotheses.",
        "",
        "## Overall",
        "",
    ]
    at_k = [f"Pass@{k}"] if k > 1 else []
    header = [
        "strategy",
        "arm",
        "model",
        "cases",
        "attempts",
        "Pass@1",
        *at_k,
        "successes",
        "accepted",
        "integrity-rejected",
        "tokens/success",
        "mean tokens/success",
        "diag. top-1",
        "diag. top-3",
        "mean iterations",
        "mean s/attempt",
        "harness errors",
    ]
    body = []
    for m in overall:
        needs = "needs a model"
        body.append(
            [
                m.strategy,
                "full" if m.arm == "none" else f"−{m.arm}",
                m.model,
                str(m.cases),
                str(m.attempts),
                needs if m.needs_model else _pct(m.pass_at_1),
                *([needs if m.needs_model else _pct(m.pass_at_k)] if k > 1 else []),
                str(m.successes),
                str(m.accepted),
                str(m.integrity_rejected),
                _num(m.tokens_per_success),
                _num(m.mean_tokens_per_success),
                _pct(m.top1),
                _pct(m.top3),
                _num(m.mean_iterations, 2),
                _num(m.job_s_mean, 1),
                str(m.errors),
            ]
        )
    lines += _table(header, body)
    labels = sorted({m.label for m in metrics if m.label != ALL})
    if labels:
        lines += ["", "## Pass@1 per taxonomy id", ""]
        by = {(m.arm_key, m.label): m for m in metrics}
        arms = [m.arm_key for m in overall]
        header = ["taxonomy id", "cases", *[arm_name(m) for m in overall]]
        body = []
        for label in labels:
            cells = [by.get((a, label)) for a in arms]
            cases = max((c.cases for c in cells if c is not None), default=0)
            body.append(
                [
                    label,
                    str(cases),
                    *[
                        "—"
                        if c is None
                        else ("needs a model" if c.needs_model else f"{_pct(c.pass_at_1)} ({c.successes}/{c.attempts})")
                        for c in cells
                    ],
                ]
            )
        lines += _table(header, body)
        debug_full = [m for m in overall if m.strategy == "debug" and m.diagnosed]
        if debug_full:
            first = debug_full[0]
            lines += ["", f"## Diagnosis accuracy per taxonomy id ({arm_name(first)})", ""]
            rows_ = [
                [m.label, str(m.diagnosed), _pct(m.top1), _pct(m.top3)]
                for m in metrics
                if m.arm_key == first.arm_key and m.label != ALL
            ]
            rows_.append(["all", str(first.diagnosed), _pct(first.top1), _pct(first.top3)])
            lines += _table(["taxonomy id", "cases", "top-1", "top-3"], rows_)
    lines += [
        "",
        "## Time",
        "",
        "Per attempt, in its worker: the whole job; the strategy (debug loop or regenerated sample); the time "
        "inside evaluations; the harness's own time (the job minus the strategy and the harness's gate check).",
        "",
    ]
    body = [
        [
            arm_name(m),
            str(m.attempts),
            _num(m.job_s_mean, 2),
            _num(m.wall_s_mean, 2),
            _num(m.eval_s_mean, 2),
            _num(m.loop_other_s_mean, 2),
            _num(m.harness_s_mean * 1000, 1),
            _num(m.job_s_total, 0),
        ]
        for m in overall
    ]
    lines += _table(
        [
            "arm",
            "attempts",
            "mean job s",
            "mean strategy s",
            "mean evaluation s",
            "mean strategy s outside evaluations",
            "mean harness ms",
            "total job s",
        ],
        body,
    )
    if runs:
        lines += [
            "",
            "Runs: wall time with the number of worker processes; *dispatch s per attempt* is what the "
            "wall time holds beyond the jobs themselves, (wall × workers − Σ job) / attempts: starting the "
            "workers, waiting for the last ones, the parent's bookkeeping.",
            "",
        ]
        body = []
        for r in runs:
            ran, workers = int(r.get("ran") or 0), int(r.get("workers") or 1)
            dispatch = (float(r.get("seconds") or 0) * workers - float(r.get("jobs_s") or 0)) / ran if ran else None
            body.append(
                [
                    str(r.get("started", "")),
                    str(r.get("strategy", "")),
                    ",".join(r.get("arms", [])),
                    str(r.get("model", "")),
                    str(workers),
                    str(ran),
                    str(r.get("skipped", "")),
                    _num(r.get("seconds"), 0),
                    _num(dispatch, 2) if "jobs_s" in r else "—",
                    _num(r.get("parent_s"), 3),
                ]
            )
        lines += _table(
            [
                "started",
                "strategy",
                "arms",
                "model",
                "workers",
                "attempts run",
                "skipped (resumed)",
                "wall s",
                "dispatch s per attempt",
                "parent bookkeeping s",
            ],
            body,
        )
    lines += ["", "Charts: " + ", ".join(f"[{c}]({c})" for c in CHARTS), ""]
    return "\n".join(lines)


def charts(rows: Sequence[Attempt], out: Path, k: int) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = compute(rows, k=k)
    overall = [m for m in metrics if m.label == ALL]
    written: list[Path] = []
    names = [arm_name(m) for m in overall]

    figure, axis = plt.subplots(figsize=(max(6.0, 1.6 * len(overall) + 2), 4.2))
    values = [0.0 if m.needs_model or m.pass_at_1 is None else m.pass_at_1 for m in overall]
    bars = axis.bar(range(len(overall)), values, color="#4c72b0", label="Pass@1")
    at_k = [m.pass_at_k for m in overall]
    if k > 1 and any(v is not None for v in at_k):
        axis.scatter(
            range(len(overall)),
            [v if v is not None else float("nan") for v in at_k],
            color="#dd8452",
            marker="D",
            zorder=3,
            label=f"Pass@{k}",
        )
    for bar, m in zip(bars, overall, strict=True):
        text = "needs a model" if m.needs_model else f"{(m.pass_at_1 or 0):.0%}\n{m.successes}/{m.attempts}"
        axis.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=8)
    axis.set_xticks(range(len(overall)), names, rotation=20, ha="right", fontsize=8)
    axis.set_ylim(0, 1.15)
    axis.set_ylabel("share of near misses passing (full coverage + gates)")
    axis.set_title("kope bench: pass rate per strategy and arm")
    axis.legend(loc="upper right", fontsize=8)
    figure.tight_layout()
    written.append(_save(figure, out / "pass_rates.png"))
    plt.close(figure)

    labels = sorted({m.label for m in metrics if m.label != ALL})
    by = {(m.arm_key, m.label): m for m in metrics}
    height = 0.8 / max(1, len(overall))
    figure, axis = plt.subplots(figsize=(8.0, max(3.0, 0.45 * len(labels) * max(1, len(overall)) ** 0.5 + 1.5)))
    for index, arm in enumerate(overall):
        ys = [i + index * height for i in range(len(labels))]
        xs = [(by[(arm.arm_key, lab)].pass_at_1 or 0.0) if (arm.arm_key, lab) in by else 0.0 for lab in labels]
        axis.barh(ys, xs, height=height, label=arm_name(arm))
    axis.set_yticks([i + height * (len(overall) - 1) / 2 for i in range(len(labels))], labels, fontsize=8)
    axis.invert_yaxis()
    axis.set_xlim(0, 1.0)
    axis.set_xlabel("Pass@1")
    axis.set_title("kope bench: Pass@1 per taxonomy id")
    axis.legend(fontsize=7, loc="lower right")
    figure.tight_layout()
    written.append(_save(figure, out / "pass_by_label.png"))
    plt.close(figure)

    figure, axis = plt.subplots(figsize=(max(6.0, 1.6 * len(overall) + 2), 4.2))
    spent = [m.tokens_per_success or 0.0 for m in overall]
    bars = axis.bar(range(len(overall)), spent, color="#55a868")
    for bar, m in zip(bars, overall, strict=True):
        if m.needs_model:
            text = "needs a model"
        elif m.tokens_per_success is None:
            text = "no success"
        else:
            text = f"{m.tokens_per_success:,.0f}"
        axis.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=8)
    axis.set_xticks(range(len(overall)), names, rotation=20, ha="right", fontsize=8)
    axis.set_ylabel("tokens per success (all attempts' tokens / successes)")
    axis.set_title("kope bench: tokens per success")
    if not any(spent):
        axis.set_ylim(0, 1)
    figure.tight_layout()
    written.append(_save(figure, out / "tokens_per_success.png"))
    plt.close(figure)
    return written


def _save(figure: Any, path: Path) -> Path:
    figure.savefig(path, dpi=110)
    return path


def write_report(sources: Sequence[Path], out: Path, *, k: int = 1) -> Path:
    """Write report.md and the charts into `out`; returns the Markdown file."""
    rows = load_rows(sources)
    runs = [run for source in sources for run in read_runs(source)]
    out.mkdir(parents=True, exist_ok=True)
    report = out / "report.md"
    report.write_text(markdown(rows, runs, sources, k))
    charts(rows, out, k)
    return report
