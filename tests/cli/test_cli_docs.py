"""kope's docs stand alone and stay true: no reader is sent to a file they do not have, the contracts page
lists every id the code knows, and every command the README shows exists with the options it is given
(the self-contained ones are run as written)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import get_args

import pytest
import typer
from typer.core import TyperGroup, TyperOption
from typer.testing import CliRunner

from kope.cli import app
from kope.integrity.rules import RULES
from kope.knowledge.base import KnowledgeBase
from kope.loop import STOP_REASONS
from kope.protocol.results import EvalError

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
GUIDES = sorted((ROOT / "docs" / "guide").glob("*.md"))
CONTRACTS = ROOT / "docs" / "guide" / "contracts.md"


def test_no_doc_sends_a_reader_to_the_design_notes() -> None:
    for page in [README, ROOT / "docs" / "README.md", *GUIDES]:
        assert "DESIGN.md" not in page.read_text(), page


def test_the_contracts_list_every_id_the_code_knows() -> None:
    text = CONTRACTS.read_text()
    ids = {
        "stop reason": STOP_REASONS,
        "integrity rule": tuple(RULES),
        "taxonomy id": tuple(p.id for p in KnowledgeBase.load().patterns.values() if p.origin == "shipped"),
        "error kind": get_args(EvalError.model_fields["kind"].annotation),
    }
    for what, names in ids.items():
        assert names, what
        for name in names:
            assert f"`{name}`" in text, f"{what} {name} is missing from {CONTRACTS.name}"


def readme_commands() -> list[list[str]]:
    """Every `kope ...` line of the README's bash blocks, split as a shell splits it (comments dropped)."""
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S)
    found = []
    for block in blocks:
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if "kope" in words:
                found.append(words[words.index("kope") + 1 :])
            elif any(w.endswith("/kope") for w in words):
                found.append(words[next(i for i, w in enumerate(words) if w.endswith("/kope")) + 1 :])
    return found


def test_every_readme_command_exists_with_the_options_it_is_given() -> None:
    root = typer.main.get_command(app)
    commands = readme_commands()
    assert len(commands) >= 30
    with root.make_context("kope", ["--help"], resilient_parsing=True) as ctx:
        for words in commands:
            command: typer.core.TyperCommand | TyperGroup = root  # type: ignore[assignment]
            rest = list(words)
            while isinstance(command, TyperGroup) and rest and not rest[0].startswith("-"):
                sub = command.get_command(ctx, rest.pop(0))
                assert sub is not None, words
                command = sub  # type: ignore[assignment]
            shown = {o for p in command.get_params(ctx) if isinstance(p, TyperOption) and not p.hidden for o in p.opts}
            shown |= {o for p in command.get_params(ctx) if isinstance(p, TyperOption) for o in p.secondary_opts}
            for word in rest:
                if word.startswith("-") and not re.fullmatch(r"-?\d+(\.\d+)?", word):
                    assert word.split("=")[0] in shown, (words, word)


SELF_CONTAINED = [
    ["--version"],
    ["ops", "list"],
    ["ops", "path", "softmax"],
    ["kb", "list"],
    ["kb", "show", "missing-mask"],
    ["bench", "suite", "default"],
    ["memory", "stats"],
]


@pytest.mark.parametrize("words", SELF_CONTAINED, ids=" ".join)
def test_the_self_contained_readme_examples_run_as_written(
    words: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert words in readme_commands()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))  # a fresh user's store
    result = CliRunner().invoke(app, words)
    assert result.exit_code == 0, result.output
    assert result.output.strip() and "error" not in result.output.lower().split()[0]
