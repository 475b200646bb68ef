"""Normalisation statistics: a batch norm computed with the batch's statistics where the reference normalises with
its running ones.

In eval mode (the mode some pipelines run both models in: `module_mode` in a manifest) `nn.BatchNorm2d` normalises
with `running_mean` and `running_var`, not with the batch's. Real models write the training-mode formula anyway,
often saying so ("training-style per-batch stats"): a statistics pass fills `mean` and `var` (or `inv_std`), a
second pass normalises with them. `eval-statistics` keeps both passes and, where the model is not training, reads
the reference's running statistics instead, right after the statement that makes the batch's:

    stats_kernel[grid](y, mean, inv_std, N, C, eps)
    if not self.training:
        mean = self.bn.running_mean
        inv_std = torch.rsqrt(self.bn.running_var + 1e-05)

The running statistics are those of the batch norm `ModelNew` keeps, else two new buffers `running_mean` /
`running_var` of the reference's feature count (kope copies the reference's buffers into them by name); in a
module-level function they arrive as a new keyword argument that each call passes
(`bn_running=None if self.training else (...)`). Offered where the reference builds one batch norm; grounded where
the evaluation runs the models in eval mode (`Program.module_mode`: the batch's statistics are then wrong on every
input; in training mode they are right).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from kope.bugs.bias import _classes, _functions, _method, _methods, _self_attributes, _spliced, _threaded
from kope.bugs.edit import Edit, Program, operator
from kope.bugs.reference import BatchNorm, batch_norms
from kope.source import call_name

_ALLOCATIONS = ("empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "new_empty", "new_zeros", "full")
"""Calls that only allocate: a name bound to one is not written yet."""


def _role(name: str) -> str:
    """What a host name holds, by its spelling: `mean`, `var`, `inv` (1 / std), `std`, or "" (none of them)."""
    low = name.lower()
    if re.search(r"running|moving|ema|run_", low):
        return ""  # statistics kept across batches already
    if "mean" in low and "sq" not in low:
        return "mean"
    if "var" in low:
        return "var"
    if re.search(r"inv|rstd|istd|rsig", low):
        return "inv"
    if "std" in low:
        return "std"
    return ""


def _allocation(value: ast.expr) -> bool:
    return isinstance(value, ast.Call) and call_name(value, last=True) in _ALLOCATIONS


def _written(statement: ast.stmt) -> set[str]:
    """The names a top-level statement of a host function makes or fills: assigned from anything but an allocation,
    or passed to a call made for its effect (a kernel launch, a function filling its arguments); none where it reads
    running statistics already (`mean = self.bn.running_mean`)."""
    if re.search(r"running|moving", ast.unparse(statement)):
        return set()
    if isinstance(statement, ast.Assign) and not _allocation(statement.value):
        return {n.id for t in statement.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        call = statement.value
        return {a.id for a in [*call.args, *(k.value for k in call.keywords)] if isinstance(a, ast.Name)}
    return set()


def _statistics(fn: ast.FunctionDef) -> tuple[ast.stmt, str, str] | None:
    """The first top-level statement of `fn` after which a mean and a spread (variance, inverse or plain standard
    deviation) have both been made, where a later statement reads both; with their names."""
    mean = spread = ""
    for at, statement in enumerate(fn.body):
        for name in sorted(_written(statement)):
            role = _role(name)
            if role == "mean" and not mean:
                mean = name
            elif role in ("var", "inv", "std") and not spread:
                spread = name
        if mean and spread:
            later = {n.id for s in fn.body[at + 1 :] for n in ast.walk(s) if isinstance(n, ast.Name)}
            return (statement, mean, spread) if {mean, spread} <= later else None
    return None


def _spread_value(role: str, var: str, eps: float) -> str:
    return {"var": var, "inv": f"torch.rsqrt({var} + {eps!r})", "std": f"torch.sqrt({var} + {eps!r})"}[role]


def _running(program: Program, norm: BatchNorm) -> tuple[str, str, list[tuple[int, int, str]]] | None:
    """`ModelNew`'s running mean and variance (as `self.` expressions), and the splices that make them: those of the
    batch norm it keeps, else two new buffers of the reference's feature count."""
    model = _classes(program).get("ModelNew")
    init = _method(model, "__init__") if model else None
    if init is None:
        return None
    attributes = _self_attributes(init)
    for name, value in attributes.items():
        if isinstance(value, ast.Call) and call_name(value, last=True).lower().startswith("batchnorm"):
            return f"self.{name}.running_mean", f"self.{name}.running_var", []
    renamed = dict(zip(norm.params, [a.arg for a in init.args.args[1:]], strict=False))
    try:
        features = ast.parse(norm.features, mode="eval").body
    except SyntaxError:
        return None
    for node in ast.walk(features):
        if isinstance(node, ast.Name):
            if node.id not in renamed:
                return None
            node.id = renamed[node.id]
    mean, var = "running_mean", "running_var"
    while mean in attributes or var in attributes:
        mean, var = f"{mean}_", f"{var}_"
    last = init.body[-1]
    indent = " " * last.col_offset
    at = program.span(last)[1]
    size = ast.unparse(features)
    text = (
        f"\n{indent}self.register_buffer({mean!r}, torch.zeros({size}))"
        f"\n{indent}self.register_buffer({var!r}, torch.ones({size}))"
    )
    return f"self.{mean}", f"self.{var}", [(at, at, text)]


@operator("eval-statistics", "wrong-normalizer")
def eval_statistics(program: Program) -> Iterator[Edit]:
    """Where the reference builds one batch norm and a host function of the candidate makes a batch's mean and
    spread: after that statement, when the model is not training, the running statistics instead."""
    norms = batch_norms(program.reference)
    if len(norms) != 1:
        return
    (norm,) = norms
    running = _running(program, norm)
    if running is None:
        return
    mean_of, var_of, made = running
    methods = _methods(program)
    model = _classes(program).get("ModelNew")
    hosts = [n for n in model.body if isinstance(n, ast.FunctionDef)] if model else []
    hosts += [*_functions(program).values()]
    for fn in hosts:
        found = _statistics(fn)
        if found is None:
            continue
        statement, mean, spread = found
        if id(fn) in methods:
            guard, mean_value, var_value, splices = "not self.training", mean_of, var_of, list(made)
        else:
            threaded = _threaded(program, fn, f"(None if self.training else ({mean_of}, {var_of}))", "bn_running")
            if threaded is None:
                continue
            param, more = threaded
            guard, mean_value, var_value, splices = f"{param} is not None", f"{param}[0]", f"{param}[1]", [*made, *more]
        indent = " " * statement.col_offset
        value = _spread_value(_role(spread), var_value, norm.eps)
        body = f"{indent}    {mean} = {mean_value}\n{indent}    {spread} = {value}"
        at = program.span(statement)[1]
        splices.append((at, at, f"\n{indent}if {guard}:\n{body}"))
        yield Edit(
            "eval-statistics",
            "wrong-normalizer",
            statement.lineno,
            f"`{mean}` and `{spread}` from the running statistics when the model is not training",
            _spliced(program.text, splices),
            cue=f"line {statement.lineno} makes the batch's `{mean}` / `{spread}`; the reference's "
            f"`{norm.attribute}` normalises with its running statistics in eval mode",
            grounded=program.module_mode == "eval",
        )
