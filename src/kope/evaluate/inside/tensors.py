"""Pack Python values holding tensors into safetensors plus a JSON structure, and back.

Used inside workers only (it imports torch). Tensors meant for the parent are exported so that
numpy can read them: dtypes numpy lacks (bfloat16, float8) travel as float32, which holds them
exactly, with the original dtype kept in the metadata.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from kope.protocol import ValueMeta

_NUMPY_FRIENDLY = {
    torch.float64,
    torch.float32,
    torch.float16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
    torch.complex64,
    torch.complex128,
}


class UnsupportedValueError(TypeError):
    """A value that cannot be packed (only tensors, numbers, strings, None and containers can)."""


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def pack(value: Any, *, for_numpy: bool = False) -> tuple[ValueMeta, dict[str, torch.Tensor]]:
    tensors: dict[str, torch.Tensor] = {}
    meta = _pack(value, tensors, for_numpy, depth=0)
    return meta, tensors


def _pack(value: Any, tensors: dict[str, torch.Tensor], for_numpy: bool, depth: int) -> ValueMeta:
    if depth > 8:
        raise UnsupportedValueError("values nested more than 8 deep")
    if isinstance(value, torch.Tensor):
        key = f"t{len(tensors)}"
        tensor = value.detach()
        name = dtype_name(tensor.dtype)
        tensor = tensor.to("cpu").contiguous().clone()
        if for_numpy and tensor.dtype not in _NUMPY_FRIENDLY:
            tensor = tensor.to(torch.float32)
        tensors[key] = tensor
        return ValueMeta(type="tensor", key=key, dtype=name, shape=list(value.shape))
    if isinstance(value, bool):
        return ValueMeta(type="bool", value=value)
    if isinstance(value, int):
        return ValueMeta(type="int", value=value)
    if isinstance(value, float):
        return ValueMeta(type="float", value=value)
    if isinstance(value, str):
        return ValueMeta(type="str", value=value)
    if value is None:
        return ValueMeta(type="none")
    if isinstance(value, tuple | list):
        return ValueMeta(
            type="tuple" if isinstance(value, tuple) else "list",
            items=[_pack(v, tensors, for_numpy, depth + 1) for v in value],
        )
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return ValueMeta(
            type="dict",
            keys=list(value),
            items=[_pack(v, tensors, for_numpy, depth + 1) for v in value.values()],
        )
    raise UnsupportedValueError(f"cannot pass a {type(value).__module__}.{type(value).__qualname__}")


def unpack(meta: ValueMeta, tensors: dict[str, torch.Tensor]) -> Any:
    if meta.type == "tensor":
        assert meta.key is not None
        return tensors[meta.key]
    if meta.type in ("tuple", "list"):
        items = [unpack(item, tensors) for item in meta.items]
        return tuple(items) if meta.type == "tuple" else items
    if meta.type == "dict":
        return {key: unpack(item, tensors) for key, item in zip(meta.keys, meta.items, strict=True)}
    if meta.type == "none":
        return None
    return meta.value


def save(path: Path, value: Any, *, for_numpy: bool = False) -> ValueMeta:
    meta, tensors = pack(value, for_numpy=for_numpy)
    save_file(tensors, str(path), metadata={"structure": meta.model_dump_json()})
    return meta


def load_bytes(data: bytes) -> Any:
    """A value packed by `save`, from the bytes of its file (inputs fed to a candidate job, never a path)."""
    import json

    from safetensors.torch import load as load_buffer

    length = int.from_bytes(data[:8], "little")
    structure = (json.loads(data[8 : 8 + length]).get("__metadata__") or {}).get("structure")
    if structure is None:
        raise ValueError("the packed value carries no structure")
    tensors = {key: value.clone() for key, value in load_buffer(data).items()}
    return unpack(ValueMeta.model_validate_json(structure), tensors)


def load(path: Path) -> Any:
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as handle:
        structure = (handle.metadata() or {}).get("structure")
    if structure is None:
        raise ValueError(f"{path.name} carries no structure")
    # Copies, not views of the file's memory map: a kernel that reads out of bounds then meets
    # ordinary heap memory, as it would in a real program, not the end of a mapped page.
    tensors = {key: value.clone() for key, value in load_file(str(path)).items()}
    return unpack(ValueMeta.model_validate_json(structure), tensors)
