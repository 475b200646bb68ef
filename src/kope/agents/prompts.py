"""Build the messages of a repair step from templates, within the token budget.

A model is shown what a user of the kernel sees, never what judges it: the task as `shown_task`
renders it (its interface, with the sizes of the case the model is shown), not its `get_cases()`,
whose hidden sizes a model could otherwise special-case.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

import jinja2

from kope import syntax
from kope.cases.task import Case, Task
from kope.context.budget import Packed, Section, pack
from kope.diagnose.findings import Findings
from kope.diagnose.report import Diagnosis
from kope.models.base import Message
from kope.models.tokens import count_messages


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("kope.agents", "prompts"),
        autoescape=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )


def render(template: str, **values: object) -> str:
    return _environment().get_template(template).render(**values)


CASES_FUNCTION = "get_cases"


def shown_task(task: Task, case: Case | None = None) -> str:
    """The task's source as a model may see it: without `get_cases()` (nor the module-level names only it
    uses, nor the comment right above it), with its module-level sizes set to `case` (the visible one)."""
    overrides = {name: value for name, value in (case.overrides if case else {}).items() if name in task.assigned_names}
    source = task.source_with(overrides)
    for name, value in overrides.items():  # `dim = (1000)`, as the override wrote it, reads `dim = 1000`
        source = re.sub(rf"^({re.escape(name)}\s*=\s*)\(({re.escape(repr(value))})\)$", r"\1\2", source, flags=re.M)
    try:
        tree = syntax.parse(source)
    except SyntaxError:
        return source
    cut: list[tuple[int, int]] = []
    inside: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == CASES_FUNCTION:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            cut.append((first, node.end_lineno or node.lineno))
            inside |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    if not cut:
        return source
    elsewhere = {
        n.id
        for node in tree.body
        if not (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == CASES_FUNCTION)
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            if bound and bound <= inside and not bound & elsewhere:
                cut.append((node.lineno, node.end_lineno or node.lineno))
    lines = source.splitlines(keepends=True)
    dropped: set[int] = set()
    for first, last in cut:
        dropped.update(range(first, last + 1))
        above = first - 1
        while above >= 1 and lines[above - 1].lstrip().startswith("#"):
            dropped.add(above)
            above -= 1
    kept = "".join(line for number, line in enumerate(lines, 1) if number not in dropped)
    return re.sub(r"\n{4,}", "\n\n\n", kept).rstrip() + "\n"


@dataclass
class StepContext:
    """What the model may be told at one step."""

    reference: str
    kernel: str
    diagnosis: Diagnosis | None = None
    history: list[str] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    instrumentation: list[str] = field(default_factory=list)
    experience: list[Section] = field(default_factory=list)
    """Optional sections from the experience store (kope.memory.packer), packed in the same budget."""
    findings: Findings | None = None
    """kope's findings (kope.diagnose.findings): the wrong value region, the reference's formulas, several programs
    writing one element. None leaves the section out (the ablation)."""


def merged(included: Sequence[tuple[Section, str]]) -> list[dict[str, str]]:
    """Template sections: consecutive sections with the same title share one heading."""
    rendered: list[dict[str, str]] = []
    for section, text in included:
        if rendered and rendered[-1]["title"] == section.title:
            rendered[-1]["text"] += "\n" + text
        else:
            rendered.append({"title": section.title, "text": text})
    return rendered


def _hypotheses(diagnosis: Diagnosis, count: int, with_evidence: bool) -> str:
    lines: list[str] = []
    for rank, hypothesis in enumerate(diagnosis.hypotheses[:count], start=1):
        lines.append(f"{rank}. {hypothesis.pattern}: {hypothesis.title} (score {hypothesis.score:.2f})")
        if with_evidence:
            lines += [f"   - {item}" for item in hypothesis.evidence[:4]]
        if hypothesis.fix:
            lines.append("   Fix: " + " ".join(hypothesis.fix.split()))
    return "\n".join(lines)


def sections(context: StepContext) -> list[Section]:
    items = [
        Section(
            "reference",
            "The PyTorch reference (the task)",
            (f"```python\n{context.reference.rstrip()}\n```",),
            priority=100,
            required=True,
        ),
        Section(
            "kernel", "The current kernel", (f"```python\n{context.kernel.rstrip()}\n```",), priority=100, required=True
        ),
    ]
    if context.feedback:
        items.append(
            Section("feedback", "About your last reply", ("\n".join(context.feedback),), priority=90, required=True)
        )
    if context.instrumentation:
        items.append(
            Section(
                "instrumentation",
                "Instrumentation you asked for",
                ("\n\n".join(context.instrumentation), "\n\n".join(t[:1500] for t in context.instrumentation), ""),
                priority=80,
            )
        )
    if context.findings:
        items.append(
            Section(
                "findings",
                "Findings (kope's analysis of the reference and the kernel)",
                (context.findings.text(), context.findings.text(formulas=False), ""),
                priority=75,
            )
        )
    diagnosis = context.diagnosis
    if diagnosis is not None:
        summary = diagnosis.summary()
        short = "\n".join(summary.splitlines()[:8])
        items.append(
            Section(
                "diagnosis",
                "What is wrong (measured on the cases you are shown)",
                (summary, short),
                priority=70,
                required=False,
            )
        )
        if diagnosis.hypotheses:
            items.append(
                Section(
                    "hypotheses",
                    "Likely bugs, from kope's knowledge base",
                    (
                        _hypotheses(diagnosis, 3, True),
                        _hypotheses(diagnosis, 3, False),
                        _hypotheses(diagnosis, 1, False),
                        "",
                    ),
                    priority=60,
                )
            )
    if context.history:
        items.append(
            Section(
                "history",
                "Earlier attempts",
                ("\n".join(context.history[-6:]), "\n".join(context.history[-2:]), ""),
                priority=40,
            )
        )
    items += context.experience
    return items


def build(context: StepContext, budget: int) -> tuple[list[Message], Packed]:
    """The system and user messages for one step, never over `budget` tokens (exact count)."""
    system = Message(role="system", content=render("system.j2"))

    def messages_for(included: Sequence[tuple[Section, str]]) -> list[Message]:
        body = render("repair.j2", sections=merged(included))
        return [system, Message(role="user", content=body.strip() + "\n")]

    packed = pack(sections(context), budget, lambda included: count_messages(messages_for(included)))
    return messages_for(packed.sections), packed
