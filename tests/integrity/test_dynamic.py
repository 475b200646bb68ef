"""Dynamic rules as pure functions over observations, and the verdict."""

from __future__ import annotations

from kope.integrity.dynamic import (
    DYNAMIC_RULES,
    implausible_speedup,
    observation_findings,
    shape_specialization,
    size_one_copies,
    verdict,
)
from kope.integrity.rules import RULES
from kope.protocol import Observations, TorchCall
from kope.protocol.results import CaseResult, Finding, Timing


def rules_of(obs: Observations) -> set[tuple[str, str]]:
    return {(f.rule, f.severity) for f in observation_findings(obs)}


def test_clean_observations_give_no_findings() -> None:
    assert observation_findings(Observations(launches_per_forward=[1, 1, 1], kernels={"k": 3})) == []
    assert observation_findings(None) == []


def test_each_observation_maps_to_its_rule() -> None:
    assert ("torch-compute", "reject") in rules_of(Observations(torch_calls=[TorchCall(name="relu", line=12)]))
    assert ("kernel-not-launched", "reject") in rules_of(Observations(launches_per_forward=[1, 0]))
    assert ("kernel-not-launched", "reject") in rules_of(Observations(launches_per_forward=[1], ghost_unchanged=True))
    assert ("input-mutation", "reject") in rules_of(Observations(mutated_inputs=[0]))
    assert ("output-aliasing", "reject") in rules_of(Observations(aliased_outputs=["output"]))
    assert ("lazy-output", "reject") in rules_of(Observations(output_types=["output: mod.Lazy"]))
    assert ("lazy-output", "warn") in rules_of(Observations(output_types=["output: torch.nn.parameter.Parameter"]))
    assert ("threads-processes", "reject") in rules_of(Observations(threads_alive=1))
    assert ("threads-processes", "reject") in rules_of(Observations(children_alive=2))
    assert ("timer-tamper", "reject") in rules_of(Observations(tampered=["time.perf_counter"]))
    assert ("timer-tamper", "reject") in rules_of(Observations(tampered=["torch.cuda.Event.elapsed_time"]))
    assert ("harness-tamper", "reject") in rules_of(Observations(tampered=["torch.allclose"]))
    assert ("harness-tamper", "reject") in rules_of(Observations(instrumentation_lost=["mode stack changed"]))
    assert ("precision-downcast", "warn") in rules_of(Observations(downcasts=[TorchCall(name="half -> half")]))


def test_torch_call_findings_carry_line_and_count() -> None:
    (finding,) = observation_findings(Observations(torch_calls=[TorchCall(name="matmul", line=7, count=3)]))
    assert finding.line == 7 and "3 times" in finding.message


def case(name: str, visible: bool, passed: bool) -> CaseResult:
    return CaseResult(name=name, overrides={}, visible=visible, passed=passed)


def test_shape_specialization_needs_a_visible_pass_and_a_hidden_failure() -> None:
    assert shape_specialization([case("a", True, True), case("b", False, True)]) == []
    assert shape_specialization([case("a", True, False), case("b", False, False)]) == []
    (finding,) = shape_specialization([case("a", True, True), case("b", False, False)])
    assert finding.severity == "warn" and "b" in finding.message


def test_implausible_speedup() -> None:
    timing = Timing(method="cuda-events", candidate_ms=0.001, reference_ms=1.0, speedup=1000.0)
    found = implausible_speedup("big", timing, bytes_moved=400_000_000, device_name="NVIDIA H200", bound=50.0)
    assert len(found) == 2 and all(f.rule == "implausible-speedup" and f.severity == "warn" for f in found)
    plausible = Timing(method="cuda-events", candidate_ms=0.5, reference_ms=1.0, speedup=2.0)
    assert implausible_speedup("ok", plausible, bytes_moved=400_000_000, device_name="NVIDIA H200", bound=50) == []
    interpreter = Timing(method="interpreter-wall", candidate_ms=0.0001)
    assert implausible_speedup("cpu", interpreter, bytes_moved=10**9, device_name=None, bound=50) == []


def test_verdict_dedupes_and_orders_rejects_first() -> None:
    warn = Finding(rule="precision-downcast", severity="warn", message="w", line=1)
    reject = Finding(rule="torch-compute", severity="reject", message="r", line=9)
    result = verdict([warn, reject, reject])
    assert result.verdict == "reject" and result.findings == [reject, warn] and result.checked
    assert verdict([warn]).verdict == "clean"


def test_every_dynamic_rule_is_documented() -> None:
    assert set(DYNAMIC_RULES) <= set(RULES)
    assert all(rule.explanation for rule in RULES.values())


def _copy_case(name: str, sizes: dict[str, int], *, copied: bool, passed: bool = True) -> CaseResult:
    found = [Finding(rule="copy-kernel", severity="reject", message="out was only copied by k")] if copied else []
    return CaseResult(name=name, overrides=sizes, visible=False, passed=passed, findings=found)


def test_a_copy_on_a_case_with_a_size_of_one_is_a_warning_where_another_case_computed() -> None:
    """A logsumexp over one channel is that channel: the honest kernel stores what it loaded there."""
    first = _copy_case("shrunk", {"batch": 2, "channels": 9}, copied=False)
    one = _copy_case("one-partial", {"batch": 2, "channels": 1}, copied=True)
    excused = size_one_copies(one, [first, one])
    assert [(f.rule, f.severity) for f in excused] == [("copy-kernel", "warn")]
    assert "channels = 1" in excused[0].message and "shrunk" in excused[0].message
    assert verdict(excused).verdict == "clean"


def test_a_copy_stays_a_rejection_without_a_case_that_computed_it() -> None:
    one = _copy_case("one-partial", {"batch": 2, "channels": 1}, copied=True)
    # every other case copied too, or failed, or had the size at 1 as well
    for other in (
        _copy_case("shrunk", {"batch": 2, "channels": 9}, copied=True),
        _copy_case("shrunk", {"batch": 2, "channels": 9}, copied=False, passed=False),
        _copy_case("odd", {"batch": 3, "channels": 1}, copied=False),
    ):
        assert [f.severity for f in size_one_copies(one, [other, one])] == ["reject"]
    # a case without a size of one is judged as it is
    # the shown case is the one timed and seen: a copy there stays a rejection, whatever its sizes
    shown = _copy_case("shrunk", {"batch": 2, "channels": 1}, copied=True).model_copy(update={"visible": True})
    other = _copy_case("odd", {"batch": 3, "channels": 7}, copied=False)
    assert [f.severity for f in size_one_copies(shown, [shown, other])] == ["reject"]
    big = _copy_case("odd", {"batch": 3, "channels": 7}, copied=True)
    first = _copy_case("shrunk", {"batch": 2, "channels": 9}, copied=False)
    assert [f.severity for f in size_one_copies(big, [first, big])] == ["reject"]
