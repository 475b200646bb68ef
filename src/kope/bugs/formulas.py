"""The constants of PyTorch's formulas: what a kernel that reimplements a reference call must contain.

A reference written `F.gelu(x, approximate="tanh")` holds no literal, yet a kernel for it needs 0.5,
sqrt(2/pi) and 0.044715; `nn.LayerNorm(d)` needs its default epsilon 1e-5. The repair operators offer
these constants (replacing a wrong literal, or as a missing factor) next to the reference's own
literals. Keys are the called name, lower-cased, without its module (`layer_norm`, `layernorm`); the
values are the formula's constants and the function's float defaults, from PyTorch's documentation.
"""

from __future__ import annotations

import ast
import math

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
INV_SQRT_2 = 1.0 / math.sqrt(2.0)

_NORM_EPS = (1e-5,)

FORMULAS: dict[str, tuple[float, ...]] = {
    "gelu": (0.5, SQRT_2_OVER_PI, 0.044715, INV_SQRT_2),
    "silu": (0.5,),
    "mish": (),
    "elu": (1.0,),
    "celu": (1.0,),
    "selu": (1.0507009873554805, 1.6732632423543772),
    "leaky_relu": (0.01,),
    "leakyrelu": (0.01,),
    "rrelu": (1.0 / 8.0, 1.0 / 3.0),
    "prelu": (0.25,),
    "hardsigmoid": (1.0 / 6.0, 3.0, 6.0, 0.5),
    "hardswish": (1.0 / 6.0, 3.0, 6.0),
    "hardtanh": (-1.0,),
    "relu6": (6.0,),
    "softplus": (20.0,),
    "softshrink": (0.5,),
    "hardshrink": (0.5,),
    "threshold": (),
    "logsigmoid": (),
    "layer_norm": _NORM_EPS,
    "layernorm": _NORM_EPS,
    "group_norm": _NORM_EPS,
    "groupnorm": _NORM_EPS,
    "instance_norm": _NORM_EPS,
    "instancenorm1d": _NORM_EPS,
    "instancenorm2d": _NORM_EPS,
    "batch_norm": (*_NORM_EPS, 0.1),
    "batchnorm1d": (*_NORM_EPS, 0.1),
    "batchnorm2d": (*_NORM_EPS, 0.1),
    "rms_norm": (1.1920928955078125e-07, 1e-6),
    "rmsnorm": (1.1920928955078125e-07, 1e-6),
    "normalize": (1e-12, 2.0),
    "cosine_similarity": (1e-8,),
    "pairwise_distance": (1e-6, 2.0),
    "smooth_l1_loss": (0.5,),
    "huber_loss": (0.5,),
    "kl_div": (),
    "triplet_margin_loss": (1e-6, 2.0),
    "hinge_embedding_loss": (),
    "margin_ranking_loss": (),
    "scaled_dot_product_attention": (),
    "log_softmax": (),
    "softmax": (),
    "var": (),
    "std": (),
}
"""Called name -> the constants of its formula and its float defaults (1.0 and 0.0 are never offered)."""

MATH = (math.pi, 1.0 / math.pi, math.e, math.log(2.0), 1.0 / math.log(2.0), math.sqrt(2.0), INV_SQRT_2)
"""Constants kernels write out in their formulas (log2(e) for exp2, ln 2, sqrt 2, pi)."""


def constants_of_calls(tree: ast.AST) -> list[float]:
    """The formula constants of every PyTorch call in a reference, in order of appearance."""
    found: list[float] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        for value in FORMULAS.get(name.lower(), ()):
            if value not in found:
                found.append(value)
    return found
