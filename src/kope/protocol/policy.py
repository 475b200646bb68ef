"""What a candidate's Python code may do with PyTorch: allocate, view, query, move, launch.

Names are those PyTorch reports to a `TorchFunctionMode` (`torch.empty`, `Tensor.view`,
`Tensor.__getitem__`, ...), reduced to their last component. Everything else that touches tensor
data through PyTorch is computing with PyTorch (`torch-compute`). A task widens the allowlist for
its candidates with a module-level list, e.g. `ALLOW_TORCH = ["conv2d", "batch_norm"]`, when the
kernel is meant to replace only part of a model.
"""

from __future__ import annotations

from typing import Literal

ALLOW_TORCH_NAME = "ALLOW_TORCH"

FILLED_ALLOCATIONS = frozenset(
    {
        "empty",
        "empty_like",
        "empty_strided",
        "zeros",
        "zeros_like",
        "ones",
        "ones_like",
        "full",
        "full_like",
        "new_empty",
        "new_empty_strided",
        "new_zeros",
        "new_ones",
        "new_full",
    }
)
"""Allocations whose contents are a fill (or poison), not data: an output the kernels never wrote but
that is such an allocation is an honest bug (uninitialised or constant output), not a result brought
in from elsewhere (the monitor's provenance)."""
ALLOCATION = FILLED_ALLOCATIONS | frozenset(
    {
        "arange",
        "tensor",
        "as_tensor",
        "scalar_tensor",
        "randn",
        "rand",
        "randint",
        "randn_like",
        "rand_like",
        "randint_like",
        "randperm",
        "normal_",
        "uniform_",
    }
)
"""Allocation, including random initialisation (of parameters, typically): none of it computes the task."""
VIEWS = frozenset(
    {
        "view",
        "view_as",
        "reshape",
        "reshape_as",
        "flatten",
        "unflatten",
        "squeeze",
        "unsqueeze",
        "permute",
        "transpose",
        "t",
        "T",
        "mT",
        "H",
        "expand",
        "expand_as",
        "narrow",
        "select",
        "unbind",
        "split",
        "chunk",
        "as_strided",
        "movedim",
        "swapaxes",
        "contiguous",
        "__getitem__",
        "__setitem__",
        "detach",
        "detach_",
        "requires_grad_",
    }
)
QUERIES = frozenset(
    {
        "size",
        "shape",
        "stride",
        "dim",
        "ndim",
        "ndimension",
        "numel",
        "nelement",
        "__len__",
        "dtype",
        "device",
        "layout",
        "is_cuda",
        "is_cpu",
        "is_contiguous",
        "is_floating_point",
        "is_complex",
        "is_signed",
        "data_ptr",
        "element_size",
        "itemsize",
        "nbytes",
        "storage_offset",
        "untyped_storage",
        "get_device",
        "requires_grad",
        "grad",
        "data",
        "is_leaf",
        "names",
        "__repr__",
        "__format__",
        "__str__",
        "__hash__",
        "__get__",
        "__set__",
        "_version",
        "_base",
        "is_shared",
        "is_pinned",
        "__reduce_ex__",
        "__deepcopy__",
        "__eq__",
        "result_type",
        "promote_types",
        "can_cast",
        "broadcast_shapes",
        "is_same_size",
    }
)
"""`__eq__` is here for identity tests PyTorch itself makes (`tensor in list`); a candidate that
computes with `==` on tensors still has to turn the result into data, which other calls reveal. `result_type`,
`promote_types`, `can_cast`, `broadcast_shapes` and `is_same_size` answer with a dtype, a bool or a shape from the
tensors' metadata: `torch.result_type(A, B)` after a kernel is not PyTorch doing the task."""
MOVES = frozenset(
    {
        "to",
        "cuda",
        "cpu",
        "float",
        "double",
        "half",
        "bfloat16",
        "int",
        "long",
        "short",
        "bool",
        "byte",
        "char",
        "type",
        "type_as",
        "copy_",
        "fill_",
        "zero_",
        "clone",
        "pin_memory",
        "record_stream",
    }
)
"""Data movement and casts: they do not compute the task's function. Downcasts are reported apart."""

ALLOWED = ALLOCATION | VIEWS | QUERIES | MOVES

DOWNCAST_NAMES = frozenset({"half", "bfloat16"})
HALF_DTYPES = frozenset({"float16", "bfloat16", "half", "float8_e4m3fn", "float8_e5m2"})


def short_name(func: object) -> str:
    """The last component of a torch function's name: `Tensor.view` -> `view`."""
    name = getattr(func, "__name__", None) or repr(func)
    return str(name).rsplit(".", 1)[-1]


def allowed(name: str, extra: frozenset[str] = frozenset()) -> bool:
    return name in ALLOWED or name in extra


TIMER_NAMES = ("time.", "torch.cuda.Event", "torch.cuda.synchronize", "do_bench", "kope.timing", "statistics.")


def is_timer(name: str) -> bool:
    """Whether a watched function's name belongs to a clock or a timer."""
    return any(word in name for word in TIMER_NAMES)


HOST_READS = frozenset(
    {
        "tolist",
        "item",
        "numpy",
        "__array__",
        "__dlpack__",
        "__float__",
        "__int__",
        "__bool__",
        "__index__",
        "__complex__",
    }
)
"""Tensor calls that bring tensor data into Python (the host): the data leaves the kernels' world."""
HOST_BUILT = frozenset({"tensor", "as_tensor", "asarray", "frombuffer", "from_numpy", "from_dlpack", "new_tensor"})
"""Calls that build a tensor from Python data (lists, numbers, bytes, NumPy arrays)."""
FILLS = ALLOCATION - HOST_BUILT | {"linspace", "logspace", "eye", "tril_indices", "triu_indices", "zero_", "fill_"}
"""Allocations and fills: constants, not data."""
RANDOM_DRAWS = frozenset(
    {
        "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "native_dropout",
        "bernoulli", "bernoulli_", "multinomial", "normal", "normal_", "poisson", "rrelu", "rrelu_", "rand",
        "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm", "uniform_", "exponential_",
        "geometric_", "cauchy_", "log_normal_", "random_",
    }
)  # fmt: skip
"""Operations that may draw random numbers (a dropout does only in training mode): a reference that calls one is run
twice to see whether its values depend on the draw."""
REARRANGES = frozenset(
    {
        "pad",
        "constant_pad_nd",
        "cat",
        "concat",
        "concatenate",
        "stack",
        "hstack",
        "vstack",
        "dstack",
        "repeat",
        "tile",
        "flip",
        "fliplr",
        "flipud",
        "roll",
        "broadcast_to",
        "unfold",
    }
)
"""Operations that only rearrange or replicate data (padding with a constant, concatenation): they pass
their inputs' provenance on without computing."""
SELECTS = frozenset(
    {
        "gather",
        "index_select",
        "take",
        "take_along_dim",
        "embedding",
        "masked_select",
        "diagonal",
        "diag",
        "tril",
        "triu",
        "narrow_copy",
    }
)
"""Operations that select elements of their inputs by position or by an index tensor. In a candidate they are
PyTorch doing the work (a gather is the whole of a gather task); in a reference they make a task that only moves
data, together with the rearrangements."""
MOVING = REARRANGES | SELECTS
"""A reference whose operators are all here only moves data: a kernel that copies elements is doing the task."""
EPILOGUE_RATIO = 1.5
"""Under `strict`, the elements PyTorch epilogue operations read and wrote must stay below this many
per element the candidate's kernels loaded or stored: a division of a reduction by a count, an
O(output) bias add (about 1.0) pass; two O(output) operations after an elementwise kernel (about 2.0),
or a matmul after a trivial kernel, do not."""

Policy = Literal["strict", "partial"]
POLICY_NAME = "INTEGRITY_POLICY"


def decide(override: str | None, task_setting: str | None, reference_ops: list[str] | None) -> tuple[Policy, str]:
    """Which policy applies, and why (in words for the JSON and `kope check`)."""
    if override in ("strict", "partial"):
        return override, f"--policy {override}"  # type: ignore[return-value]
    if task_setting in ("strict", "partial"):
        return task_setting, f"the task sets {POLICY_NAME} = {task_setting!r}"  # type: ignore[return-value]
    if reference_ops is None:
        return "strict", "the reference's operators were not traced; strict by default"
    distinct = sorted(set(reference_ops))
    if len(distinct) <= 1:
        what = f"one operator ({distinct[0]})" if distinct else "no computing operator"
        return "strict", f"the reference's forward calls {what}"
    shown = ", ".join(distinct[:6]) + (" ..." if len(distinct) > 6 else "")
    return "partial", f"the reference's forward composes {len(distinct)} operators ({shown})"
