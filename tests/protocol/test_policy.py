"""The PyTorch allowlist both sides apply: the parent statically, the monitor at run time."""

from __future__ import annotations

import torch

from kope.protocol import policy


def test_a_fill_is_an_allocation_and_a_constant_never_data() -> None:
    assert policy.FILLED_ALLOCATIONS < policy.ALLOCATION
    assert policy.FILLED_ALLOCATIONS <= policy.FILLS
    assert not policy.FILLED_ALLOCATIONS & policy.HOST_BUILT, "a tensor built from Python data is not a fill"
    assert {"randn", "arange"} <= policy.ALLOCATION - policy.FILLED_ALLOCATIONS


def test_the_allowlist_names_allocations_and_views_not_compute() -> None:
    assert policy.allowed(policy.short_name(torch.empty_like)) and policy.allowed(policy.short_name(torch.Tensor.view))
    assert not policy.allowed(policy.short_name(torch.matmul))
    assert policy.allowed("matmul", frozenset({"matmul"})), "a task's ALLOW_TORCH extends it"


def test_the_policy_follows_the_option_then_the_task_then_the_reference() -> None:
    assert policy.decide("partial", "strict", ["mm"]) == ("partial", "--policy partial")
    assert policy.decide(None, "partial", ["mm"])[0] == "partial"
    assert policy.decide(None, None, ["mm", "mm"])[0] == "strict"
    assert policy.decide(None, None, ["mm", "add"])[0] == "partial"
    assert policy.decide(None, None, None)[0] == "strict"
