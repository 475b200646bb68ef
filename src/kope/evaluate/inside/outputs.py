"""Outputs and tensors compared bit for bit, in the candidate's process: the leaves of an output, the bytes a
tensor's storage spans, whether two tensors hold the same bits, whether a stretch of one holds one value.

Used by the monitor's checks after each forward (`kope.evaluate.inside.monitor`), by its tracing of kernel
arguments (`tracing`) and by the worker's ghost replay.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

_equal = torch.equal
_uint8 = torch.uint8


def leaves(value: Any, path: str = "output") -> Iterator[tuple[str, Any]]:
    if isinstance(value, tuple | list):
        for index, item in enumerate(value):
            yield from leaves(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, f"{path}[{key!r}]")
    else:
        yield path, value


def storage_range(tensor: torch.Tensor) -> tuple[int, int]:
    """The bytes a tensor's storage spans (a view's storage is its base's)."""
    with torch._C.DisableTorchFunctionSubclass():
        storage = tensor.untyped_storage()
        return int(storage.data_ptr()), int(storage.data_ptr()) + int(storage.nbytes())


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    with torch._C.DisableTorchFunctionSubclass():
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.numel() == 0:
            return True
        return bool(_equal(a.detach().contiguous().view(_uint8), b.detach().contiguous().view(_uint8)))


def is_constant(tensor: torch.Tensor, first: int, last: int, minimum: int) -> bool:
    """Every element in [first, last) (of a contiguous tensor; else all) holds one value (NaN counts as
    one), and there are at least `minimum` of them."""
    with torch._C.DisableTorchFunctionSubclass():
        flat = tensor.detach().reshape(-1)
        if tensor.is_contiguous():
            flat = flat[first:last]
        if flat.numel() < minimum:
            return False  # one computed value says nothing: a scalar written without reading the inputs is judged
        if flat.is_floating_point() and bool(flat.isnan().all()):
            return True
        return bool((flat == flat[0]).all())


def same_outputs(a: Any, b: Any) -> bool:
    """Bit-for-bit equality of two outputs (NaN equals NaN)."""
    left, right = list(leaves(a)), list(leaves(b))
    if len(left) != len(right):
        return False
    for (_, x), (_, y) in zip(left, right, strict=True):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            with torch._C.DisableTorchFunctionSubclass():
                x, y = x.detach().cpu(), y.detach().cpu()
            if not same_bits(x, y):
                return False
        elif x != y:
            return False
    return True


def output_tensors(output: Any) -> list[torch.Tensor]:
    return [leaf for _, leaf in leaves(output) if isinstance(leaf, torch.Tensor)]
