"""The tamper watch: what it watches, and that a replacement is seen."""

from __future__ import annotations

from kope.evaluate.inside import monitor, tracing, watch


def test_a_replaced_method_is_seen_also_where_the_monitor_inherits_it() -> None:
    found = watch.watched((monitor, tracing))
    own = "kope.evaluate.inside.monitor.Monitor.check_call"
    inherited = "kope.evaluate.inside.monitor.Monitor.traced_launch"
    assert {own, inherited, "kope.evaluate.inside.tracing.Tracer.traced_launch", "torch.equal"} <= set(found)
    before = {name: get() for name, get in found.items()}
    monitor.Monitor.traced_launch = lambda *args, **kwargs: None  # type: ignore[method-assign,assignment]
    try:
        changed = [name for name, get in found.items() if get() is not before[name]]
    finally:
        del monitor.Monitor.traced_launch
    assert changed == [inherited]
