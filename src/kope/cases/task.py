"""Tasks in KernelBench format, their cases and tolerances.

A task file defines `class Model(nn.Module)`, `get_inputs()` and `get_init_inputs()`. Its
module-level integers (and tuples of integers) are size parameters. A case is a set of overrides of
those names; overrides are applied by rewriting the module's top-level assignments, so expressions
that derive from them (`N = 2 * M`, `shape = (N, M)`) follow.

Cases come from, in order of preference: `--cases FILE.json`, the task's own `get_cases()`, or one
default case (the evaluator derives cases for a task without `get_cases()`: see `kope.cases.derive`).
`--set NAME=VALUE` applies on top of every case. A case dict may hold three reserved keys: `name` (a
label), `visible` (whether an agent is shown it) and `inputs` (`{"scale": s, "shift": t}`: the
reference's floating-point inputs become `x * s + t`, so a case can change the input distribution
as well as the sizes). When no case says, the first case is visible and the others are hidden.

Tolerances are per dtype, grouped in profiles (`kope.cases.tolerance`); a task widens or tightens
them with a module-level dict `TOLERANCES = {"float16": {"atol": 2e-2, "rtol": 2e-2}}`.

Nothing here imports torch: the task is executed only inside the sandbox.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from kope import syntax
from kope.cases.tolerance import Tolerance
from kope.errors import CaseError, TaskFileError
from kope.protocol.inputs import InputPattern, InputTransform

REQUIRED_NAMES = ("Model", "get_inputs", "get_init_inputs")
RESERVED_CASE_KEYS = frozenset({"name", "visible", "inputs"})
TOLERANCES_NAME = "TOLERANCES"

OverrideValue = int | float | bool | str | tuple[Any, ...]


@dataclass(frozen=True)
class Case:
    """One set of size overrides, with a name and whether an agent is shown it."""

    name: str
    overrides: Mapping[str, OverrideValue] = field(default_factory=dict)
    visible: bool = True
    inputs: InputTransform | None = None
    """How the reference's floating-point inputs are transformed (None: as `get_inputs()` made them)."""
    low_signal: str | None = None
    """Why this case's own inputs say little about a kernel (the reference's output equals an input, is
    constant or near zero): copies are then judged on the `widened` cases instead of here."""
    widened: bool = False
    """A case from a widened input distribution, derived for a low-signal task: copies are judged here."""

    def key(self) -> str:
        """A canonical text for the overrides and the input transform: equal cases, equal key."""
        data = _jsonable(dict(self.overrides))
        if self.inputs is not None and not self.inputs.identity:
            return json.dumps({"overrides": data, "inputs": self.inputs.model_dump()}, sort_keys=True)
        return json.dumps(data, sort_keys=True)


@dataclass(frozen=True)
class Task:
    """A task file, checked statically; it is executed only in the sandbox."""

    path: Path
    source: str
    assigned_names: tuple[str, ...]
    """Names bound by top-level assignments: the names overrides may set."""
    literal_sizes: Mapping[str, OverrideValue]
    """Size parameters whose values are plain literals (others are known after the task runs)."""
    defines_get_cases: bool

    @property
    def name(self) -> str:
        return self.path.parent.name if self.path.stem == "task" else self.path.stem

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()

    def source_with(self, overrides: Mapping[str, OverrideValue]) -> str:
        return apply_overrides(self.source, overrides)


def load_task(path: str | Path) -> Task:
    """Read and check a task file without running it."""
    path = Path(path).resolve()
    try:
        source = path.read_text()
    except FileNotFoundError:
        raise TaskFileError(f"task file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFileError(f"cannot read task file {path}: {exc}") from None
    try:
        tree = syntax.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise TaskFileError(f"task file {path} does not parse: line {exc.lineno}: {exc.msg}") from None
    defined = _top_level_definitions(tree)
    missing = [name for name in REQUIRED_NAMES if name not in defined]
    if missing:
        raise TaskFileError(
            f"task file {path} does not define {', '.join(missing)}; a KernelBench task defines "
            "class Model(nn.Module), get_inputs() and get_init_inputs()"
        )
    assigned = _assigned_names(tree)
    return Task(
        path=path,
        source=source,
        assigned_names=tuple(assigned),
        literal_sizes=_literal_sizes(tree),
        defines_get_cases="get_cases" in defined,
    )


def _top_level_definitions(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        else:
            names.update(_bound_names(node))
    return names


def _bound_names(node: ast.stmt) -> list[str]:
    targets: list[ast.expr]
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets = [node.target]
    else:
        return []
    names: list[str] = []
    for target in targets:
        names.extend(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def binding_counts(tree: ast.Module) -> Counter[str]:
    """How many top-level statements bind each name (a size parameter bound twice is not a plain one)."""
    return Counter(name for node in tree.body for name in _bound_names(node))


def _assigned_names(tree: ast.Module) -> list[str]:
    seen: dict[str, None] = {}
    for node in tree.body:
        for name in _bound_names(node):
            seen.setdefault(name, None)
    return list(seen)


def _literal_sizes(tree: ast.Module) -> dict[str, OverrideValue]:
    sizes: dict[str, OverrideValue] = {}
    for name, value_node in module_bindings(tree):
        if name.startswith("_"):
            continue
        try:
            value: object = ast.literal_eval(value_node)
        except (ValueError, SyntaxError, TypeError):
            continue
        if is_size_value(value):
            sizes[name] = value  # type: ignore[assignment]
    return sizes


def module_bindings(tree: ast.Module) -> list[tuple[str, ast.expr]]:
    """(name, the expression it is bound to) for every name a top-level assignment binds.

    Unpacking pairs each name with its own element where the value is a tuple or list display of the
    same length; otherwise (`a, b = f()`) the name is paired with the whole value.
    """
    pairs: list[tuple[str, ast.expr]] = []

    def bind(target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            pairs.append((target.id, value))
        elif isinstance(target, ast.Tuple | ast.List):
            elements = value.elts if isinstance(value, ast.Tuple | ast.List) else None
            plain = (
                elements is not None
                and len(elements) == len(target.elts)
                and not any(isinstance(e, ast.Starred) for e in [*target.elts, *elements])
            )
            for i, item in enumerate(target.elts):
                item = item.value if isinstance(item, ast.Starred) else item
                bind(item, elements[i] if plain and elements is not None else value)

    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                bind(target, node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            bind(node.target, node.value)
    return pairs


def is_size_value(value: object) -> bool:
    """Integers and tuples of integers size a task's inputs; booleans do not."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return (
        isinstance(value, tuple)
        and len(value) > 0
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    )


def apply_overrides(source: str, overrides: Mapping[str, OverrideValue]) -> str:
    """Return the task source with each overridden top-level name bound to its new value.

    The source is edited as text so that line numbers stay those of the user's file. A plain
    `NAME = expr` gets the new value in place of `expr`; any other top-level statement that binds
    the name (tuple unpacking, augmented or annotated assignment) is followed on its own line by
    `; NAME = value`. The override therefore holds from the first binding on, and expressions that
    derive from it follow.
    """
    if not overrides:
        return source
    tree = syntax.parse(source)
    unknown = set(overrides) - set(_assigned_names(tree))
    if unknown:
        raise CaseError(f"the task does not assign {', '.join(sorted(unknown))} at module level")
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, int, int, str]] = []
    for node in tree.body:
        bound = [name for name in _bound_names(node) if name in overrides]
        if not bound:
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            assert value.end_lineno is not None and value.end_col_offset is not None
            padding = "\n" * (value.end_lineno - value.lineno)
            text = f"({overrides[bound[0]]!r}{padding})"
            edits.append((value.lineno, value.col_offset, value.end_lineno, value.end_col_offset, text))
        else:
            assert node.end_lineno is not None and node.end_col_offset is not None
            text = "".join(f"; {name} = {overrides[name]!r}" for name in bound)
            edits.append((node.end_lineno, node.end_col_offset, node.end_lineno, node.end_col_offset, text))
    for start_line, start_col, end_line, end_col, text in sorted(edits, reverse=True):
        head = _char_offset(lines[start_line - 1], start_col)
        tail = _char_offset(lines[end_line - 1], end_col)
        lines[start_line - 1 : end_line] = [lines[start_line - 1][:head] + text + lines[end_line - 1][tail:]]
    return "".join(lines)


def override_notes(source: str, overrides: Mapping[str, OverrideValue]) -> list[str]:
    """What an override does to a statement that binds other names too (`height = width = 128`):
    only the overridden name changes, which a user may not expect, so kope says so."""
    notes: list[str] = []
    for node in syntax.parse(source).body:
        bound = _bound_names(node)
        changed = [name for name in bound if name in overrides]
        others = [name for name in dict.fromkeys(bound) if name not in overrides]
        if changed and others:
            statement = ast.get_source_segment(source, node) or ", ".join(bound)
            notes.append(
                f"line {node.lineno}: `{statement.strip()}` binds {', '.join(others)} too; the override "
                f"changes {', '.join(f'{n}={overrides[n]!r}' for n in changed)} only"
            )
    return notes


def _char_offset(line: str, byte_offset: int) -> int:
    """ast column offsets count UTF-8 bytes; string slicing counts characters."""
    return len(line.encode()[:byte_offset].decode(errors="ignore"))


def parse_set(assignments: Iterable[str]) -> dict[str, OverrideValue]:
    """Parse `NAME=VALUE` strings; VALUE is a Python literal (`7`, `(3, 3)`, `0.5`, `'x'`)."""
    overrides: dict[str, OverrideValue] = {}
    for text in assignments:
        name, sep, raw = text.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise CaseError(f"--set expects NAME=VALUE, got {text!r}")
        try:
            value = ast.literal_eval(raw.strip())
        except (ValueError, SyntaxError):
            raise CaseError(f"--set {name}: {raw.strip()!r} is not a Python literal (try 7, (3, 3) or 0.5)") from None
        overrides[name] = _coerce_value(value, f"--set {name}")
    return overrides


def load_cases_file(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSON list of case dicts."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise CaseError(f"cases file not found: {path}") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise CaseError(f"cases file {path} is not valid JSON: {exc}") from None
    if not isinstance(data, list):
        raise CaseError(f"cases file {path} must hold a JSON list of objects, got {type(data).__name__}")
    return data


def build_cases(
    task: Task,
    declared: Sequence[object] | None,
    *,
    set_overrides: Mapping[str, OverrideValue] | None = None,
    source: str = "get_cases()",
) -> list[Case]:
    """Validate case dicts (from a file or the task's `get_cases()`) into `Case`s.

    `declared` None means the task has no cases: one default case. `set_overrides` applies on top of
    every case; cases that become identical are merged.
    """
    set_overrides = dict(set_overrides or {})
    _check_names(task, set_overrides, "--set")
    if declared is None:
        declared = [{}]
    if not isinstance(declared, Sequence) or isinstance(declared, str | bytes):
        raise CaseError(f"{source} must be a list of dicts, got {type(declared).__name__}")
    if len(declared) == 0:
        raise CaseError(f"{source} returned no cases")
    raw_cases: list[tuple[str | None, dict[str, OverrideValue], bool | None, InputTransform | None]] = []
    for index, item in enumerate(declared):
        where = f"{source} case {index}"
        if not isinstance(item, Mapping):
            raise CaseError(f"{where} must be a dict of overrides, got {type(item).__name__}")
        name = item.get("name")
        if name is not None and not isinstance(name, str):
            raise CaseError(f"{where}: 'name' must be a string")
        visible = item.get("visible")
        if visible is not None and not isinstance(visible, bool):
            raise CaseError(f"{where}: 'visible' must be true or false")
        inputs = _input_transform(item.get("inputs"), where)
        overrides = {str(k): _coerce_value(v, f"{where} {k}") for k, v in item.items() if k not in RESERVED_CASE_KEYS}
        _check_names(task, overrides, where)
        overrides.update(set_overrides)
        raw_cases.append((name, overrides, visible, inputs))
    return _finish_cases(raw_cases)


def _input_transform(raw: object, where: str) -> InputTransform | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or set(raw) - {"scale", "shift", "pattern"}:
        raise CaseError(f"{where}: 'inputs' must be a dict with 'scale', 'shift' and/or 'pattern'")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if value is None:
            continue
        if key == "pattern":
            if value not in get_args(InputPattern):
                raise CaseError(f"{where}: inputs pattern must be one of {', '.join(get_args(InputPattern))}")
            values["pattern"] = value
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise CaseError(f"{where}: inputs {key} must be a finite number, got {value!r}")
        values[str(key)] = float(value)
    transform = InputTransform(**values)
    return None if transform.identity else transform


def _finish_cases(
    raw: list[tuple[str | None, dict[str, OverrideValue], bool | None, InputTransform | None]],
) -> list[Case]:
    any_explicit = any(visible is not None for _, _, visible, _ in raw)
    cases: list[Case] = []
    seen_keys: set[str] = set()
    used_names: set[str] = set()
    for index, (name, overrides, visible, inputs) in enumerate(raw):
        is_visible = bool(visible) if any_explicit else index == 0
        default_name = default_case_name(overrides)
        if inputs is not None:
            default_name = inputs.label() if not overrides else f"{default_name},{inputs.label()}"
        case = Case(name=name or default_name, overrides=overrides, visible=is_visible, inputs=inputs)
        if case.key() in seen_keys:
            continue
        seen_keys.add(case.key())
        unique = case.name
        suffix = 2
        while unique in used_names:
            unique = f"{case.name}#{suffix}"
            suffix += 1
        used_names.add(unique)
        cases.append(Case(name=unique, overrides=case.overrides, visible=case.visible, inputs=inputs))
    if not any(c.visible for c in cases):
        first = cases[0]
        cases[0] = Case(name=first.name, overrides=first.overrides, visible=True, inputs=first.inputs)
    return cases


def default_case_name(overrides: Mapping[str, OverrideValue]) -> str:
    if not overrides:
        return "default"
    return ",".join(f"{k}={_short(v)}" for k, v in overrides.items())


def _short(value: OverrideValue) -> str:
    if isinstance(value, tuple):
        return "x".join(str(v) for v in value)
    return str(value)


def _check_names(task: Task, overrides: Mapping[str, OverrideValue], where: str) -> None:
    unknown = [name for name in overrides if name not in task.assigned_names]
    if unknown:
        known = ", ".join(task.literal_sizes) or "none"
        raise CaseError(
            f"{where} sets {', '.join(unknown)}, which the task does not assign at module level "
            f"(size parameters: {known})"
        )


def _coerce_value(value: object, where: str) -> OverrideValue:
    if isinstance(value, list):
        value = tuple(value)
    if isinstance(value, tuple):
        for item in value:
            _coerce_value(item, where)
        return value
    if isinstance(value, bool | int | float | str):
        return value
    raise CaseError(f"{where}: {value!r} is not a number, string or list of numbers")


def _jsonable(value: object) -> object:
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def parse_tolerances(raw: object) -> dict[str, Tolerance]:
    """Validate a task's `TOLERANCES` dict: dtype name to {atol, rtol} or (atol, rtol)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise TaskFileError(f"{TOLERANCES_NAME} must be a dict of dtype name to {{'atol', 'rtol'}}")
    result: dict[str, Tolerance] = {}
    for dtype, spec in raw.items():
        dtype_name = str(dtype).removeprefix("torch.")
        try:
            if isinstance(spec, Mapping):
                result[dtype_name] = Tolerance(atol=float(spec["atol"]), rtol=float(spec["rtol"]))
            else:
                atol, rtol = spec
                result[dtype_name] = Tolerance(atol=float(atol), rtol=float(rtol))
        except (KeyError, TypeError, ValueError):
            raise TaskFileError(
                f"{TOLERANCES_NAME}[{dtype!r}] must be {{'atol': float, 'rtol': float}} or (atol, rtol)"
            ) from None
    return result
