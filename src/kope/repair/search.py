"""Zero-token repair as a bounded best-first search over (operator, site) edits.

    proposers (recipes of the top hypotheses, repair operators) ──► candidates ranked by
    kope.repair.sites ──► cheap evaluation on the shown case(s), a batch at a time, in parallel
    sandboxed jobs (one trial, no gates; the reference is cached) ──► right on the shown case?
    ──► full coverage + integrity gates (the caller's `accept`) ──► repaired
        │ better than the start but not right                │ rejected / hidden failure
        ▼                                                    ▼
    a second edit on top of the best improving version      dropped, next candidate
    and of the first versions that changed the failure
    informatively (a case fixed, NaNs gone, an error
    tenfold smaller), even when the score did not improve;
    and the best paired with edits, lines apart, that
    changed the values without more wrong elements: two
    bugs, neither fix enough alone

A start right on the shown case(s) (its bug shows only on other sizes) is first evaluated on the cheapest of the
task's other cases; those it fails join the shown ones, so an edit must fix them before the full acceptance check,
and an edit that fixes one of them is kept as a base for a second edit.

Bounded by a number of evaluations and seconds. Every candidate tried is recorded (`Trial`) with
why it was ranked where it was and why it was kept or dropped: `kope debug --explain` prints them.
"""

from __future__ import annotations

import ast
import difflib
import functools
import heapq
import itertools
import re
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, PrivateAttr

from kope import syntax
from kope.bugs.edit import Program, changed_lines, edits
from kope.bugs.recipe import apply
from kope.cases.sizes import default_max_elements
from kope.cases.task import Case, Task
from kope.diagnose.report import Diagnosis
from kope.errors import ReferenceError_
from kope.evaluate import EvalOptions, Evaluator
from kope.hashing import content_hash
from kope.loop import Score, version_score
from kope.protocol.results import MACHINE_ERRORS, CaseResult, EvalResult
from kope.repair.shapes import SHAPE_PRIORITY, reshaped, shape_fix
from kope.repair.sites import Evidence, operator_penalty, priority


@dataclass(frozen=True)
class Candidate:
    operator: str
    label: str
    line: int
    description: str
    source: str
    priority: float = 0.0
    why: str = ""
    depth: int = 1
    parent: str = ""
    """The description of the edit this one was made on top of (depth 2)."""
    grounded: bool = False
    """Its cue is a contradiction the source shows (`Edit.grounded`): a rule broken on every input."""
    error: str = ""
    """The error its version stopped on, once evaluated (what edits that read the error read for its second edits)."""


class EditSource(Protocol):
    """Something that proposes a batch of edited versions of a source from a diagnosis (recipes, operators).

    Not the loops' `kope.agents.proposers.Proposer`, which gives one decision per step."""

    name: str

    def propose(
        self, source: str, diagnosis: Diagnosis | None, evidence: Evidence, reference: str
    ) -> list[Candidate]: ...


class RecipeEdits:
    """The knowledge base's recipes of the hypotheses (today's offline model): those of the first `max_hypotheses`
    ranked first, the later ones' by their hypothesis's weight alone."""

    name = "recipes"

    def __init__(self, max_hypotheses: int = 5) -> None:
        self.max_hypotheses = max_hypotheses

    def propose(self, source: str, diagnosis: Diagnosis | None, evidence: Evidence, reference: str) -> list[Candidate]:
        if diagnosis is None:
            return []
        found: list[Candidate] = []
        for rank, hypothesis in enumerate([*diagnosis.hypotheses, *diagnosis.later_hypotheses]):
            if not hypothesis.recipe:
                continue
            first = rank < self.max_hypotheses
            for edit in apply(hypothesis.recipe, source):
                line = _first_changed_line(source, edit)
                found.append(
                    Candidate(
                        operator=f"recipe:{hypothesis.recipe}",
                        label=hypothesis.pattern,
                        line=line,
                        description=f"the recipe {hypothesis.recipe} of hypothesis #{rank + 1}",
                        source=edit,
                        priority=priority(evidence, "recipe", hypothesis.pattern, line, recipe=first),
                        why=evidence.why("recipe", hypothesis.pattern, line),
                    )
                )
        return found


class OperatorEdits:
    """Every edit of the repair operators (kope.bugs.edit), ranked by the evidence."""

    name = "operators"

    def propose(self, source: str, diagnosis: Diagnosis | None, evidence: Evidence, reference: str) -> list[Candidate]:
        error = diagnosis.error or "" if diagnosis is not None else ""
        evaluation = diagnosis.evaluation if diagnosis is not None else None
        mode = evaluation.module_mode if evaluation is not None else "train"
        program = Program.parse(source, reference, scale=evidence.scale, error=error, module_mode=mode)
        if program is None:
            return []
        launches = _launch_lines(program)
        return [
            Candidate(
                operator=e.operator,
                label=e.label,
                line=e.line,
                description=e.description,
                source=e.source,
                priority=priority(
                    evidence,
                    e.operator,
                    e.label,
                    e.line,
                    launch_lines=launches,
                    cue=e.cue,
                    grounded=e.grounded,
                ),
                why=evidence.why(e.operator, e.label, e.line, e.cue),
                grounded=e.grounded,
            )
            for e in edits(program)
        ]


class ShapeEdits:
    """The shape fix the comparison measured (`kope.repair.shapes`), on the value `ModelNew.forward` returns:
    proposed only when the evaluation named one, and ranked first."""

    name = "shapes"

    def propose(self, source: str, diagnosis: Diagnosis | None, evidence: Evidence, reference: str) -> list[Candidate]:
        fix = shape_fix(diagnosis)
        made = reshaped(source, fix) if fix else None
        if fix is None or made is None:
            return []
        edited, line = made
        return [
            Candidate(
                operator="shape-fix",
                label="broadcast-error",
                line=line,
                description=f"return the output {fix}",
                source=edited,
                priority=SHAPE_PRIORITY,
                why="the comparison found every element right up to this change of the output's shape",
            )
        ]


def diversified(found: list[Candidate]) -> list[Candidate]:
    """Best first, each candidate's priority lowered for every better one of its operator
    (`kope.repair.sites.operator_penalty`: the operators take turns); ties: the operator with fewer candidates first
    (the more specific edit)."""
    family: dict[str, int] = {}
    for candidate in found:
        family[candidate.operator] = family.get(candidate.operator, 0) + 1
    ranked = sorted(found, key=lambda c: (-round(c.priority, 6), family[c.operator]))
    seen: dict[str, int] = {}
    out = []
    for candidate in ranked:
        k = seen.get(candidate.operator, 0)
        seen[candidate.operator] = k + 1
        out.append(replace(candidate, priority=candidate.priority - operator_penalty(k)))
    out.sort(key=lambda c: (-round(c.priority, 6), family[c.operator]))
    return out


class _Commuted(ast.NodeTransformer):
    """The two operands of a product or a sum in a fixed order (`a * b` and `b * a` read alike), and an augmented
    assignment as the assignment it is (`acc += v` as `acc = acc + v`)."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Mult | ast.Add) and ast.dump(node.right) < ast.dump(node.left):
            node.left, node.right = node.right, node.left
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        if not isinstance(node.target, ast.Name):
            return self.generic_visit(node)
        value = ast.BinOp(left=ast.Name(id=node.target.id, ctx=ast.Load()), op=node.op, right=node.value)
        assign = ast.Assign(targets=[node.target], value=value, lineno=node.lineno)
        return self.visit(assign)


def canonical_form(source: str) -> str:
    """A source's syntax tree with a product's or a sum's two operands in a fixed order and augmented assignments
    spelled out (so spacing, comments, redundant parentheses, `a * b` against `b * a` and `acc += v` against
    `acc = acc + v` do not count); its content hash when it does not parse."""
    try:
        return ast.dump(_Commuted().visit(syntax.parse(source)))
    except (SyntaxError, ValueError, RecursionError):
        return content_hash(source)


def change_key(base: str, edited: str) -> str:
    """What an edit changes, as a key two edits share when they make the same program: the lines that differ from
    `base` in their canonical form, with where they sit; "" when nothing changed. Cheap: only the changed lines are
    parsed (the whole source when they do not parse alone: a statement cut in the middle)."""
    if edited == base:
        return ""
    change = changed_lines(base, edited)
    try:
        mine, theirs = ast.parse(change.after), ast.parse(change.before)
    except (SyntaxError, ValueError, RecursionError):
        return canonical_form(edited)
    key = ast.dump(_Commuted().visit(mine))
    return "" if key == ast.dump(_Commuted().visit(theirs)) else f"{change.head}:{change.tail}:{key}"


def _launch_lines(program: Program) -> list[int]:
    lines: list[int] = []
    for node in ast.walk(program.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            lines += list(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def _first_changed_line(before: str, after: str) -> int:
    for number, (a, b) in enumerate(itertools.zip_longest(before.splitlines(), after.splitlines()), start=1):
        if a != b:
            return number
    return 0


class Trial(BaseModel):
    """One candidate the search evaluated, in the order it was tried."""

    order: int
    operator: str
    label: str
    line: int
    description: str
    depth: int
    priority: float
    why: str
    score: list[float]
    verdict: str
    """accepted | kept | dropped"""
    reason: str
    seconds: float


class SearchResult(BaseModel):
    trials: list[Trial]
    accepted: str | None = None
    best: str | None = None
    """The best version that improved on the start without being accepted (None if none did)."""
    best_score: list[float] | None = None
    best_description: str = ""
    start_score: list[float]
    evaluations: int
    acceptance_checks: int
    false_repairs: int = 0
    """Versions right on every derived case but wrong at the task's own sizes (or the largest that fit): not
    accepted."""
    own_size_case: str = ""
    """The case checked before acceptance at the task's own sizes (or the largest that fit); "" when none was."""
    refined: str = ""
    """The case (name and sizes) that joined the shown ones after a false repair (`SearchConfig.refine`); "" when none
    did."""
    _refined_case: Case | None = PrivateAttr(default=None)
    screen: list[str] = []
    """Other cases a start right on the shown case(s) failed, added to them for the search (`SearchConfig.screen`),
    and those a version right on them failed after its acceptance check (`SearchConfig.rescreen`)."""
    informative: list[str] = []
    """Single edits that changed the failure informatively without a better score, each tried as a base for a
    second edit (`SearchConfig.informative_bases`)."""
    slow: str | None = None
    """A version that ran out of the evaluation's time limit where the start stopped on an error before it (a
    compile error mended: the kernel runs now, too slowly for the cases), or made by a grounded edit of the start (a
    rule broken on every input mended: a loop that skipped most of its steps now takes them all); the round ends on
    it, for the caller to fit the cases to it (None where none did). It comes before the round's best."""
    candidates: int
    seconds: float
    stop_reason: str

    @property
    def refined_case(self) -> Case | None:
        """The case itself (`refined`): a later round from this round's best version is shown it from the start, so
        that a version right on the derived cases but wrong there is not taken for right again."""
        return self._refined_case

    def summary(self, limit: int = 6) -> str:
        """A few lines for a prompt: what the search tried and where it got."""
        lines = [f"kope's offline search tried {self.evaluations} small edit(s) ({self.stop_reason})."]
        if self.best is not None:
            lines.append(
                f"Best partial edit ({self.best_description}): score {self.start_score} -> {self.best_score} "
                "(error class, mismatch fraction, max relative error; lower is better). The kernel below includes it."
            )
        for trial in self.trials[:limit]:
            lines.append(
                f"- {trial.operator} at line {trial.line}: {trial.description} -> {trial.verdict} ({trial.reason})"
            )
        return "\n".join(lines)


Accept = Callable[[str], bool]
Refused = Callable[[str], Sequence[Case]]
"""The cases on which a version's failed acceptance check found wrong values (its caller ran that check)."""


@dataclass
class SearchConfig:
    max_evaluations: int = 100
    max_seconds: float = 120.0
    max_acceptance_checks: int = 8
    right_start_acceptance_checks: int = 24
    """The acceptance checks of a round whose start is already right on the shown case(s) (a bug that shows only on
    hidden cases): then every harmless edit is right there too, and only the full check tells them apart."""
    batch: int = 2
    """Candidates evaluated at once (parallel sandboxed jobs)."""
    second_edits: int = 12
    """Second edits tried on top of the best improving version (0: single edits only)."""
    proposers: list[EditSource] = field(default_factory=lambda: [ShapeEdits(), RecipeEdits(), OperatorEdits()])
    own_size_elements: int | None = None
    """Before acceptance, a version right on the shown cases is also checked at the task's own sizes when they
    hold at most this many elements, else on a case shrunk to this many (derived tasks whose own sizes are not
    a case already). None: 8 x the device's derived-case budget; 0: no such check."""
    own_size_seconds: float = 60.0
    """The time limit of that check; a check that runs out of it does not block the repair."""
    refine: bool = True
    """After the first version right on the shown cases but wrong at the own-size case (a false repair), the
    smallest case between the two that it fails (the largest shrunk case at 2 and 4 x the derived cases' budget,
    else the own-size case) joins the shown cases: the rest of the search can then tell its versions apart on the
    bug the derived cases miss, instead of spending acceptance checks on each."""
    informative_bases: int = 3
    """Single edits kept as bases for second edits though their score is no better, because they changed the
    failure informatively (a failing case now right, fewer NaN elements): two independent bugs, neither fix enough
    alone to move the score. 0: only the best improving version gets second edits."""
    informative_edits: int = 8
    """Second edits tried on top of each such base."""
    informative_bonus: float = 0.5
    """Their rank over a first edit of the same priority (second edits on the best improving version get 1.0)."""
    leading_edits: int = 4
    """While a round has neither an improving nor an informative single edit, the second edits tried on top of the
    single edit that left the fewest wrong elements, fewer than the start (at most `leading_bases` such edits a round,
    each better than the last): the first of two bugs whose fix alone moves the score by less than a tenth (a
    missing conv bias added where the epilogue's order is also wrong: 81.6% of elements wrong where the start had
    88.4%). 0: none."""
    leading_bases: int = 2
    pairs: int = 8
    """Versions made of the best improving single edit and a single edit that changed the values without more wrong
    elements, on lines apart (`_combined`): the second of two bugs, whose fix alone moves no score, paired with the
    first's. 0: none."""
    screen: int = 2
    """A start right on the shown case(s): the most of the task's other cases it fails (the cheapest of
    `screen_probe`, evaluated once) that join the shown ones. 0: none."""
    screen_probe: int = 4
    defer_ratio: float = 2.0
    """Slow kernels: the shown cases with more than this many times the elements of the second-smallest shown case
    the start fails are deferred. A version is evaluated on the others first, and on every shown case only where it
    is right there or scores better there than every version already evaluated on all of them (the start at first);
    a version that does not is given the start's results on the deferred cases, so that its score counts the same
    cases as the start's. The search then does not pay for the
    largest cases on every version. 0: every version on every shown case."""
    defer_seconds: float = 0.5
    """Deferred cases are for slow kernels: a start whose slowest shown case took at least this long per forward.
    Such a start wrong on the shown cases, none of them small enough to defer the others, is first evaluated on the
    task's cheapest other cases (`screen_probe`), and up to `screen` it fails join the shown ones."""
    rescreen: int = 2
    """A version right on the shown case(s) that fails the acceptance check: the times (per round) the task's other
    cases it fails (as the screen finds them) join the shown ones, so that versions made on top of it by edits that
    change nothing there are not each given an acceptance check of their own. 0: never."""
    widen: int = 3
    """A round whose candidates run out with no version better than its start widens up to this many times: each
    version that got second edits gets its next ones (twice as many as before, each time), and the single edits that
    changed the failure informatively past `informative_bases` become bases too. 0: the round ends there (exhausted)."""


@dataclass
class Bases:
    """What a round learnt of its start's edits, kept for the next round from the same start (one that ran out of its
    own budget goes on there, its evaluated versions skipped): the versions it gave second edits, the informative
    single edits past the cap, and how often it widened. Without it, those rounds could not widen (`widen`): the
    single edits that made the bases are not evaluated again, so the bases are not found again."""

    start: str = ""
    """The content hash of the start they belong to; another start begins afresh."""
    expansions: list[tuple[Candidate, int, float, str]] = field(default_factory=list)
    """(version, how many second edits it got, their bonus, what it is)."""
    reserve: list[Candidate] = field(default_factory=list)
    widened: int = 0

    def of(self, source: str) -> Bases:
        """Itself, emptied first where it belonged to another start."""
        key = content_hash(source)
        if self.start != key:
            self.start, self.expansions, self.reserve, self.widened = key, [], [], 0
        return self


class RepairSearch:
    """The bounded best-first search; `run` returns what was tried and the accepted version, if any."""

    name = "search"

    def __init__(self, evaluator: Evaluator, config: SearchConfig | None = None) -> None:
        self.evaluator = evaluator
        self.config = config or SearchConfig()

    def candidates(self, source: str, diagnosis: Diagnosis | None, reference: str) -> list[Candidate]:
        """Every proposer's candidates, deduplicated by their syntax (`change_key`: `(x * beta)` from one operator
        and `beta * x` from another are evaluated once, as the better-ranked of the two), best first."""
        evidence = Evidence.of(diagnosis)
        found: dict[str, Candidate] = {}
        for proposer in self.config.proposers:
            for candidate in proposer.propose(source, diagnosis, evidence, reference):
                key = change_key(source, candidate.source)
                if key and (key not in found or candidate.priority > found[key].priority):
                    found[key] = candidate
        return diversified(list(found.values()))

    def own_size_case(self, task: Task, options: EvalOptions) -> Case | None:
        """The case that can show a bug the derived cases miss: the task's own sizes where they fit the budget
        (`SearchConfig.own_size_elements`), else the largest shrunk case that does; None when the task declares
        its cases, its own sizes are a derived case already, or no case can be made."""
        budget = self.config.own_size_elements
        budget = 8 * default_max_elements(options.device) if budget is None else budget
        if budget <= 0 or task.defines_get_cases:
            return None
        try:
            derivation = self.evaluator.derivation(task, options)
            if any(c.kind == "original" for c in derivation.kept) or derivation.original_numel is None:
                return None
            if max(derivation.original_numel, derivation.original_output_numel or 0) <= budget:
                return Case(name="own sizes", overrides={}, visible=False)
        except Exception:  # a task whose sizes cannot be derived again: no extra check
            return None
        return self.evaluator.larger_case(task, options, budget, "largest shrunk")

    def _refinement(
        self, task: Task, source: str, own: Case, quick: EvalOptions, options: EvalOptions, scratch: Path
    ) -> tuple[Case, int, EvalResult | None]:
        """The smallest case a false repair (`source`, wrong at `own`) is found wrong on, of the largest shrunk
        cases at 2 and 4 x the derived cases' budget, else `own`; the evaluations that took; the version's result
        on that shrunk case (None for `own`, checked before)."""
        budget = options.max_elements or default_max_elements(options.device)
        tried = 0
        for factor in (2, 4):
            case = self.evaluator.larger_case(task, options, factor * budget, f"shrunk x{factor}")
            if case is None or case.key() == own.key():
                continue
            tried += 1
            checked = self._checked_at(task, source, case, quick, scratch)
            if checked is not None and version_score(checked)[0] != 0:  # wrong there, not a check that cannot tell
                return case, tried, checked
        return own, tried, None

    def run(  # noqa: C901 - the search's bounded rounds, with its budget stops where they are checked
        self,
        task: Task,
        source: str,
        diagnosis: Diagnosis | None,
        visible: Sequence[Case],
        accept: Accept,
        *,
        scratch: Path,
        options: EvalOptions | None = None,
        start_score: Score | None = None,
        tried: set[str] | None = None,
        refused: Refused | None = None,
        bases: Bases | None = None,
    ) -> SearchResult:
        """Search from `source`; `tried` (content hashes, updated in place) are versions not to evaluate again;
        `refused`: the cases a version's failed acceptance check found wrong (`SearchConfig.rescreen`; without it,
        an evaluation of the version on the task's cheapest other cases looks for them); `bases` (updated in place):
        what an earlier round from the same start kept for widening."""
        began = time.monotonic()
        config = self.config
        quick = replace(
            options or EvalOptions(), trials=1, integrity=False, timing=False, bounds_check=False, trace=None
        )
        evaluation = diagnosis.evaluation if diagnosis is not None else None
        base: Score = start_score or (version_score(evaluation) if evaluation is not None else (2, 1.0, 0.0))
        seen = tried if tried is not None else set()
        seen.add(content_hash(source))
        scratch.mkdir(parents=True, exist_ok=True)
        shown = list(visible)
        extra = 0
        screen: list[str] = []
        start_cases = {c.name: c for c in evaluation.cases} if evaluation is not None else {}
        if base[0] == 0 and config.screen > 0:
            found = self._screen(task, source, shown, quick, options or EvalOptions(), scratch)
            if found is not None:
                extra += 1
                result, failing = found
                start_cases = {c.name: c for c in result.cases}
                shown += failing
                screen = [c.name for c in failing]
                # the start as it scores on what the search is shown: a hidden case the caller added may be wrong
                base = _score_on(result, shown)
        elif (
            base[0] > 0
            and config.screen > 0
            and config.defer_ratio > 0
            and _slow(start_cases, config.defer_seconds)
            and not _deferred(shown, start_cases, config.defer_ratio)
        ):
            # a slow kernel wrong on large shown cases: the cheapest other cases it fails join them where that lets the
            # large ones be deferred (`defer_ratio`), so that versions are told apart on the small ones first
            found = self._screen(task, source, shown, quick, options or EvalOptions(), scratch)
            extra += found is not None
            if found is not None and found[0].status == "fail":
                result, failing = found
                ran = {c.name: c for c in result.cases}
                deferred = _deferred([*shown, *failing], ran, config.defer_ratio)
                small = [c for c in failing if c.name not in deferred]
                if deferred and small:
                    shown += small
                    screen = [c.name for c in small]
                rescored = _score_on(result, shown)
                if rescored[0] >= base[0]:  # as below: the start scored on every shown case
                    base, start_cases = rescored, ran
        if base[0] > 0 and start_cases and any(c.name not in start_cases for c in shown):
            # shown cases the start's score did not count (hidden ones a full check found it wrong on, or raising
            # there): it is scored on all of them once, as every version is, so that a version that mends one of
            # those cases ranks above it (not where its class comes out better: the gates do not run in the search)
            result = self._evaluated(task, source, "start.py", quick, shown, scratch)
            extra += 1
            if _tells(result) and version_score(result)[0] >= base[0]:
                base, start_cases = version_score(result), {c.name: c for c in result.cases}
        counter = itertools.count()
        queue: list[tuple[float, int, Candidate]] = []
        first = self.candidates(source, diagnosis, task.source)
        for candidate in first:
            heapq.heappush(queue, (-candidate.priority, next(counter), candidate))
        generated = len(first)
        trials: list[Trial] = []
        best: tuple[Score, Candidate] | None = None
        first_best: tuple[Score, Candidate] | None = None
        """The best improving single edit: the one paired with `active` and `informative` edits (without one, the
        first informative edit is)."""
        expanded: set[str] = set()
        informative: list[Candidate] = []
        active: list[Candidate] = []
        """Single edits that changed the values without more wrong elements: to pair with the best."""
        paired: set[tuple[str, str]] = set()
        leading: tuple[Score, Candidate] | None = None
        """The active single edit with the fewest wrong elements, fewer than the start's."""
        led = 0
        checks = 0
        max_checks = config.right_start_acceptance_checks if base[0] == 0 else config.max_acceptance_checks
        own: Case | bool | None = False
        """Not looked for yet (False), none (None), or the case at the task's own sizes."""
        false_repairs = 0
        refined: Case | None = None
        rescreens = 0
        unchecked = False
        slow: str | None = None
        accepted: str | None = None
        stop = "exhausted"
        carried = (bases or Bases()).of(source)
        expansions, reserve = carried.expansions, carried.reserve
        """The versions given second edits, and the informative single edits past `informative_bases` (for `widen`)."""
        if carried.widened:  # an earlier round widened and ran out of its budget: its second edits not yet evaluated
            generated += self._widened(expansions, carried.widened, diagnosis, task, queue, counter, seen)
        bars: dict[frozenset[str], Score] = {}
        """Per set of first cases (`defer_ratio`): the best score there of the start and the versions evaluated on every
        shown case. A version evaluated on the deferred cases too must beat it (or be right on the first ones)."""
        with ThreadPoolExecutor(max_workers=max(1, config.batch), thread_name_prefix="kope-search") as pool:
            while True:
                if not queue:
                    if best is not None or carried.widened >= config.widen:
                        break  # a better version: the next round searches from it, all its edits first
                    carried.widened += 1
                    expansions += [(p, config.informative_edits, config.informative_bonus, _CHANGED) for p in reserve]
                    reserve.clear()
                    generated += self._widened(expansions, carried.widened, diagnosis, task, queue, counter, seen)
                    if not queue:
                        break
                if slow is not None and accepted is None:
                    stop = "slow version"  # the caller fits the cases to it: every version made from it is as slow
                    break
                if len(trials) >= config.max_evaluations:
                    stop = "evaluation budget"
                    break
                if time.monotonic() - began > config.max_seconds:
                    stop = "time budget"
                    break
                batch: list[Candidate] = []
                while queue and len(batch) < min(config.batch, config.max_evaluations - len(trials)):
                    _, _, candidate = heapq.heappop(queue)
                    key = content_hash(candidate.source)
                    if key in seen:
                        continue
                    seen.add(key)
                    batch.append(candidate)
                if not batch:
                    continue  # every candidate left was evaluated already: the round widens or ends
                paths = [scratch / f"variant_{len(trials) + i}.py" for i in range(len(batch))]
                for path, candidate in zip(paths, batch, strict=True):
                    path.write_text(candidate.source)
                t0 = time.monotonic()
                deferred = (
                    _deferred(shown, start_cases, config.defer_ratio)
                    if _slow(start_cases, config.defer_seconds)
                    else set()
                )
                first_cases = frozenset(c.name for c in shown if c.name not in deferred)
                if deferred and first_cases not in bars:
                    bars[first_cases] = version_score(
                        EvalResult.model_construct(status="fail", cases=[start_cases[n] for n in sorted(first_cases)])
                    )
                screened = functools.partial(
                    self._screened,
                    task,
                    shown=list(shown),
                    deferred=deferred,
                    start_cases=dict(start_cases),
                    quick=quick,
                    bar=bars.get(first_cases, (0, 0.0, 0.0)),
                )
                outcomes = list(pool.map(screened, paths))
                results = [result for result, _ in outcomes]
                for _, first_score in outcomes:
                    if first_score is not None and first_score < bars[first_cases]:
                        bars[first_cases] = first_score
                each = (time.monotonic() - t0) / len(batch)
                for path in paths:
                    path.unlink(missing_ok=True)
                for candidate, result in zip(batch, results, strict=True):
                    if (
                        slow is None
                        and _timed_out(result)
                        and evaluation is not None
                        and _slow_mend(evaluation, candidate)
                    ):
                        slow = candidate.source
                    score = version_score(result)
                    joined_now = False
                    verdict, reason = "dropped", _describe(result, score, base)
                    if score[0] == 0:
                        if checks < max_checks:
                            checks += 1
                            if own is False:
                                own = self.own_size_case(task, options or EvalOptions())
                            wrong_at, used, wrong = None, 0, None
                            if isinstance(own, Case):
                                wrong_at, used, wrong = self._wrong_at_own(
                                    task, candidate.source, own, quick, options or EvalOptions(), scratch
                                )
                            extra += max(0, used - 1)  # the own-size check itself is the acceptance check's
                            if wrong_at is not None:
                                false_repairs += 1
                                reason = (
                                    f"right on the shown case(s), wrong at the {wrong_at.name} ({wrong_at.key()}):"
                                    " not accepted"
                                )
                                score = (1, 0.0, 0.0)
                                if config.refine and refined is None:
                                    if wrong_at is own:
                                        refined, tried_more, smaller = self._refinement(
                                            task, candidate.source, own, quick, options or EvalOptions(), scratch
                                        )
                                        wrong = smaller or wrong
                                        extra += tried_more
                                    else:  # a stand-in for the own sizes, found wrong already
                                        refined = wrong_at
                                    shown.append(refined)
                                    reason += f"; the search goes on with the {refined.name} case shown too"
                                    scored = _with_checked(result, wrong)
                                    if scored is not None and _better(scored, base):
                                        score = scored  # as the versions made from it are scored (the rescreen's)
                                        joined_now = True
                            elif accept(candidate.source):
                                verdict, reason = "accepted", "right on every case and clean under the gates"
                                accepted = candidate.source
                            else:
                                reason = "right on the shown case(s), but fails hidden cases or the gates"
                                score = (1, 0.0, 0.0)
                                if rescreens < config.rescreen:
                                    rescreens += 1
                                    failing, rebased, used = self._shown_more(
                                        task, source, candidate.source, shown, refused, quick, options, scratch
                                    )
                                    extra += used
                                    if failing:
                                        shown.extend(failing)
                                        screen += [c.name for c in failing]
                                        listed = ", ".join(c.name for c in failing)
                                        reason += f"; the search goes on with the case(s) it fails shown too ({listed})"
                                        stopped = self._evaluated(
                                            task, candidate.source, "kept.py", quick, shown, scratch
                                        )
                                        extra += 1
                                        if stopped.error is not None:  # its second edits read where it stops now
                                            candidate = replace(candidate, error=stopped.error.message)
                                    if rebased is not None:
                                        base = version_score(rebased)
                                        start_cases = {c.name: c for c in rebased.cases}
                                        if (
                                            failing
                                            and _tells(stopped)
                                            and _better(real := version_score(stopped), base)
                                        ):
                                            # scored as later versions are (on the cases it fails too): a version
                                            # made from it that mends one of them ranks above it, and the next round
                                            # starts from that one
                                            score = real
                                            joined_now = True
                        else:
                            # unchecked, not refused: a later round (fresh checks) may evaluate it again
                            reason = "right on the shown case(s); no acceptance check left (the round ends)"
                            score = (1, 0.0, 0.0)
                            seen.discard(content_hash(candidate.source))
                            unchecked = True
                    if accepted is None and _better(score, base):
                        # a version scored on cases that joined just now leads the versions scored before them,
                        # unless one right on the cases then shown does: theirs is no score on the same cases
                        if best is None or score < best[0] or (joined_now and best[0][0] >= 2):
                            best = (score, candidate)
                        if candidate.depth == 1 and (
                            first_best is None or score < first_best[0] or (joined_now and first_best[0][0] >= 2)
                        ):
                            first_best = (score, candidate)
                        verdict = "kept"
                        reason = reason if score[0] == 1 else f"better than the start ({reason})"
                    elif (
                        accepted is None
                        and candidate.depth == 1
                        and len(informative) < config.informative_bases
                        and (change := _changed(start_cases, evaluation, result, candidate))
                    ):
                        informative.append(replace(candidate, error=result.error.message if result.error else ""))
                        verdict = "kept"
                        reason = f"{reason}; {change}: a base for a second edit"
                    elif candidate.depth == 1 and _active(score, base, result, start_cases):
                        active.append(candidate)
                        if score[1] < base[1] and (leading is None or score < leading[0]):
                            leading = (score, candidate)
                    if (
                        verdict == "dropped"
                        and accepted is None
                        and candidate.depth == 1
                        and config.widen
                        and len(informative) >= config.informative_bases
                        and len(reserve) < config.informative_bases
                        and _changed(start_cases, evaluation, result, candidate)
                    ):
                        reserve.append(replace(candidate, error=result.error.message if result.error else ""))
                    trials.append(
                        Trial(
                            order=len(trials) + 1,
                            operator=candidate.operator,
                            label=candidate.label,
                            line=candidate.line,
                            description=candidate.description,
                            depth=candidate.depth,
                            priority=round(candidate.priority, 3),
                            why=candidate.why,
                            score=list(score),
                            verdict=verdict,
                            reason=reason,
                            seconds=round(each, 3),
                        )
                    )
                    if accepted is not None:
                        break
                if accepted is not None:
                    stop = "accepted"
                    break
                if unchecked:
                    stop = "acceptance checks"
                    break
                if (
                    best is not None
                    and config.second_edits
                    and best[1].depth == 1
                    and content_hash(best[1].source) not in expanded
                ):
                    expanded.add(content_hash(best[1].source))
                    expansions.append((best[1], config.second_edits, 1.0, "a kept edit"))
                    generated += self._second_edits(
                        best[1], diagnosis, task, queue, counter, config.second_edits, 1.0, "a kept edit"
                    )
                anchor = first_best[1] if first_best is not None else next(iter(informative), None)
                if anchor is not None and len(paired) < config.pairs:
                    kept = anchor
                    for other in [c for c in (*informative, *active) if c is not kept]:
                        pair = (content_hash(kept.source), content_hash(other.source))
                        made = _combined(source, kept.source, other.source, apart=_NEAR)
                        if pair in paired or made is None or len(paired) >= config.pairs:
                            continue
                        paired.add(pair)
                        generated += 1
                        child = replace(
                            other,
                            source=made,
                            depth=2,
                            parent=kept.description,
                            description=f"{kept.description}, then {other.description}",
                            priority=other.priority + 1.0,
                            why=f"paired with a kept edit: alone it changed the values, no more wrong; {other.why}",
                        )
                        heapq.heappush(queue, (-child.priority, next(counter), child))
                for parent in informative:
                    if content_hash(parent.source) in expanded:
                        continue
                    expanded.add(content_hash(parent.source))
                    expansions.append((parent, config.informative_edits, config.informative_bonus, _CHANGED))
                    generated += self._second_edits(
                        parent,
                        diagnosis,
                        task,
                        queue,
                        counter,
                        config.informative_edits,
                        config.informative_bonus,
                        _CHANGED,
                    )
                if (
                    best is None
                    and not informative
                    and leading is not None
                    and led < config.leading_bases
                    and content_hash(leading[1].source) not in expanded
                ):
                    led += 1
                    expanded.add(content_hash(leading[1].source))
                    expansions.append((leading[1], config.leading_edits, 0.0, "the leading edit"))
                    generated += self._second_edits(
                        leading[1], diagnosis, task, queue, counter, config.leading_edits, 0.0, "the leading edit"
                    )
        outcome = SearchResult(
            trials=trials,
            accepted=accepted,
            best=best[1].source if best is not None and accepted is None and slow is None else None,
            best_score=list(best[0]) if best is not None and accepted is None and slow is None else None,
            best_description=best[1].description if best is not None and accepted is None and slow is None else "",
            start_score=list(base),
            evaluations=len(trials) + extra,
            acceptance_checks=checks,
            false_repairs=false_repairs,
            own_size_case=own.key() if isinstance(own, Case) else "",
            refined=f"{refined.name} {refined.key()}" if refined is not None else "",
            screen=screen,
            informative=[c.description for c in informative],
            slow=slow if accepted is None else None,
            candidates=generated,
            seconds=round(time.monotonic() - began, 3),
            stop_reason=stop,
        )
        outcome._refined_case = refined
        return outcome

    def _widened(
        self,
        expansions: list[tuple[Candidate, int, float, str]],
        level: int,
        diagnosis: Diagnosis | None,
        task: Task,
        queue: list[tuple[float, int, Candidate]],
        counter: Iterator[int],
        seen: set[str],
    ) -> int:
        """Queue each expanded version's second edits at a widening `level` (2**level times as many as it first got),
        those not evaluated yet."""
        return sum(
            self._second_edits(parent, diagnosis, task, queue, counter, limit * 2**level, bonus, what, skip=seen)
            for parent, limit, bonus, what in expansions
        )

    def _second_edits(
        self,
        parent: Candidate,
        diagnosis: Diagnosis | None,
        task: Task,
        queue: list[tuple[float, int, Candidate]],
        counter: Iterator[int],
        limit: int,
        bonus: float,
        base: str,
        skip: set[str] | None = None,
    ) -> int:
        """Queue the best `limit` edits of `parent`'s source as second edits, `bonus` over their own rank: taking turns,
        the best of all and the best away from the parent's own lines (a second bug independent of the first is
        often elsewhere, while the evidence still points at the first's lines). `skip`: the versions evaluated
        already (a widened round's next edits of a parent: those it got before are not queued again)."""
        if parent.error and diagnosis is not None:  # the version stops elsewhere now: its edits read that error
            diagnosis = diagnosis.model_copy(update={"error": parent.error})
        ranked = self.candidates(parent.source, diagnosis, task.source)
        away = [c for c in ranked if abs(c.line - parent.line) > _NEAR]
        children: list[Candidate] = []
        for child in itertools.chain.from_iterable(itertools.zip_longest(ranked, away)):
            if child is not None and child not in children and len(children) < limit:
                children.append(child)
        if skip is not None:
            children = [c for c in children if content_hash(c.source) not in skip]
        for child in children:
            child = replace(
                child,
                depth=2,
                parent=parent.description,
                description=f"{parent.description}, then {child.description}",
                priority=child.priority + bonus,
                why=f"on top of {base}; {child.why}",
            )
            heapq.heappush(queue, (-child.priority, next(counter), child))
        return len(children)

    def _shown_more(
        self,
        task: Task,
        start: str,
        source: str,
        shown: list[Case],
        refused: Refused | None,
        quick: EvalOptions,
        options: EvalOptions | None,
        scratch: Path,
    ) -> tuple[list[Case], EvalResult | None, int]:
        """After `source` (right on `shown`) failed its acceptance check: the cases it fails that are to join the shown
        ones (`_failing`), the start evaluated on all of them (what later versions are scored against; None when it
        does not run or no case joins), and the evaluations that took."""
        failing = self._failing(task, source, shown, refused, quick, options or EvalOptions(), scratch)
        used = 0 if refused is not None else 1
        if not failing:
            return [], None, used
        result = self._evaluated(task, start, "start.py", quick, [*shown, *failing], scratch)
        return failing, result if _tells(result) else None, used + 1

    def _failing(
        self,
        task: Task,
        source: str,
        shown: list[Case],
        refused: Refused | None,
        quick: EvalOptions,
        options: EvalOptions,
        scratch: Path,
    ) -> list[Case]:
        """The cases (at most `screen`, not shown yet) a version right on the shown ones failed at its acceptance
        check: as its caller knows them, else as an evaluation on the task's cheapest other cases finds them."""
        known = {c.key() for c in shown}
        if refused is not None:
            return [replace(c, visible=False) for c in refused(source) if c.key() not in known][: self.config.screen]
        found = self._screen(task, source, shown, quick, options, scratch)
        return found[1] if found is not None else []

    def _screen(
        self, task: Task, source: str, shown: list[Case], quick: EvalOptions, options: EvalOptions, scratch: Path
    ) -> tuple[EvalResult, list[Case]] | None:
        """A start right on `shown`, evaluated once on them and the cheapest `screen_probe` of the task's other
        cases: that result, and the other cases it fails (at most `screen`, cheapest first) to search on too.
        None when there are no other cases, or the evaluation says nothing of the values."""
        try:
            cases = self.evaluator.cases(task, options=options)
        except Exception:  # a task whose cases cannot be made again: no screen
            return None
        sizes: dict[str, int] = {}
        if not task.defines_get_cases:
            try:
                sizes = {c.name: c.numel or 0 for c in self.evaluator.derivation(task, options).kept}
            except Exception:  # no sizes: the other cases in their order
                sizes = {}
        known = {c.key() for c in shown}
        others = sorted(
            (c for c in cases if not c.visible and c.key() not in known), key=lambda c: sizes.get(c.name, 1 << 62)
        )[: self.config.screen_probe]
        if not others:
            return None
        result = self._evaluated(task, source, "screen.py", quick, [*shown, *others], scratch)
        if not _tells(result):
            return None
        names = {c.name for c in others}
        failing = {r.name for r in result.cases if r.name in names and r.shows_bug}
        return result, [replace(c, visible=False) for c in others if c.name in failing][: self.config.screen]

    def _screened(
        self,
        task: Task,
        path: Path,
        shown: list[Case],
        deferred: set[str],
        start_cases: dict[str, CaseResult],
        quick: EvalOptions,
        bar: Score,
    ) -> tuple[EvalResult, Score | None]:
        """A version on the shown cases, the deferred ones (`SearchConfig.defer_ratio`) only where it is right on the
        others or scores better there than `bar`; else the start's results stand in for them. With the version's
        score on the first cases where it was evaluated on every one (else None)."""
        if not deferred:
            return self.evaluator.evaluate(task, path, options=quick, cases=list(shown)), None
        first = [c for c in shown if c.name not in deferred]
        result = self.evaluator.evaluate(task, path, options=quick, cases=first)
        if result.status == "error":
            return result, None
        score = version_score(result)
        if score[0] == 0 or score < bar:
            return self.evaluator.evaluate(task, path, options=quick, cases=shown), score
        ran = {c.name: c for c in result.cases}
        return result.model_copy(update={"cases": [ran.get(c.name) or start_cases[c.name] for c in shown]}), None

    def _evaluated(
        self, task: Task, source: str, name: str, options: EvalOptions, cases: list[Case], scratch: Path
    ) -> EvalResult:
        """One evaluation of a version on `cases`, from a file of the scratch folder removed after it."""
        path = scratch / name
        path.write_text(source)
        try:
            return self.evaluator.evaluate(task, path, options=options, cases=cases)
        finally:
            path.unlink(missing_ok=True)

    def right_at_own_size(self, task: Task, source: str, options: EvalOptions, scratch: Path) -> bool:
        """The check before acceptance of a version that did not come through a round's own (`own_size_case`): False
        only where it is wrong at the task's own sizes (or the largest case that fits)."""
        own = self.own_size_case(task, options)
        if own is None:
            return True
        scratch.mkdir(parents=True, exist_ok=True)
        quick = replace(options, trials=1, integrity=False, timing=False, bounds_check=False, trace=None)
        return self._wrong_at_own(task, source, own, quick, options, scratch)[0] is None

    def _wrong_at_own(
        self, task: Task, source: str, own: Case, quick: EvalOptions, options: EvalOptions, scratch: Path
    ) -> tuple[Case | None, int, EvalResult | None]:
        """The case of the own-size check a version is found wrong on, None where it is right or no check can tell;
        the evaluations that took; the version's result on the case that decided. Where the own-size case cannot
        tell (a slow kernel runs out of the check's time limit there), the largest shrunk cases at 4, then 2 x the
        derived cases' budget stand in for it, the first that tells deciding: a check that times out must not let a
        version wrong at larger sizes through."""
        checked, tried = self._checked_at(task, source, own, quick, scratch), 1
        if checked is not None:
            return (None if version_score(checked)[0] == 0 else own), tried, checked
        budget = options.max_elements or default_max_elements(options.device)
        for factor in (4, 2):
            case = self.evaluator.larger_case(task, options, factor * budget, f"shrunk x{factor}", shrunk=True)
            if case is None or case.key() == own.key():
                continue
            checked, tried = self._checked_at(task, source, case, quick, scratch), tried + 1
            if checked is not None:
                return (None if version_score(checked)[0] == 0 else case), tried, checked
        return None, tried, None

    def _right_at(self, task: Task, source: str, case: Case, quick: EvalOptions, scratch: Path) -> bool:
        """Whether a version is right on `case`; True when it cannot tell (`_checked_at`)."""
        checked = self._checked_at(task, source, case, quick, scratch)
        return checked is None or version_score(checked)[0] == 0

    def _checked_at(self, task: Task, source: str, case: Case, quick: EvalOptions, scratch: Path) -> EvalResult | None:
        """A version's result on `case`; None when the check cannot tell (it ran out of time or memory, or the
        reference itself cannot run there: a model whose weights at the task's own sizes exceed the job's memory)."""
        limited = replace(quick, timeout_s=min(quick.timeout_s, self.config.own_size_seconds), interpreter_retries=0)
        try:
            result = self._evaluated(task, source, "own_size.py", limited, [case], scratch)
        except ReferenceError_:
            return None
        if result.status == "error" and result.error is not None and result.error.kind in MACHINE_ERRORS:
            return None  # says nothing of the values: the repair is not blocked
        return result


def _with_checked(result: EvalResult, checked: EvalResult | None) -> Score | None:
    """A version's score on the shown cases (`result`) with the case a single-case check found it wrong on
    (`checked`); None where that check raised (no values to count)."""
    if checked is None or checked.status != "fail" or not checked.cases:
        return None
    return version_score(result.model_copy(update={"cases": [*result.cases, *checked.cases]}))


_NEAR = 3
"""Lines either side of an edit's that count as its own (a second edit there likely fixes the same bug again)."""


def _score_on(result: EvalResult, cases: list[Case]) -> Score:
    """A version's score counting only its results on `cases` (an evaluation that ran more)."""
    names = {c.name for c in cases}
    return version_score(result.model_copy(update={"cases": [c for c in result.cases if c.name in names]}))


def _deferred(shown: list[Case], start_cases: dict[str, CaseResult], ratio: float) -> set[str]:
    """The shown cases with more than `ratio` times the elements of the second-smallest one the start fails (the
    smallest, where it fails one); none where the start's result on some shown case is unknown or it fails none."""
    results = [start_cases[c.name] for c in shown if c.name in start_cases]
    failing = sorted(_elements(r) for r in results if not r.passed and r.outside is None)
    if ratio <= 0 or not failing or len(results) < len(shown):
        return set()
    bound = ratio * failing[min(1, len(failing) - 1)]
    return {r.name for r in results if _elements(r) > bound}


def _slow(start_cases: dict[str, CaseResult], seconds: float) -> bool:
    """Whether the start's slowest known case took at least `seconds` per forward (`SearchConfig.defer_seconds`)."""
    return max((c.forward_s or 0.0 for c in start_cases.values()), default=0.0) >= seconds


def _elements(case: CaseResult) -> float:
    """A case's output elements per trial (`numel` counts every trial's)."""
    return (case.numel or 0) / max(1, case.trials or 1)


def _tells(result: EvalResult) -> bool:
    """Whether an evaluation says something of the version on its cases: it ran them, or stopped on an error the
    version made there (not one of `MACHINE_ERRORS`, which say nothing of its values)."""
    return result.status != "error" or (
        result.error is not None and result.error.kind not in MACHINE_ERRORS and bool(result.cases)
    )


def _changed(
    start: dict[str, CaseResult], evaluation: EvalResult | None, result: EvalResult, candidate: Candidate
) -> str:
    """How a single edit changed the start's failure, making it a base for second edits (`_informative_change`, or
    for a grounded edit of a version that does not run, `_error_moved`); "" when it did not."""
    return _informative_change(start, result) or _error_moved(evaluation, result, candidate.grounded)


def _constant(case: CaseResult) -> int:
    """How many of the case's outputs hold one value where the reference's vary (`OutputDiff.constant`)."""
    return sum(o.constant is not None for o in case.outputs)


def _nans(case: CaseResult) -> int:
    return sum(o.nan_mismatch for o in case.outputs)


def _informative_change(start: dict[str, CaseResult], result: EvalResult) -> str:
    """How a version's failure differs from the start's in a way that says an edit fixed something, even when
    the score did not improve: a case the start failed is right, a case's NaN or infinite elements went (at least
    half of them), or a case's worst relative error fell tenfold; "" when none (or the version does not run)."""
    if result.status == "error" or not start:
        return ""
    for case in result.cases:
        before = start.get(case.name)
        if before is None or case.error is not None:
            continue
        if not before.passed and case.passed:
            return f"the case {case.name} is right now"
        if before.error is not None or (before.passed and not case.passed) or _constant(case) > _constant(before):
            continue  # an output that came to hold one value: its error shrank because it ignores its inputs
        if _nans(before) > 0 and 2 * _nans(case) <= _nans(before):
            return f"the NaN/infinite elements of the case {case.name}: {_nans(before)} -> {_nans(case)}"
        was, now = before.max_rel_err or 0.0, case.max_rel_err
        if (
            now is not None
            and was > 0.0
            and now * _ERROR_DROP <= was
            and _nans(case) <= _nans(before)
            and (case.mismatch_fraction or 0.0) <= (before.mismatch_fraction or 0.0)
        ):
            return f"the error of the case {case.name}: {was:.3g} -> {now:.3g}"
        was, now = _mean_error(before), _mean_error(case)
        if (
            was > 0.0
            and now * _MEAN_DROP <= was
            and _nans(case) <= _nans(before)
            and (case.mismatch_fraction or 0.0) <= (before.mismatch_fraction or 0.0)
        ):
            return f"the mean error of the case {case.name}: {was:.3g} -> {now:.3g}"
    return ""


_CHANGED = "an edit that changed the failure"

_MEAN_DROP = 1.5
"""A case's mean absolute error down by a third: every element closer, the sign of one bug of two fixed (the worst
relative error may not move: a clamp or a tiny reference value holds it, and a final clamp saturates the error of
the other bug, which then moves nothing until this one is fixed)."""


def _mean_error(case: CaseResult) -> float:
    """The case's mean absolute error over its outputs (0.0 where none was compared)."""
    return sum(o.mean_abs_err for o in case.outputs) / len(case.outputs) if case.outputs else 0.0


_LINE = re.compile(r" \(candidate line \d+: .*\)$", re.S)
"""The candidate's line an error names (kope.evaluate.inside.worker), which an edit that adds lines shifts."""


def _error_moved(start: EvalResult | None, result: EvalResult, grounded: bool) -> str:
    """A grounded edit of a version that does not run, after which it still does not run but stops elsewhere: the
    rule it mended was one of several the kernel breaks (an import, then a constant), so it is a base for the next
    edit; "" otherwise (an edit that is not grounded may move an error by breaking something else)."""
    if not grounded or start is None or start.error is None or result.error is None:
        return ""
    if _LINE.sub("", result.error.message) == _LINE.sub("", start.error.message):
        return ""  # the same error, its line shifted by the edit
    return f"its error moved: {result.error.message[:160]}"


def _active(score: Score, base: Score, result: EvalResult, start: dict[str, CaseResult]) -> bool:
    """A single edit that changed the values (its score is not the start's) without making things worse: as many or
    fewer wrong elements, no more NaNs, no error."""
    if result.status == "error" or score == base or score[0] != base[0] or score[1] > base[1]:
        return False
    return all(_nans(c) <= _nans(start[c.name]) for c in result.cases if c.name in start)


def _combined(base: str, one: str, two: str, *, apart: int = 0) -> str | None:
    """`base` with both edits' changed lines, when every change of one is more than `apart` lines from every change
    of the other; None when they are not."""
    old = base.splitlines(keepends=True)

    def hunks(edited: str) -> list[tuple[int, int, list[str]]]:
        new = edited.splitlines(keepends=True)
        codes = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
        return [(i1, i2, new[j1:j2]) for tag, i1, i2, j1, j2 in codes if tag != "equal"]

    first, second = hunks(one), hunks(two)
    if not first or not second:
        return None
    for a1, a2, _ in first:
        for b1, b2, _ in second:
            if not (b1 - a2 > apart or a1 - b2 > apart):
                return None
    out: list[str] = []
    at = 0
    for i1, i2, lines in sorted(first + second, key=lambda h: (h[0], h[1])):
        out += old[at:i1] + lines
        at = i2
    return "".join(out + old[at:])


_ERROR_DROP = 10.0
"""How much smaller a case's worst relative error must get, at no more wrong or NaN elements, to count as an edit
that fixed something (a missing bias added where the shown case was right within its tolerance)."""


def _better(score: Score, base: Score) -> bool:
    """A real improvement: a better class (error -> wrong -> right on the shown cases), or at least a tenth
    fewer wrong elements; a change at the level of noise does not count."""
    if score[0] != base[0]:
        return score[0] < base[0]
    return score[1] < 0.9 * base[1]


def _timed_out(result: EvalResult) -> bool:
    """Whether an evaluation stopped on its time limit."""
    return result.error is not None and result.error.kind == "timeout"


def _slow_mend(start: EvalResult, candidate: Candidate) -> bool:
    """Whether a version that ran out of its time limit is a mend too slow for the cases, not a wrong one: the start
    stopped on an error before any case ran (a compile error mended), or the version is a grounded edit of the start
    (a rule broken on every input mended, which may do more work: every step of a loop that skipped most)."""
    return _stopped_early(start) or (candidate.grounded and candidate.depth == 1)


def _stopped_early(result: EvalResult) -> bool:
    """Whether a version stopped on an error before any case ran to its end (a compile error), not on its time."""
    return result.status == "error" and not _timed_out(result) and not any(c.passed for c in result.cases)


def _describe(result: EvalResult, score: Score, base: Score) -> str:
    if result.status == "error" and result.error is not None:
        return f"error ({result.error.kind})"
    if score[0] == 0:
        return "right on the shown case(s)"
    return f"mismatch {score[1]:.1%}, max rel err {score[2]:.3g}" + ("" if _better(score, base) else " (no better)")
