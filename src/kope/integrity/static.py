"""Static integrity rules: read the candidate's syntax tree, never run it.

Names are resolved through the file's imports and simple aliases (`import torch as t`,
`from torch import nn`, `F = torch.nn.functional`, `getattr(torch, "relu")`), so renaming does not
hide a call. Code inside `@triton.jit` kernels is the kernel: only the precision and shape rules
look there. What static rules cannot see (operators on tensors, code built at run time) the dynamic
rules observe while forward runs.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from kope.integrity.vocabulary import (
    COMPUTE_METHODS,
    DYNAMIC_CODE,
    FILE_CALLS,
    FILE_METHODS,
    FRAME_ATTRIBUTES,
    HALF_NAMES,
    INDUCTOR_ENTRY_POINTS,
    NON_TORCH_ROOTS,
    OS_PROCESS_CALLS,
    PROCESS_MODULES,
    REFERENCE_MODULES,
    TIMER_WORDS,
    TORCH_SAFE_PREFIXES,
    TORCH_TAMPER_PREFIXES,
    TRITON_MATH_HELPERS,
    WATCHED_ROOTS,
)
from kope.protocol.policy import ALLOWED
from kope.protocol.results import Finding
from kope.source import ParsedSource


@dataclass(frozen=True)
class StaticContext:
    """What the static rules know about the task."""

    task_names: frozenset[str] = frozenset()
    """Names the task assigns at module level (its size parameters among them)."""
    visible_sizes: Mapping[str, object] = field(default_factory=dict)
    """Size parameters of the visible case, after overrides."""
    float32_task: bool = False
    """The task's floating-point inputs are all float32."""
    extra_allow: frozenset[str] = frozenset()


class _Module:
    """The rules' view of a parsed candidate (kope.source): its kernels by name, and the names of its
    own functions and of its PyTorch layer attributes."""

    def __init__(self, parsed: ParsedSource) -> None:
        self.parsed = parsed
        self.tree = parsed.tree
        self.kernels: dict[str, ast.FunctionDef] = parsed.kernel_names
        self.own_functions: set[str] = {
            node.name for node in ast.walk(self.tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        self.layer_attributes: set[str] = set()
        for node in ast.walk(self.tree):  # `self.linear = nn.Linear(...)`: calling self.linear computes
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                path = self.resolve(node.value.func) or ""
                if (
                    path.startswith("torch.nn.")
                    and path.rsplit(".", 1)[-1][:1].isupper()
                    and not path.startswith(TORCH_SAFE_PREFIXES)
                ):
                    for target in node.targets:
                        if isinstance(target, ast.Attribute):
                            self.layer_attributes.add(target.attr)

    def resolve(self, node: ast.expr) -> str | None:
        """The dotted path an expression names through imports, or None."""
        return self.parsed.resolve(node)

    def python_nodes(self) -> Iterator[ast.AST]:
        """Every node outside the bodies of Triton kernels."""
        return self.parsed.host_nodes()

    def kernel_nodes(self) -> Iterator[ast.AST]:
        return self.parsed.kernel_nodes()

    def calls(self) -> Iterator[ast.Call]:
        return (n for n in self.python_nodes() if isinstance(n, ast.Call))

    def launches(self) -> set[str]:
        """Kernels the file launches (`kernel[grid](...)`, `kernel.run(...)`)."""
        return {site.kernel.name for site in self.parsed.launches}


def _finding(rule: str, severity: str, message: str, node: ast.AST | None) -> Finding:
    line = getattr(node, "lineno", None) if node is not None else None
    return Finding(rule=rule, severity=severity, message=message, line=line)  # type: ignore[arg-type]


RuleFn = Callable[[_Module, StaticContext], Iterator[Finding]]
STATIC_RULES: dict[str, RuleFn] = {}


def _rule(name: str) -> Callable[[RuleFn], RuleFn]:
    def register(fn: RuleFn) -> RuleFn:
        STATIC_RULES[name] = fn
        return fn

    return register


@_rule("torch-compute")
def torch_compute(module: _Module, ctx: StaticContext) -> Iterator[Finding]:
    for call in module.calls():
        path = module.resolve(call.func)
        func = call.func
        if path and path.split(".")[0] == "torch":
            name = path.rsplit(".", 1)[-1]
            if (
                path.startswith(TORCH_SAFE_PREFIXES + TORCH_TAMPER_PREFIXES)
                or name in ALLOWED
                or name in ctx.extra_allow
            ):
                continue
            if path.startswith("torch.nn.") and name[:1].isupper():
                continue  # building a layer is not computing; calling it is (below)
            yield _finding("torch-compute", "reject", f"calls {path}()", call)
        elif isinstance(func, ast.Call) and (module.resolve(func.func) or "").startswith("torch.nn."):
            yield _finding("torch-compute", "reject", f"calls the PyTorch layer {ast.unparse(func)}", call)
        elif isinstance(func, ast.Attribute):
            name = func.attr
            base_name = name[:-1] if name.endswith("_") and not name.endswith("__") else name
            receiver = module.resolve(func.value)
            if receiver and receiver.split(".")[0] in NON_TORCH_ROOTS:
                continue
            if name in module.layer_attributes and _is_self(func.value):
                yield _finding("torch-compute", "reject", f"calls the PyTorch layer self.{name}", call)
            elif base_name in COMPUTE_METHODS and name not in module.own_functions and base_name not in ctx.extra_allow:
                yield _finding("torch-compute", "reject", f"calls .{name}() on a tensor", call)
        elif isinstance(func, ast.Name) and func.id == "getattr" and len(call.args) >= 2:
            target = module.resolve(call.args[0]) or ""
            if target.startswith("torch") and not isinstance(call.args[1], ast.Constant):
                yield _finding("torch-compute", "reject", "looks up a torch function by a computed name", call)
    host_functions = module.own_functions - set(module.kernels)
    for node in module.kernel_nodes():
        if isinstance(node, ast.Call):
            path = module.resolve(node.func) or ""
            called = node.func.id if isinstance(node.func, ast.Name) else None
            if path.split(".")[0] == "torch" or (called in host_functions):
                yield _finding(
                    "torch-compute",
                    "reject",
                    f"a kernel body calls host code ({path or called}): it cannot run on a GPU",
                    node,
                )


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


@_rule("fallback-branch")
def fallback_branch(module: _Module, ctx: StaticContext) -> Iterator[Finding]:
    """A try/except that swallows a failure of the code it guards, or contextlib.suppress around it.

    In a kernel file nothing should be allowed to fail quietly: a launch that fails must fail, and
    the code after it must not be a second way to the answer.
    """
    for node in module.python_nodes():
        if isinstance(node, ast.Try | ast.TryStar):
            guarded = any(isinstance(inner, ast.Call) for stmt in node.body for inner in ast.walk(stmt))
            if not guarded:
                continue
            for handler in node.handlers:
                if all(isinstance(stmt, ast.Raise) for stmt in handler.body):
                    continue
                if _only_skips(module, handler.body):
                    yield _finding(
                        "fallback-branch",
                        "warn",
                        "a try/except skips a failure (continue, pass, a log line) without computing anything "
                        "instead: what ran decides (a hand-written autotuning loop is the usual case)",
                        handler,
                    )
                    continue
                yield _finding(
                    "fallback-branch",
                    "reject",
                    "a try/except around the computation does something other than re-raise on failure",
                    handler,
                )
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                expr = item.context_expr
                path = module.resolve(expr.func if isinstance(expr, ast.Call) else expr) or ""
                if path in ("contextlib.suppress", "contextlib.nullcontext.suppress") or path.endswith(".suppress"):
                    yield _finding(
                        "fallback-branch", "reject", "contextlib.suppress hides failures of the computation", node
                    )


_LOGGING_ROOTS = ("print", "logging", "warnings", "logger", "log")


def _only_skips(module: _Module, body: list[ast.stmt]) -> bool:
    """A handler that offers no second way to the answer: `continue`, `pass`, `break` and log lines only."""
    for stmt in body:
        if isinstance(stmt, ast.Continue | ast.Pass | ast.Break):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            path = module.resolve(stmt.value.func) or ast.unparse(stmt.value.func)
            if path.split(".")[0] in _LOGGING_ROOTS and not any(
                isinstance(arg, ast.Call) for arg in ast.walk(stmt.value) if arg is not stmt.value
            ):
                continue
        return False
    return True


@_rule("device-fallback")
def device_fallback(module: _Module, ctx: StaticContext) -> Iterator[Finding]:
    """An `if` on where the data is (is_cuda, device, torch.cuda.is_available()) with a `return` in a branch."""
    for node in module.python_nodes():
        if not isinstance(node, ast.If) or not _asks_device(module, node.test):
            continue
        if any(isinstance(inner, ast.Return) for stmt in node.body + node.orelse for inner in ast.walk(stmt)):
            yield _finding(
                "device-fallback",
                "warn",
                f"a path for data off the GPU (`if {ast.unparse(node.test)}`): on a GPU and under CUDA emulation "
                "the CUDA path is the one judged",
                node,
            )


def _asks_device(module: _Module, test: ast.expr) -> bool:
    for node in ast.walk(test):
        if isinstance(node, ast.Attribute) and node.attr in ("is_cuda", "is_cpu", "device"):
            return True
        if isinstance(node, ast.Call) and (module.resolve(node.func) or "").startswith("torch.cuda.is_available"):
            return True
    return False


@_rule("kernel-not-launched")
def kernel_not_launched(module: _Module, ctx: StaticContext) -> Iterator[Finding]:
    uses_extension = any(
        (module.resolve(call.func) or "").startswith("torch.utils.cpp_extension.load") for call in module.calls()
    )
    if uses_extension:
        return
    if not module.kernels:
        yield _finding("kernel-not-launched", "reject", "defines no Triton kernel and loads no CUDA extension", None)
        return
    if not module.launches():
        names = ", ".join(sorted(module.kernels))
        yield _finding("kernel-not-launched", "reject", f"defines {names} but never launches a kernel", None)


@_rule("output-caching")
def output_caching(module: _Module, ctx: StaticContext) -> Iterator[Finding]:
    tainted = {
        target.id
        for node in module.python_nodes()
        if isinstance(node, ast.Assign) and _mentions_identity(node.value, set())
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for node in module.python_nodes():
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                path = module.resolve(decorator.func if isinstance(decorator, ast.Call) else decorator) or ""
                if path in ("functools.lru_cache", "functools.cache"):
                    yield _finding("output-caching", "warn", f"{node.name} is memoised with {path}", decorator)
        elif (
            isinstance(node, ast.Subscript | ast.Compare)
            or (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("get", "setdefault")
            )
        ) and _mentions_identity(node, tainted):
            yield _finding("output-caching", "warn", "keeps a cache keyed on data_ptr() or id()", node)


def _mentions_identity(node: ast.AST, tainted: set[str]) -> bool:
    """Whether an expression involves data_ptr(), id() or a name assigned from one."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call):
            func = inner.func
            if (isinstance(func, ast.Attribute) and func.attr == "data_ptr") or (
                isinstance(func, ast.Name) and func.id == "id"
            ):
                return True
        elif isinstance(inner, ast.Name) and inner.id in tainted:
            return True
    return False


@_rule("reference-access")
def reference_access(module: _Module, ctx: StaticContext) -> Iterator[Finding]:  # noqa: C901 - one branch per way a file can reach the reference (imports, sys.modules, globals, files)
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                if name.split(".")[0] in REFERENCE_MODULES:
                    yield _finding("reference-access", "reject", f"imports {name}", node)
        elif isinstance(node, ast.Attribute) and node.attr in FRAME_ATTRIBUTES:
            yield _finding("reference-access", "reject", f"reads {node.attr}", node)
        elif isinstance(node, ast.Name) and node.id == "__builtins__":
            yield _finding("reference-access", "reject", "reads __builtins__", node)
        elif isinstance(node, ast.Call):
            path = module.resolve(node.func) or ""
            func = node.func
            if isinstance(func, ast.Name) and func.id in DYNAMIC_CODE and func.id not in module.own_functions:
                yield _finding("reference-access", "reject", f"calls {func.id}()", node)
            elif path in FILE_CALLS:
                yield _finding("reference-access", "reject", f"reads the file system ({path})", node)
            elif isinstance(func, ast.Attribute) and func.attr in FILE_METHODS:
                yield _finding("reference-access", "reject", f"reads the file system (.{func.attr}())", node)
        if isinstance(node, ast.Attribute | ast.Call):
            path = module.resolve(node if isinstance(node, ast.Attribute) else node.func) or ""
            if path in ("sys._getframe", "sys.modules", "sys._current_frames", "sys.meta_path", "sys.path_hooks"):
                yield _finding("reference-access", "reject", f"uses {path}", node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
            owner = module.resolve(node.args[0]) or ""
            is_module = bool(owner) and owner.split(".")[0] in WATCHED_ROOTS | {"numpy", "triton"}
            if node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) >= 2 and is_module:
                if not isinstance(node.args[1], ast.Constant):
                    yield _finding(
                        "reference-access", "reject", f"looks up an attribute of {owner} by a computed name", node
                    )
            elif node.func.id == "vars" and is_module:
                yield _finding("reference-access", "reject", f"reaches into the namespace of {owner} with vars()", node)
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            owner = module.resolve(node.value) or ""
            if owner and owner.split(".")[0] in WATCHED_ROOTS | {"numpy", "triton"}:
                yield _finding("reference-access", "reject", f"reaches into the namespace of {owner} (__dict__)", node)


@_rule("harness-tamper")
def harness_tamper(module: _Module, ctx: StaticContext) -> Iterator[Finding]:
    for node in ast.walk(module.tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        for target in targets:
            path = _target_path(module, target)
            if path and _own_math_helper(module, node, path):
                yield _finding(
                    "harness-tamper",
                    "warn",
                    f"assigns {path} to a function of its own (its kernels' own math: a warning)",
                    node,
                )
            elif path:
                yield _tamper_finding(path, node)
        if isinstance(node, ast.Call):
            func = node.func
            path = module.resolve(func) or ""
            if isinstance(func, ast.Name) and func.id in ("setattr", "delattr") and node.args:
                owner = module.resolve(node.args[0]) or ""
                if owner.split(".")[0] in WATCHED_ROOTS:
                    literal = node.args[1] if len(node.args) > 1 else None
                    name = (
                        literal.value
                        if isinstance(literal, ast.Constant) and isinstance(literal.value, str)
                        else "<attribute>"
                    )
                    yield _tamper_finding(f"{owner}.{name}", node)
            elif (path.startswith(TORCH_TAMPER_PREFIXES) and path not in INDUCTOR_ENTRY_POINTS) or path in (
                "sys.settrace",
                "sys.setprofile",
                "threading.settrace",
                "threading.setprofile",
                "os.putenv",
                "os.unsetenv",
            ):
                yield _finding("harness-tamper", "reject", f"calls {path}()", node)
            elif isinstance(func, ast.Attribute) and func.attr in (
                "update",
                "setdefault",
                "pop",
                "clear",
                "__setitem__",
            ):
                owner = module.resolve(func.value) or ""
                if owner in ("os.environ", "sys.modules"):
                    yield _finding("harness-tamper", "reject", f"modifies {owner}", node)


def _own_math_helper(module: _Module, node: ast.AST, path: str) -> bool:
    """`tl.tanh = _tl_tanh`: an elementwise math name of `triton.language` (`TRITON_MATH_HELPERS`) bound, by a plain
    assignment of one target, to a module-level function of the candidate that nothing rebinds (a `@triton.jit` one,
    or a plain one, which a kernel cannot call: Triton's GPU front end, run before every interpreted launch, refuses
    it)."""
    root, _, name = path.rpartition(".")
    if root != "triton.language" or name not in TRITON_MATH_HELPERS:
        return False
    if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.value, ast.Name):
        return False
    helper = node.value.id
    defined = [n for n in module.tree.body if isinstance(n, ast.FunctionDef) and n.name == helper]
    if len(defined) != 1:
        return False
    bound = sum(_binds(other, helper) for other in ast.walk(module.tree))
    return bound == 1


def _binds(node: ast.AST, name: str) -> bool:
    """Whether `node` binds `name` (a definition, an assignment or deletion, `global`, an import's alias)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name == name
    if isinstance(node, ast.Name):
        return node.id == name and not isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.Global | ast.Nonlocal):
        return name in node.names
    return isinstance(node, ast.alias) and (node.asname or node.name) == name


def _target_path(module: _Module, target: ast.expr) -> str | None:
    if isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            path = _target_path(module, element)
            if path:
                return path
        return None
    if isinstance(target, ast.Subscript):
        owner = module.resolve(target.value) or ""
        if owner in ("os.environ", "sys.modules"):
            return owner
        namespace = _namespace_of(module, target.value)
        if namespace is not None:
            key = target.slice.value if isinstance(target.slice, ast.Constant) else None
            return f"{namespace}.{key if isinstance(key, str) else '<attribute>'}"
        return None
    if isinstance(target, ast.Attribute):
        path = module.resolve(target)
        if path and path.split(".")[0] in WATCHED_ROOTS and not path.startswith("torch.backends."):
            return path
    return None


def _namespace_of(module: _Module, node: ast.expr) -> str | None:
    """The watched module whose namespace `node` is: `vars(np)`, `np.__dict__`."""
    owner = None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" and node.args:
        owner = module.resolve(node.args[0])
    elif isinstance(node, ast.Attribute) and node.attr == "__dict__":
        owner = module.resolve(node.value)
    return owner if owner and owner.split(".")[0] in WATCHED_ROOTS else None


def _tamper_finding(path: str, node: ast.AST) -> Finding:
    if path.startswith("time.") or any(word in path for word in TIMER_WORDS[1:]):
        return _finding("timer-tamper", "reject", f"replaces {path}", node)
    return _finding("harness-tamper", "reject", f"assigns {path}", node)


@_rule("threads-processes")
def threads_processes(module: _Module, ctx: StaticContext) -> Iterator[Finding]:
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                if name.split(".")[0] in PROCESS_MODULES:
                    yield _finding("threads-processes", "reject", f"imports {name}", node)
        elif isinstance(node, ast.Call):
            path = module.resolve(node.func) or ""
            if path.startswith("os.") and path[3:] in OS_PROCESS_CALLS:
                yield _finding("threads-processes", "reject", f"calls {path}()", node)


@_rule("lazy-output")
def lazy_output(module: _Module, ctx: StaticContext) -> Iterator[Finding]:
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                if (module.resolve(base) or "") in ("torch.Tensor", "torch._C.TensorBase", "torch._C._TensorBase"):
                    yield _finding("lazy-output", "reject", f"{node.name} subclasses torch.Tensor", node)
        elif isinstance(node, ast.FunctionDef) and node.name in ("__torch_function__", "__torch_dispatch__"):
            yield _finding("lazy-output", "reject", f"defines {node.name}", node)


@_rule("shape-specialization")
def shape_specialization(module: _Module, ctx: StaticContext) -> Iterator[Finding]:
    sizes: dict[int, str] = {}
    for name, value in ctx.visible_sizes.items():
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, int) and not isinstance(item, bool) and item >= 3 and item & (item - 1):
                sizes.setdefault(item, name)
    if not sizes:
        return
    reported: set[int] = set()
    for node in ast.walk(module.tree):
        if (
            isinstance(node, ast.Constant)
            and type(node.value) is int
            and node.value in sizes
            and node.value not in reported
        ):
            reported.add(node.value)
            yield _finding(
                "shape-specialization",
                "warn",
                f"the literal {node.value} equals the visible case's {sizes[node.value]}",
                node,
            )


@_rule("precision-downcast")
def precision_downcast(module: _Module, ctx: StaticContext) -> Iterator[Finding]:
    if not ctx.float32_task:
        return
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in ("half", "bfloat16") and not node.args:
                yield _finding("precision-downcast", "warn", f"casts to {func.attr} in a float32 task", node)
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                path = module.resolve(arg) or ""
                if path.rsplit(".", 1)[-1] in HALF_NAMES and path.split(".")[0] in ("torch", "triton"):
                    yield _finding("precision-downcast", "warn", f"uses {path} in a float32 task", node)
                    break
            if (module.resolve(func) or "").endswith("language.dot") or (
                isinstance(func, ast.Attribute)
                and func.attr == "dot"
                and (module.resolve(func.value) or "").startswith("triton")
            ):
                precision = next((k.value for k in node.keywords if k.arg in ("input_precision", "allow_tf32")), None)
                if precision is None or (
                    isinstance(precision, ast.Constant) and precision.value in ("tf32", "tf32x3", True)
                ):
                    yield _finding(
                        "precision-downcast",
                        "warn",
                        "tl.dot on float32 data uses TF32 on NVIDIA GPUs unless input_precision='ieee'",
                        node,
                    )
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                flag = module.resolve(target) if isinstance(target, ast.Attribute) else None
                if flag and flag.endswith("allow_tf32") and isinstance(node.value, ast.Constant) and node.value.value:
                    yield _finding("precision-downcast", "warn", f"sets {flag} = True in a float32 task", node)


@_rule("problem-override")
def problem_override(module: _Module, ctx: StaticContext) -> Iterator[Finding]:
    for node in module.tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in ("get_inputs", "get_init_inputs", "get_cases"):
            yield _finding("problem-override", "warn", f"defines {node.name}(), which kope ignores", node)
        elif isinstance(node, ast.ClassDef) and node.name == "Model":
            yield _finding("problem-override", "warn", "defines Model, which kope ignores", node)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in ctx.visible_sizes:
                    yield _finding(
                        "problem-override",
                        "warn",
                        f"assigns the task's size parameter {target.id}: where it holds the task's own value, "
                        "each case gives it the case's",
                        node,
                    )


def check_source(source: str, context: StaticContext | None = None) -> list[Finding]:
    """Every static finding for a candidate source (none for a file that does not parse)."""
    parsed = ParsedSource.parse(source)
    if parsed is None:
        return []
    module = _Module(parsed)
    context = context or StaticContext()
    findings: dict[tuple[str, int | None, str], Finding] = {}
    for rule in STATIC_RULES.values():
        for finding in rule(module, context):
            findings.setdefault((finding.rule, finding.line, finding.message), finding)
    return sorted(findings.values(), key=lambda f: (f.line or 0, f.rule))
