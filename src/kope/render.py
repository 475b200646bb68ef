"""Human-readable views of kope's results, for the terminal (rich)."""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from kope.evaluate.results import CaseResult, EvalResult, Finding, Integrity

_STATUS_STYLE = {"pass": "bold green", "fail": "bold red", "reject": "bold magenta", "error": "bold yellow"}


def _number(value: float | None, fmt: str = ".3g") -> str:
    return "-" if value is None else format(value, fmt)


def case_outcome(case: CaseResult) -> Text:
    if case.error is not None:
        return Text(f"error: {case.error.kind}", style="yellow")
    return Text("pass", style="green") if case.passed else Text("FAIL", style="red")


def eval_table(result: EvalResult) -> Table:
    table = Table(title=f"{result.candidate}  vs  {result.task}", title_justify="left", expand=False)
    table.add_column("case")
    table.add_column("shown", justify="center")
    table.add_column("result")
    table.add_column("max abs err", justify="right")
    table.add_column("max rel err", justify="right")
    table.add_column("mismatch", justify="right")
    table.add_column("first wrong at")
    table.add_column("time (ms)", justify="right")
    for case in result.cases:
        first = next((o.first_mismatch for o in case.outputs if o.first_mismatch is not None), None)
        mismatch = "-" if case.mismatch_fraction is None else f"{case.mismatch_fraction:.1%}"
        table.add_row(
            case.name,
            "yes" if case.visible else "hidden",
            case_outcome(case),
            _number(case.max_abs_err),
            _number(case.max_rel_err),
            mismatch,
            "-" if first is None else str(tuple(first)),
            _number(case.timing.candidate_ms if case.timing else None, ".1f"),
        )
    return table


def eval_summary(result: EvalResult) -> Group:
    parts: list[Text | Table | Panel] = [eval_table(result)]
    status = Text(f"{result.status.upper()}", style=_STATUS_STYLE[result.status])
    passed = sum(c.passed for c in result.cases)
    status.append(f"  {passed}/{len(result.cases)} cases pass ({result.cases_run} cases ran) on {result.device}")
    status.append(f", {result.seconds:.1f} s", style="dim")
    parts.append(status)
    if result.timing is not None:
        timing = result.timing
        line = f"timing ({timing.method}): candidate {timing.candidate_ms:.3f} ms"
        if timing.reference_ms is not None:
            line += f", reference {timing.reference_ms:.3f} ms"
        if timing.speedup is not None:
            line += f", speedup {timing.speedup:.2f}x"
        elif timing.method == "interpreter-wall":
            line += " (Triton interpreter on the CPU: not a speed measure)"
        parts.append(Text(line, style="dim"))
    if result.error is not None:
        body = result.error.message
        if result.error.traceback:
            body += "\n\n" + result.error.traceback
        parts.append(Panel(body, title=f"error: {result.error.kind}", border_style="yellow", expand=False))
    for finding in result.integrity.findings:
        where = f" (line {finding.line})" if finding.line else ""
        parts.append(Text(f"{finding.severity}: {finding.rule}{where}: {finding.message}", style="magenta"))
    return Group(*parts)


def print_eval(result: EvalResult, console: Console | None = None) -> None:
    (console or Console()).print(eval_summary(result))


def integrity_report(integrity: Integrity, source: str) -> Group:
    """Findings grouped by rule: the rule explained once in plain words, then each finding and its line."""
    from kope.integrity.rules import explain

    lines = source.splitlines()
    rejects = sum(f.severity == "reject" for f in integrity.findings)
    verdict = Text(
        f"integrity: {integrity.verdict.upper()}",
        style="bold green" if integrity.verdict == "clean" else "bold magenta",
    )
    verdict.append(f"  {rejects} reject, {len(integrity.findings) - rejects} warn")
    parts: list[Text | Panel] = [verdict]
    by_rule: dict[tuple[str, str], list[Finding]] = {}
    for finding in integrity.findings:
        by_rule.setdefault((finding.rule, finding.severity), []).append(finding)
    for (rule_id, severity), findings in by_rule.items():
        rule = explain(rule_id)
        body = Text()
        for finding in findings:
            where = f"line {finding.line}: " if finding.line else ""
            body.append(f"{where}{finding.message}\n", style="bold")
            if finding.line and 0 < finding.line <= len(lines):
                body.append(f"  {finding.line:>4} | {lines[finding.line - 1].strip()}\n", style="cyan")
        body.append(rule.explanation, style="dim")
        parts.append(
            Panel(
                body,
                title=f"{severity}: {rule_id} — {rule.title}",
                title_align="left",
                border_style="magenta" if severity == "reject" else "yellow",
                expand=False,
            )
        )
    return Group(*parts)
