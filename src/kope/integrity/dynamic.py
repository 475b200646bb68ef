"""Dynamic integrity rules: findings from what the monitor observed and from the evaluation itself.

Pure functions over validated data: they run in kope's own process, never in the candidate's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from kope.evaluate.protocol import Observations
from kope.evaluate.results import CaseResult, Finding, Integrity, Timing
from kope.integrity.policy import is_timer

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

ObservationRule = Callable[[Observations], Iterator[Finding]]
DYNAMIC_RULES: dict[str, ObservationRule] = {}


def _rule(name: str) -> Callable[[ObservationRule], ObservationRule]:
    def register(fn: ObservationRule) -> ObservationRule:
        DYNAMIC_RULES[name] = fn
        return fn

    return register


@_rule("torch-compute")
def torch_compute(obs: Observations) -> Iterator[Finding]:
    for call in obs.torch_calls:
        times = f" ({call.count} times)" if call.count > 1 else ""
        yield Finding(
            rule="torch-compute",
            severity="reject",
            message=f"forward computed with PyTorch: {call.name}{times}",
            line=call.line,
        )


@_rule("kernel-not-launched")
def kernel_not_launched(obs: Observations) -> Iterator[Finding]:
    if obs.launches_per_forward and min(obs.launches_per_forward) == 0:
        silent = sum(1 for n in obs.launches_per_forward if n == 0)
        yield Finding(
            rule="kernel-not-launched",
            severity="reject",
            message=f"{silent} of {len(obs.launches_per_forward)} forward calls launched none of the candidate's kernels",
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
def reference_access(obs: Observations) -> Iterator[Finding]:
    for call in obs.reference_calls:
        yield Finding(
            rule="reference-access",
            severity="reject",
            message=f"the candidate called {call.name} while it ran",
            line=call.line,
        )


@_rule("output-caching")
def output_caching(obs: Observations) -> Iterator[Finding]:
    if obs.cache_probe_error:
        yield Finding(
            rule="output-caching",
            severity="reject",
            message=f"called again on the same input storage with new contents, forward raised: {obs.cache_probe_error}",
        )


@_rule("input-mutation")
def input_mutation(obs: Observations) -> Iterator[Finding]:
    if obs.mutated_inputs:
        which = ", ".join(str(i) for i in obs.mutated_inputs)
        yield Finding(rule="input-mutation", severity="reject", message=f"forward changed input(s) {which}")


@_rule("output-aliasing")
def output_aliasing(obs: Observations) -> Iterator[Finding]:
    for path in obs.aliased_outputs:
        yield Finding(rule="output-aliasing", severity="reject", message=f"{path} shares storage with an input")


@_rule("lazy-output")
def lazy_output(obs: Observations) -> Iterator[Finding]:
    for kind in obs.output_types:
        parameter = kind.endswith("torch.nn.parameter.Parameter")
        yield Finding(
            rule="lazy-output",
            severity="warn" if parameter else "reject",
            message=f"an output is not a plain torch.Tensor ({kind})",
        )


@_rule("threads-processes")
def threads_processes(obs: Observations) -> Iterator[Finding]:
    if obs.threads_alive > 0:
        yield Finding(
            rule="threads-processes", severity="reject", message=f"{obs.threads_alive} thread(s) alive after forward"
        )
    if obs.children_alive > 0:
        yield Finding(
            rule="threads-processes",
            severity="reject",
            message=f"{obs.children_alive} child process(es) alive after forward",
        )


@_rule("harness-tamper")
def harness_tamper(obs: Observations) -> Iterator[Finding]:
    for name in obs.tampered:
        rule = "timer-tamper" if is_timer(name) else "harness-tamper"
        yield Finding(rule=rule, severity="reject", message=f"{name} was replaced while the candidate ran")
    for what in obs.instrumentation_lost:
        yield Finding(rule="harness-tamper", severity="reject", message=what)


@_rule("precision-downcast")
def precision_downcast(obs: Observations) -> Iterator[Finding]:
    for cast in obs.downcasts:
        yield Finding(
            rule="precision-downcast",
            severity="warn",
            message=f"forward cast float32 data to half precision ({cast.name})",
            line=cast.line,
        )


def observation_findings(obs: Observations | None) -> list[Finding]:
    if obs is None:
        return []
    return [finding for rule in DYNAMIC_RULES.values() for finding in rule(obs)]


def cache_probe_finding(case: str) -> Finding:
    return Finding(
        rule="output-caching",
        severity="reject",
        message=(
            f"case {case}: called again on the same input storage refilled with other values, it returned an "
            "output that does not match them (a cached or stale result)"
        ),
    )


def shape_specialization(cases: Sequence[CaseResult]) -> list[Finding]:
    visible_pass = [c for c in cases if c.visible and c.passed]
    hidden_fail = [c for c in cases if not c.visible and not c.passed]
    if not visible_pass or not hidden_fail:
        return []
    names = ", ".join(c.name for c in hidden_fail[:4]) + (" ..." if len(hidden_fail) > 4 else "")
    return [
        Finding(
            rule="shape-specialization",
            severity="warn",
            message=f"passes the visible case but fails hidden case(s) {names}: it may be specialised to the shape it saw",
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
                    f"case {case}: {timing.candidate_ms * 1e3:.2f} us is below the {floor_ms * 1e3:.2f} us needed to move "
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
