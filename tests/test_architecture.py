"""The import contract: which code may import which, checked on the source (AST), not by running it.

Three rules keep the tree's shape honest:

- the process boundary: `kope.evaluate.inside` (what runs in the sandboxed, untrusted process)
  imports only itself and `kope.protocol` (the base layer, which imports nothing else of kope); the parent
  side imports `inside` only from the process-start code (`kope.evaluate.runner`'s fork server and spawn entry point);
- layering: each package has a layer, and no module imports a package of a higher layer (no exceptions);
- no import cycles between packages: no two packages import each other.

Every import counts, also those inside functions: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

INSIDE = "kope.evaluate.inside"
PROTOCOL = "kope.protocol"
STARTS_INSIDE = frozenset({"kope.evaluate.runner"})
"""Parent-side modules that may name `inside`: they start the sandboxed process by module path."""

LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "kope.errors",
        "kope.paths",
        "kope.syntax",
        "kope.text",
        "kope.hashing",
        "kope.device",
        "kope.source",
        "kope._lazy",
    ),
    (PROTOCOL,),
    (INSIDE,),
    ("kope.cases",),
    ("kope.integrity",),
    ("kope.evaluate",),
    ("kope.bugs",),
    ("kope.knowledge", "kope.ops"),
    ("kope.diagnose",),
    ("kope.loop",),
    ("kope.repair",),
    ("kope.context",),
    ("kope.memory", "kope.models"),
    ("kope.agents",),
    ("kope.bench", "kope.executors", "kope.triage"),
    ("kope.render", "kope.console"),
    ("kope.cli", "kope.__main__", "kope"),
)
"""Lowest first. A module may import its own layer and those below, never one above."""

KNOWN_MODULE_CYCLES: dict[str, list[str]] = {
    "the executors package lazily loads its optional Ray backend, which implements the package's protocols": [
        "kope.executors",
        "kope.executors.raycluster",
    ],
    "the triage report names the run's summary type for mypy only (TYPE_CHECKING)": [
        "kope.triage.report",
        "kope.triage.run",
    ],
}
"""Cycles between modules inside one package that are known and harmless (reason -> the modules)."""


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str
    line: int


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str | None:
    if node.level == 0:
        return node.module
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(source: str, importer: str, is_package: bool, known: frozenset[str]) -> Iterator[Edge]:
    """kope modules that `source` imports, at any depth (functions too); `from pkg import mod` names mod."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "kope":
                    yield Edge(importer, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(importer, is_package, node)
            if target is None or target.split(".")[0] != "kope":
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield Edge(importer, sub if sub in known else target, node.lineno)


@functools.cache
def kope_edges(src: Path = SRC) -> list[Edge]:
    paths = sorted((src / "kope").rglob("*.py"))
    known = frozenset(module_name(p, src) for p in paths)
    edges: list[Edge] = []
    for path in paths:
        text = path.read_text()
        if "kope" not in text and "from ." not in text:
            continue  # nothing to resolve: spares parsing the operator suite's kernels
        edges.extend(imports_of(text, module_name(path, src), path.name == "__init__.py", known))
    return sorted({e for e in edges if e.imported != e.importer}, key=lambda e: (e.importer, e.line, e.imported))


def _within(module: str, package: str) -> bool:
    """`module` is `package` or inside it; the root `kope` holds only itself (its `__init__`)."""
    return module == package or (package != "kope" and module.startswith(package + "."))


def unit_of(module: str) -> tuple[int, str]:
    """The layer and the package (the longest matching prefix of `LAYERS`) a module belongs to."""
    best: tuple[int, str] | None = None
    for index, packages in enumerate(LAYERS):
        for package in packages:
            if _within(module, package) and (best is None or len(package) > len(best[1])):
                best = (index, package)
    if best is None:
        raise AssertionError(f"{module} has no layer: add its package to LAYERS in tests/test_architecture.py")
    return best


def boundary_violations(edges: Iterable[Edge]) -> list[str]:
    found = []
    for e in edges:
        if _within(e.importer, INSIDE) and not (_within(e.imported, INSIDE) or _within(e.imported, PROTOCOL)):
            found.append(f"{e.importer}:{e.line} imports {e.imported}: inside imports only itself and protocol")
        elif _within(e.importer, PROTOCOL) and not _within(e.imported, PROTOCOL):
            found.append(f"{e.importer}:{e.line} imports {e.imported}: protocol imports nothing else of kope")
        elif _within(e.imported, INSIDE) and not _within(e.importer, INSIDE) and e.importer not in STARTS_INSIDE:
            found.append(f"{e.importer}:{e.line} imports {e.imported}: only the process-start code names inside")
    return found


PROTOCOL_USERS = ("kope.cases", "kope.evaluate", "kope.integrity")
"""The packages above the protocol that it must never name: it is their common base."""


def protocol_violations(edges: Iterable[Edge]) -> list[str]:
    return [
        f"{e.importer}:{e.line} imports {e.imported}: the protocol is the base of cases, evaluate and integrity"
        for e in edges
        if _within(e.importer, PROTOCOL) and any(_within(e.imported, user) for user in PROTOCOL_USERS)
    ]


def layer_violations(edges: Iterable[Edge]) -> list[str]:
    found = []
    for e in edges:
        (low, _), (high, package) = unit_of(e.importer), unit_of(e.imported)
        if high > low:
            found.append(f"{e.importer}:{e.line} imports {e.imported}, a higher layer ({package})")
    return found


def package_cycles(edges: Iterable[Edge]) -> list[list[str]]:
    """Groups of more than one package that import each other."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(unit_of(e.importer)[1], set()).add(unit_of(e.imported)[1])
    return _cycles(graph)


def module_cycles(edges: Iterable[Edge]) -> list[list[str]]:
    """Groups of more than one module that import each other, type-only imports included."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.importer, set()).add(e.imported)
    return _cycles(graph)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one node (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def test_the_sandboxed_side_and_the_parent_meet_only_in_protocol() -> None:
    assert boundary_violations(kope_edges()) == []


def test_no_package_imports_a_higher_layer() -> None:
    assert layer_violations(kope_edges()) == []


def test_no_import_cycles_between_packages() -> None:
    assert package_cycles(kope_edges()) == []


def test_no_import_cycles_between_modules() -> None:
    assert [group for group in module_cycles(kope_edges()) if group not in KNOWN_MODULE_CYCLES.values()] == []


def test_the_protocol_imports_none_of_its_users() -> None:
    assert protocol_violations(kope_edges()) == []


def test_the_contract_catches_a_wrong_import(tmp_path: Path) -> None:
    """The checks are not vacuous: a worker importing the evaluator, a protocol importing cases, a cycle and an
    upward import fail."""
    package = tmp_path / "kope"
    for sub, text in {
        "evaluate/inside/worker.py": "def f():\n    from kope.evaluate import evaluator\n",
        "evaluate/evaluator.py": "from kope.evaluate.inside import worker\n",
        "cases/task.py": "import kope.agents.debug\n",
        "agents/debug.py": "from kope.cases import task\n",
        "protocol/results.py": "from kope.cases import task\n",
    }.items():
        (package / sub).parent.mkdir(parents=True, exist_ok=True)
        (package / sub).write_text(text)
    edges = sorted(set(kope_edges(tmp_path)), key=lambda e: (e.importer, e.line))
    assert len(boundary_violations(edges)) == 3
    assert [v.split(":")[0] for v in protocol_violations(edges)] == ["kope.protocol.results"]
    assert [v.split(":")[0] for v in layer_violations(edges)] == [
        "kope.cases.task",
        "kope.evaluate.inside.worker",
        "kope.protocol.results",
    ]
    assert package_cycles(edges) == [["kope.agents", "kope.cases"], ["kope.evaluate", "kope.evaluate.inside"]]
    assert module_cycles(edges) == [
        ["kope.agents.debug", "kope.cases.task"],
        ["kope.evaluate.evaluator", "kope.evaluate.inside.worker"],
    ]


def test_reaching_inside_and_protocol_loads_no_parent_side_module() -> None:
    """At run time too: the package namespaces are lazy, so reaching `inside` and `protocol` (the AST
    rules cover what their modules import) loads no evaluator. Not the worker itself: torch is slow."""
    probe = (
        "import sys, kope.evaluate.inside, kope.protocol.policy\n"
        "print('\\n'.join(m for m in sys.modules if m.startswith('kope')))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    loaded = done.stdout.split()
    assert {INSIDE, f"{PROTOCOL}.policy"} <= set(loaded)
    outside = [m for m in loaded if not (_within(m, INSIDE) or _within(m, PROTOCOL))]
    assert sorted(outside) == ["kope", "kope._lazy", "kope.evaluate"], "the package namespaces and their lazy loader"
