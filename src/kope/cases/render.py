"""Terminal views of a task's cases and of how kope derived them (`kope cases`)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group
from rich.table import Table
from rich.text import Text

from kope.cases.derivation import Derivation
from kope.cases.task import Case


def _sizes(overrides: object) -> str:
    if not isinstance(overrides, dict) or not overrides:
        return "(the task's own)"
    return ", ".join(f"{k}={'x'.join(map(str, v)) if isinstance(v, list | tuple) else v}" for k, v in overrides.items())


def cases_table(cases: Sequence[Case], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("case", "shown", "sizes", "inputs"):
        table.add_column(column)
    for case in cases:
        table.add_row(
            case.name,
            "yes" if case.visible else "hidden",
            _sizes(dict(case.overrides)),
            case.inputs.label() if case.inputs else "-",
        )
    return table


def derivation_report(derivation: Derivation) -> Group:
    parameters = Table(title="module-level size parameters", title_justify="left")
    for column in ("name", "value", "varied", "why"):
        parameters.add_column(column)
    for parameter in derivation.parameters:
        value = parameter.value
        parameters.add_row(
            parameter.name,
            "x".join(map(str, value)) if isinstance(value, list) else str(value),
            Text("yes", style="green") if parameter.sizes_inputs else Text("no", style="dim"),
            parameter.reason,
        )
    candidates = Table(title=f"derived cases (budget {derivation.max_elements} elements)", title_justify="left")
    for column in ("case", "kept", "shown", "sizes", "inputs", "elements", "why"):
        candidates.add_column(column)
    for case in derivation.candidates:
        elements = None if case.numel is None else max(case.numel, case.output_numel or 0)
        candidates.add_row(
            case.name,
            Text("kept", style="green") if case.kept else Text("dropped", style="red"),
            "yes" if case.visible else ("hidden" if case.kept else ""),
            _sizes(case.overrides),
            case.inputs.label() if case.inputs else "-",
            "-" if elements is None else str(elements),
            case.reason,
        )
    summary = Text(
        f"{len(derivation.kept)} cases kept of {len(derivation.candidates)} considered; shapes probed on "
        f"{'the meta device' if derivation.probe == 'meta' else 'small sizes' if derivation.probe == 'small' else '-'}"
        f", {derivation.jobs} sandboxed jobs, {derivation.seconds:.1f} s",
    )
    parts: list[Table | Text] = [parameters, candidates, summary]
    if derivation.low_signal is not None:
        extra = ", ".join(derivation.low_signal.extra_cases) or "none kept"
        parts.append(
            Text(
                f"low-signal task: {derivation.low_signal.reason}; copies and constants are judged on the widened "
                f"cases ({extra})",
                style="yellow",
            )
        )
    for note in derivation.notes:
        parts.append(Text(f"note: {note}", style="yellow"))
    if derivation.too_large is not None:
        parts.append(Text(f"too large: {derivation.too_large.text()}; kope eval refuses to run it", style="bold red"))
    elif derivation.error:
        parts.append(
            Text(f"no case derived: {derivation.error}; the task's own sizes are its one case", style="yellow")
        )
    return Group(*parts)
