"""Human-readable views of kope's results, for the terminal (rich).

Text a candidate influences (error messages, tracebacks, findings, kernel names) goes in as `Text`,
never as markup, and is printed by a `KopeConsole`, which takes control characters out of it
(`kope.text.sanitize`; the longer messages are sanitised before rich sees them, as rich drops a
bell or a carriage return by itself, which would leave the rest of an escape sequence to swallow).
"""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from kope.console import KopeConsole
from kope.diagnose.report import Diagnosis
from kope.evaluate import judging
from kope.protocol.results import CaseResult, EvalResult, Finding, Integrity
from kope.protocol.sandbox import SandboxReport
from kope.text import sanitize

_STATUS_STYLE = {"pass": "bold green", "fail": "bold red", "reject": "bold magenta", "error": "bold yellow"}


def _number(value: float | None, fmt: str = ".3g") -> str:
    return "-" if value is None else format(value, fmt)


def case_outcome(case: CaseResult) -> Text:
    if case.outside is not None:
        return Text("not judged", style="dim")
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


def autotune_summary(result: EvalResult) -> str:
    """Which configs of each autotuned kernel ran on the CPU interpreter, over every case."""
    kernels: dict[str, dict[int, str]] = {}
    totals: dict[str, int] = {}
    for case in result.cases:
        for run in case.autotune:
            kernels.setdefault(run.kernel, {})[run.index] = run.config
            totals[run.kernel] = run.configs
    lines = [
        f"autotune {kernel}: {len(ran)} of {totals[kernel]} configs ran (correctness only; timing belongs to "
        f"the GPU): " + "; ".join(f"#{i} {ran[i]}" for i in sorted(ran))
        for kernel, ran in kernels.items()
    ]
    return "\n".join(lines)


def eval_summary(result: EvalResult) -> Group:
    parts: list[Text | Table | Panel] = [eval_table(result)]
    status = Text(f"{result.status.upper()}", style=_STATUS_STYLE[result.status])
    passed = sum(c.passed for c in result.cases)
    refused = [c for c in result.cases if c.outside is not None]
    judged = len(result.cases) - len(refused)
    status.append(f"  {passed}/{judged} cases pass ({result.cases_run} cases ran) on {result.device}")
    status.append(f", {result.seconds:.1f} s", style="dim")
    parts.append(status)
    if refused:
        parts.append(
            Text(
                sanitize(
                    f"not judged: {len(refused)} case(s) of other sizes ({', '.join(c.name for c in refused)}) that "
                    f"the candidate's own precondition refuses ({refused[0].outside})"
                ),
                style="dim",
            )
        )
    if result.emulation is not None:
        parts.append(Text(emulation_line(result), style="cyan"))
    parts += judgement_lines(result)
    if result.status == "fail" and result.integrity.verdict == "reject":
        parts.append(Text("wrong values; the gates also object (findings below): a near miss, not a cheat"))
    configs = autotune_summary(result)
    if configs:
        parts.append(Text(configs, style="dim"))
    if result.low_signal is not None:
        extra = ", ".join(result.low_signal.extra_cases) or "none ran"
        parts.append(
            Text(
                f"low-signal task: {result.low_signal.reason}; copies judged on the widened cases ({extra})",
                style="yellow",
            )
        )
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
        if result.error.hint:
            body += "\n\nhint: " + result.error.hint
        parts.append(
            Panel(Text(sanitize(body)), title=f"error: {result.error.kind}", border_style="yellow", expand=False)
        )
    for finding in result.integrity.findings:
        where = f" (line {finding.line})" if finding.line else ""
        parts.append(Text(sanitize(f"{finding.severity}: {finding.rule}{where}: {finding.message}"), style="magenta"))
    if result.sandbox is not None and result.sandbox.weaker_than_namespaces:
        parts.append(Text(sandbox_warning(result.sandbox), style="bold yellow"))
    return Group(*parts)


def emulation_line(result: EvalResult) -> str:
    """What a verdict made under CUDA emulation says of it (empty without emulation)."""
    if result.emulation is None:
        return ""
    used = result.emulation.used
    asked = f"; the candidate used {', '.join(used)}" if used else ""
    return f"{result.emulation.note} (no GPU here: the kernels ran in Triton's interpreter as on a GPU{asked})"


def judgement_lines(result: EvalResult) -> list[Text]:
    """The tolerance profile, where the profiles disagree, shape notes and platform limits."""
    lines = [Text(tolerance_line(result), style="dim")]
    if result.profile_disagreement is not None:
        lines.append(Text(disagreement_line(result), style="bold yellow"))
    for note in dict.fromkeys(n for case in result.cases for n in case.notes):
        lines.append(Text(f"note: {note}", style="yellow"))
    lines += [Text(limit, style="bold cyan") for limit in result.limits]
    if result.unlaunched:
        lines.append(Text(judging.unlaunched_line(result.unlaunched), style="bold yellow"))
    if result.smaller_cases:
        lines.append(Text(f"note: {result.smaller_cases}", style="yellow"))
    return lines


def tolerance_line(result: EvalResult) -> str:
    reason = f" ({result.tolerance_reason})" if result.tolerance_reason else ""
    mode = "; modules in eval mode (--module-mode eval)" if result.module_mode == "eval" else ""
    return f"tolerance profile: {result.tolerance_profile}{reason}{mode}"


def disagreement_line(result: EvalResult) -> str:
    d = result.profile_disagreement
    assert d is not None
    return (
        f"profiles disagree: strict {d.strict}, kernelbench {d.kernelbench} "
        f"(max abs err {d.max_abs_err:.3g}, max rel err {d.max_rel_err:.3g} on {', '.join(d.cases)})"
    )


def sandbox_warning(report: SandboxReport) -> str:
    """One line for a run that was less protected than the namespace sandbox."""
    weaker = {"landlock": "Landlock and seccomp only (no namespaces)", "process": "process isolation only"}
    text = f"warning: the candidate ran with {weaker.get(report.level, report.level)}"
    if report.missing:
        text += ": " + "; ".join(report.missing)
    return text + " (see `kope doctor`)"


def print_eval(result: EvalResult, console: Console | None = None) -> None:
    (console or KopeConsole()).print(eval_summary(result))


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
    if integrity.policy:
        parts.append(Text(f"policy: {integrity.policy} ({integrity.policy_reason})", style="dim"))
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


def diagnosis_report(diagnosis: Diagnosis) -> Group:
    """Hypotheses first, then the evidence: failing cases with their signatures, probes, bounds."""
    parts: list[Text | Table | Panel] = []
    head = Text(f"diagnosis of {diagnosis.candidate}", style="bold")
    head.append(f"  ({diagnosis.status}, {diagnosis.seconds:.1f} s)", style="dim")
    parts.append(head)
    if diagnosis.evaluation is not None:
        parts += judgement_lines(diagnosis.evaluation)
    if diagnosis.status == "pass":
        parts.append(Text("the candidate passes every case: nothing to diagnose", style="green"))
        return Group(*parts)
    if diagnosis.error:
        parts.append(Text(f"error: {diagnosis.error}", style="yellow"))
    hypotheses = Table(title="hypotheses", title_justify="left")
    for column in ("#", "pattern", "score", "evidence"):
        hypotheses.add_column(column, justify="right" if column in ("#", "score") else "left")
    for rank, hypothesis in enumerate(diagnosis.hypotheses, start=1):
        evidence = Text("\n".join(hypothesis.evidence[:5]))
        hypotheses.add_row(str(rank), hypothesis.pattern, f"{hypothesis.score:.2f}", evidence)
    parts.append(
        hypotheses if diagnosis.hypotheses else Text("no pattern of the knowledge base matches", style="yellow")
    )
    if diagnosis.hypotheses and diagnosis.hypotheses[0].fix:
        top = diagnosis.hypotheses[0]
        parts.append(Panel(top.fix, title=f"fix for {top.pattern}", title_align="left", expand=False))
    cases = Table(title="cases", title_justify="left")
    for column in ("case", "shown", "result", "wrong", "structure"):
        cases.add_column(column)
    for case in diagnosis.cases:
        signature = case.signature
        result = "pass" if case.passed else (f"error: {case.error_kind}" if case.error_kind else "FAIL")
        wrong = f"{signature.mismatch_count}/{signature.numel}" if signature else "-"
        structure = ", ".join(signature.structure) if signature else ""
        if signature and signature.scale is not None:
            structure += f" (c = {signature.scale:.4g})"
        cases.add_row(case.name, "yes" if case.visible else "hidden", Text(result), wrong, structure)
    parts.append(cases)
    for probe in diagnosis.probes:
        style = "green" if probe.passed else ("red" if probe.passed is False else "dim")
        parts.append(Text(f"probe {probe.name}: {probe.detail}", style=style))
    for event in diagnosis.bounds:
        parts.append(
            Text(
                f"out of bounds: {event.kind} in {event.kernel} line {event.line}, program {tuple(event.pid)}: "
                f"{event.lanes} lanes, up to {event.elements_out} elements {event.nearest} ({event.count}x)",
                style="magenta",
            )
        )
    return Group(*parts)
