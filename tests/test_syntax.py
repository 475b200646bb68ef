"""kope.syntax: parses are serialised (CPython 3.11's AST construction is not thread-safe)."""

from __future__ import annotations

import ast
import threading

from kope import syntax


def test_parse_returns_the_tree_and_reports_the_filename() -> None:
    tree = syntax.parse("x = 1\n", filename="candidate.py")
    assert isinstance(tree, ast.Module) and isinstance(tree.body[0], ast.Assign)
    try:
        syntax.parse("def (", filename="candidate.py")
    except SyntaxError as exc:
        assert exc.filename == "candidate.py"
    else:
        raise AssertionError("a syntax error must propagate")


def test_a_parse_waits_while_another_thread_parses() -> None:
    done = threading.Event()
    worker = threading.Thread(target=lambda: (syntax.parse("y = 2\n"), done.set()))
    with syntax._LOCK:  # another parse in progress
        worker.start()
        assert not done.wait(0.3), "the parse must wait for the one in progress"
    assert done.wait(10)
    worker.join()
