"""Dynamic integrity rules: findings from what the monitor observed and from the evaluation itself.

Pure functions over validated data: they run in kope's own process, never in the candidate's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from kope.protocol import Observations, OutputPart, Provenance
from kope.protocol.policy import EPILOGUE_RATIO, MOVING, Policy, is_timer
from kope.protocol.results import CaseResult, Finding, Integrity, Timing

PEAK_BANDWIDTH_GBS: dict[str, float] = {
    "H200": 4800.0,
    "H100": 3350.0,
    "H800": 3350.0,
    "GH200": 4000.0,
    "B200": 8000.0,
    "A100": 2039.0,
    "A800": 2039.0,
    "L40S": 864.0,
    "L4": 300.0,
    "A10": 600.0,
    "V100": 900.0,
    "T4": 320.0,
    "MI300X": 5300.0,
    "MI250X": 3277.0,
}
DEFAULT_PEAK_BANDWIDTH_GBS = 8000.0
"""For an unknown GPU: generous, so the floor flags only the impossible."""


@dataclass(frozen=True)
class RunContext:
    """What the dynamic rules need to know about the task: the policy and what the reference does."""

    policy: Policy = "strict"
    reason: str = ""
    reference_ops: tuple[str, ...] | None = None
    reference_init_ops: frozenset[str] = frozenset()
    reference_inputs: frozenset[int] | None = None
    allow_torch: frozenset[str] = frozenset()
    judge_copies: bool = True
    """Whether copies of the task's own inputs, outputs that read no input and input coverage are judged on
    this case: the first case (the task's own sizes and inputs), or, for a low-signal task (the reference's
    output equals an input there), the case derived from a widened input distribution (see `Case.widened`).
    Copies of what PyTorch computed are judged on every case: such a copy is never honest. On a degenerate
    hidden case (length 1, positive inputs) an honest kernel can store exactly what it loaded (a ReLU of
    positive inputs) or read no input lane at all (a buggy mask), which the numeric check already fails."""


ObservationRule = Callable[[Observations, RunContext], Iterator[Finding]]
DYNAMIC_RULES: dict[str, ObservationRule] = {}


def _rule(name: str) -> Callable[[ObservationRule], ObservationRule]:
    def register(fn: ObservationRule) -> ObservationRule:
        DYNAMIC_RULES[name] = fn
        return fn

    return register


def _times(count: int) -> str:
    return f" ({count} times)" if count > 1 else ""


def _policy_words(ctx: RunContext) -> str:
    return f"policy {ctx.policy}: {ctx.reason}" if ctx.reason else f"policy {ctx.policy}"


@_rule("torch-compute")
def torch_compute(obs: Observations, ctx: RunContext) -> Iterator[Finding]:
    for call in obs.kernel_body_calls:
        yield Finding(
            rule="torch-compute",
            severity="reject",
            message=f"a kernel body called PyTorch ({call.name}{_times(call.count)}): the work ran on the host, not in "
            "the kernel",
            line=call.line,
        )
    prov = obs.provenance
    if prov is None:
        for call in obs.torch_calls:
            yield Finding(
                rule="torch-compute",
                severity="reject",
                message=f"forward computed with PyTorch: {call.name}{_times(call.count)}",
                line=call.line,
            )
        return
    if ctx.policy == "strict":
        for call in prov.torch_on_inputs:
            if call.name in ctx.allow_torch:
                continue
            yield Finding(
                rule="torch-compute",
                severity="reject",
                message=(
                    f"forward computed {call.name} with PyTorch on the task's inputs, before any kernel "
                    "of the candidate had computed them: PyTorch, not the kernel, did the task's work "
                    f"({_policy_words(ctx)})"
                ),
                line=call.line,
            )
        if prov.torch_elements > EPILOGUE_RATIO * max(prov.kernel_elements, 1):
            names = ", ".join(sorted({c.name for c in prov.epilogue})[:6])
            yield Finding(
                rule="torch-compute",
                severity="reject",
                message=(
                    f"PyTorch operations after the kernels ({names}) read and wrote {prov.torch_elements} "
                    "elements, more "
                    f"than {EPILOGUE_RATIO:g}x the {prov.kernel_elements} the kernels loaded and stored: this "
                    "is not a small "
                    f"epilogue, PyTorch does the work ({_policy_words(ctx)})"
                ),
            )
    for call in prov.extension_torch:
        yield Finding(
            rule="torch-compute",
            severity="reject" if ctx.policy == "strict" else "warn",
            message=f"a compiled extension called back into PyTorch ({call.name}{_times(call.count)}): that is "
            "PyTorch's work, not a kernel's",
            line=call.line,
        )
    reference_ops = set(ctx.reference_ops or ())
    for part in _parts(prov):
        precomputed = (set(part.init_ops) & reference_ops) - ctx.reference_init_ops
        if precomputed:
            yield Finding(
                rule="torch-compute",
                severity="reject",
                message=(
                    f"{part.path} holds values PyTorch computed in __init__ with {', '.join(sorted(precomputed))}, an "
                    "operator of the task itself: the answer was precomputed, not computed by the kernels from "
                    "the inputs"
                ),
            )
        elif part.torch_ops and not part.kernel and not part.copied and not part.host:
            ops = sorted(set(part.torch_ops) - ctx.allow_torch) or sorted(part.torch_ops)
            yield Finding(
                rule="torch-compute",
                severity="reject",
                message=(
                    f"{_share(part)}{part.path} comes from PyTorch alone ({', '.join(ops[:6])}): no kernel of "
                    "the candidate "
                    f"that computes is on its path ({_policy_words(ctx)})"
                ),
            )


def _parts(prov: Provenance) -> list[OutputPart]:
    return [p for p in prov.outputs if p.fraction > 0]


def _share(part: OutputPart) -> str:
    return "" if part.fraction >= 0.999 else f"{part.fraction:.0%} of "


@_rule("host-compute")
def host_compute(obs: Observations, ctx: RunContext) -> Iterator[Finding]:
    prov = obs.provenance
    if prov is None:
        return
    for event in prov.host_reads:
        if event.from_inputs:
            yield Finding(
                rule="host-compute",
                severity="reject",
                message=(
                    f"forward read tensor data derived from the task's inputs into Python ({event.what}): "
                    "values computed on the host are not the kernels' work"
                ),
                line=event.line,
            )
    large = any(e.elements > 1 for e in prov.host_built) or any(e.from_inputs for e in prov.host_reads)
    built = ", ".join(sorted({e.what for e in prov.host_built})) or "a host buffer"
    for part in _parts(prov):
        if part.host:
            yield Finding(
                rule="host-compute",
                severity="reject" if large else "warn",
                message=(
                    f"{_share(part)}{part.path} holds values built from Python data during forward ({built}): "
                    "they were computed on the host, not by the kernels"
                ),
            )
        elif part.fill and not part.constant and not part.kernel and not part.torch_ops and not part.copied:
            yield Finding(
                rule="host-compute",
                severity="reject",
                message=(
                    f"{_share(part)}{part.path} is a fresh allocation that no kernel and no PyTorch operation "
                    "wrote, yet it "
                    "holds data: it was filled from the host behind PyTorch's back (through a pointer)"
                ),
            )


@_rule("copy-kernel")
def copy_kernel(obs: Observations, ctx: RunContext) -> Iterator[Finding]:
    prov = obs.provenance
    if prov is None or ctx.reference_ops == ():
        return  # the reference itself only moves data: copying is the task
    kernels = ", ".join(prov.copy_kernels) or "the candidate's kernels"
    needed = ctx.reference_inputs or frozenset()
    # When the reference only moves data (a gather, a flip, a concatenation), a kernel's copy of input elements is
    # the task, unless PyTorch moved the data first (a rearrangement, an index tensor: PyTorch did the task).
    task_moves = frozenset(ctx.reference_ops or ()) if set(ctx.reference_ops or ()) <= MOVING else frozenset()
    for part in _parts(prov):
        if part.host or (part.constant and not part.inputs):
            continue  # host data is host-compute; a constant output is for the numeric check
        if not ctx.judge_copies and (part.kernel or not (part.torch_ops or part.init_ops or part.moves)):
            continue  # a later case: only copies of what PyTorch computed or moved (see RunContext.judge_copies)
        if part.kernel:
            missing = sorted(needed - set(part.inputs))
            if missing and ctx.reference_inputs is not None:
                which = ", ".join(str(i) for i in missing)
                yield Finding(
                    rule="copy-kernel",
                    severity="reject",
                    message=(
                        f"{_share(part)}{part.path} never depends on task input(s) {which}, which the reference reads: "
                        "the candidate's kernels did not compute it from the inputs"
                    ),
                )
            continue
        if part.copied:
            if task_moves and part.inputs and not (part.torch_ops or part.init_ops or part.moves):
                continue
            if task_moves and part.moves:
                origin = f"the task's input, which PyTorch moved first ({', '.join(part.moves[:6])})"
            elif part.torch_ops:
                origin = f"a result PyTorch computed ({', '.join(part.torch_ops[:6])})"
            elif part.init_ops:
                origin = f"a table PyTorch computed in __init__ ({', '.join(part.init_ops[:6])})"
            elif part.inputs:
                origin = "the task's input (the output equals an input, or a view of it)"
            else:
                origin = "constants or the model's parameters, without reading any task input"
            yield Finding(
                rule="copy-kernel",
                severity="reject",
                message=f"{_share(part)}{part.path} was only copied by {kernels} from {origin}: no kernel computed it",
            )
        elif not (part.torch_ops or part.unknown or part.fill or part.state or part.inputs or part.init_ops):
            yield Finding(
                rule="copy-kernel",
                severity="reject",
                message=(
                    f"{_share(part)}{part.path} was written by kernels that read no task input (only constants): "
                    "its values cannot depend on the inputs"
                ),
            )
        elif not part.torch_ops and not part.unknown and not part.fill and (part.state or part.inputs or part.init_ops):
            origin = "the task's inputs" if part.inputs else "the model's parameters or __init__ data"
            yield Finding(
                rule="copy-kernel",
                severity="reject",
                message=f"{_share(part)}{part.path} holds {origin} moved by PyTorch: no kernel of the candidate "
                "computed it",
            )


@_rule("kernel-not-launched")
def kernel_not_launched(obs: Observations, ctx: RunContext) -> Iterator[Finding]:
    if obs.launches_per_forward and min(obs.launches_per_forward) == 0:
        silent = sum(1 for n in obs.launches_per_forward if n == 0)
        yield Finding(
            rule="kernel-not-launched",
            severity="reject",
            message=f"{silent} of {len(obs.launches_per_forward)} forward calls launched none of the candidate's "
            "kernels",
        )
    if obs.ghost_unchanged:
        yield Finding(
            rule="kernel-not-launched",
            severity="reject",
            message="with every kernel launch turned into a no-op the output was unchanged: the kernels do no work",
        )
    for path in obs.unwritten_outputs:
        yield Finding(
            rule="kernel-not-launched",
            severity="reject",
            message=(
                f"{path} holds data the candidate's kernels did not write (it is neither memory they stored to, "
                "a copy of it, nor a fresh allocation)"
            ),
        )


@_rule("reference-access")
def reference_access(obs: Observations, ctx: RunContext) -> Iterator[Finding]:
    for call in obs.reference_calls:
        yield Finding(
            rule="reference-access",
            severity="reject",
            message=f"the candidate called {call.name} while it ran",
            line=call.line,
        )


@_rule("input-mutation")
def input_mutation(obs: Observations, ctx: RunContext) -> Iterator[Finding]:
    if obs.mutated_inputs:
        which = ", ".join(str(i) for i in obs.mutated_inputs)
        yield Finding(rule="input-mutation", severity="reject", message=f"forward changed input(s) {which}")


@_rule("output-aliasing")
def output_aliasing(obs: Observations, ctx: RunContext) -> Iterator[Finding]:
    for path in obs.aliased_outputs:
        yield Finding(rule="output-aliasing", severity="reject", message=f"{path} shares storage with an input")


@_rule("lazy-output")
def lazy_output(obs: Observations, ctx: RunContext) -> Iterator[Finding]:
    for kind in obs.output_types:
        parameter = kind.endswith("torch.nn.parameter.Parameter")
        yield Finding(
            rule="lazy-output",
            severity="warn" if parameter else "reject",
            message=f"an output is not a plain torch.Tensor ({kind})",
        )


@_rule("threads-processes")
def threads_processes(obs: Observations, ctx: RunContext) -> Iterator[Finding]:
    if obs.threads_alive > 0:
        yield Finding(
            rule="threads-processes", severity="reject", message=f"{obs.threads_alive} thread(s) alive after forward"
        )
    if obs.threads_in_launch > 0:
        yield Finding(
            rule="threads-processes",
            severity="reject",
            message=f"{obs.threads_in_launch} thread(s) of the candidate alive while its kernel ran: a thread can "
            "write memory the kernel reads where no hook sees it",
        )
    if obs.children_alive > 0:
        yield Finding(
            rule="threads-processes",
            severity="reject",
            message=f"{obs.children_alive} child process(es) alive after forward",
        )


@_rule("harness-tamper")
def harness_tamper(obs: Observations, ctx: RunContext) -> Iterator[Finding]:
    for name in obs.tampered:
        rule = "timer-tamper" if is_timer(name) else "harness-tamper"
        yield Finding(rule=rule, severity="reject", message=f"{name} was replaced while the candidate ran")
    for what in obs.instrumentation_lost:
        yield Finding(rule="harness-tamper", severity="reject", message=what)


@_rule("precision-downcast")
def precision_downcast(obs: Observations, ctx: RunContext) -> Iterator[Finding]:
    for cast in obs.downcasts:
        yield Finding(
            rule="precision-downcast",
            severity="warn",
            message=f"forward cast float32 data to half precision ({cast.name})",
            line=cast.line,
        )


def observation_findings(obs: Observations | None, ctx: RunContext | None = None) -> list[Finding]:
    if obs is None:
        return []
    ctx = ctx or RunContext()
    return [finding for rule in DYNAMIC_RULES.values() for finding in rule(obs, ctx)]


def cache_probe_finding(case: str) -> Finding:
    return Finding(
        rule="output-caching",
        severity="reject",
        message=(
            f"case {case}: called again on the same input storage refilled with other values, it returned an "
            "output that does not match them (a cached or stale result)"
        ),
    )


def sealed_channel_finding(case: str, reason: str) -> Finding:
    """The job's sealed results were not one intact message from kope's code (see kope.protocol.channel)."""
    return Finding(
        rule="harness-tamper",
        severity="reject",
        message=f"case {case}: the results that left the sandbox were not sealed by kope: {reason}",
    )


def size_one_copies(case: CaseResult, cases: Sequence[CaseResult]) -> list[Finding]:
    """`case`'s findings, with a `copy-kernel` rejection made a warning where the copy is the task's own arithmetic at
    this case's sizes: a size that is 1 here (a reduction over one channel is an identity: `logsumexp` of one value
    is that value) is larger on another case of the same run whose kernels computed the same outputs, right and
    without any copy finding. A candidate that copies only there gains nothing: every other case still judges it.
    A shown case is never excused (it is the one the user sees and times: a size of 1 in the task's own shape)."""
    ones = {k for k, v in case.overrides.items() if isinstance(v, int) and not isinstance(v, bool) and v == 1}
    copies = [f for f in case.findings if f.rule == "copy-kernel" and f.severity == "reject"]
    if case.visible or not ones or not copies:
        return list(case.findings)
    computed = next(
        (
            other.name
            for other in cases
            if other is not case
            and other.passed
            and not any(f.rule == "copy-kernel" for f in other.findings)
            and any(isinstance(other.overrides.get(k), int) and other.overrides[k] > 1 for k in ones)
        ),
        None,
    )
    if computed is None:
        return list(case.findings)
    sizes = ", ".join(f"{k} = 1" for k in sorted(ones))
    note = (
        f" (on case {case.name}, where {sizes}, the task's remaining work can be an identity; the kernels computed "
        f"it on case {computed}: a warning)"
    )
    return [
        f.model_copy(update={"severity": "warn", "message": f.message + note}) if f in copies else f
        for f in case.findings
    ]


def shape_specialization(cases: Sequence[CaseResult]) -> list[Finding]:
    visible_pass = [c for c in cases if c.visible and c.passed]
    hidden_fail = [c for c in cases if not c.visible and not c.passed and c.outside is None]
    if not visible_pass or not hidden_fail:
        return []
    names = ", ".join(c.name for c in hidden_fail[:4]) + (" ..." if len(hidden_fail) > 4 else "")
    return [
        Finding(
            rule="shape-specialization",
            severity="warn",
            message=f"passes the visible case but fails hidden case(s) {names}: it may be specialised to the shape it "
            "saw",
        )
    ]


def implausible_speedup(
    case: str,
    timing: Timing | None,
    *,
    bytes_moved: int,
    device_name: str | None,
    bound: float,
) -> list[Finding]:
    if timing is None or timing.method != "cuda-events":
        return []
    findings: list[Finding] = []
    if timing.speedup is not None and timing.speedup > bound:
        findings.append(
            Finding(
                rule="implausible-speedup",
                severity="warn",
                message=f"case {case}: speedup {timing.speedup:.1f}x exceeds the review bound of {bound:g}x",
            )
        )
    bandwidth = next(
        (gbs for name, gbs in PEAK_BANDWIDTH_GBS.items() if device_name and name in device_name),
        DEFAULT_PEAK_BANDWIDTH_GBS,
    )
    floor_ms = bytes_moved / (bandwidth * 1e9) * 1e3
    if bytes_moved and timing.candidate_ms < floor_ms:
        findings.append(
            Finding(
                rule="implausible-speedup",
                severity="warn",
                message=(
                    f"case {case}: {timing.candidate_ms * 1e3:.2f} us is below the {floor_ms * 1e3:.2f} us "
                    "needed to move "
                    f"{bytes_moved} bytes at {bandwidth:g} GB/s"
                ),
            )
        )
    return findings


def verdict(findings: Sequence[Finding], *, checked: bool = True) -> Integrity:
    unique: dict[tuple[str, int | None, str], Finding] = {}
    for finding in findings:
        unique.setdefault((finding.rule, finding.line, finding.message), finding)
    ordered = sorted(unique.values(), key=lambda f: (f.severity != "reject", f.line or 0, f.rule))
    rejected = any(f.severity == "reject" for f in ordered)
    return Integrity(verdict="reject" if rejected else "clean", findings=ordered, checked=checked)
