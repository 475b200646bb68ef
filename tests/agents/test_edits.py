from __future__ import annotations

import pytest

from kope.agents.edits import EditError, parse_reply

SOURCE = """import torch


def launch(x):
    y = torch.empty_like(x)
    grid = (x.numel() // 256,)
    return y
"""


def test_search_replace_blocks_apply_in_order() -> None:
    reply = """The grid is too small.
<<<<<<< SEARCH
    grid = (x.numel() // 256,)
=======
    grid = (triton.cdiv(x.numel(), 256),)
>>>>>>> REPLACE
and the import:
<<<<<<< SEARCH
import torch
=======
import torch
import triton
>>>>>>> REPLACE
"""
    parsed = parse_reply(reply)
    assert len(parsed.blocks) == 2 and parsed.whole_file is None
    edited = parsed.apply(SOURCE)
    assert "triton.cdiv(x.numel(), 256)" in edited and "import triton\n" in edited


def test_loose_matching_of_whitespace_and_indentation() -> None:
    reply = (
        "<<<<<<< SEARCH\ny = torch.empty_like(x)   \ngrid = (x.numel() // 256,)\n=======\ny = torch.zeros_like(x)\n"
        "grid = (1,)\n>>>>>>> REPLACE\n"
    )
    edited = parse_reply(reply).apply(SOURCE)
    assert "    y = torch.zeros_like(x)\n    grid = (1,)\n" in edited


def test_edits_that_do_not_apply_say_why() -> None:
    missing = "<<<<<<< SEARCH\nnot in the file\n=======\nx\n>>>>>>> REPLACE\n"
    with pytest.raises(EditError, match="not in the current kernel"):
        parse_reply(missing).apply(SOURCE)
    twice = "<<<<<<< SEARCH\n(x)\n=======\n(z)\n>>>>>>> REPLACE\n"
    with pytest.raises(EditError, match="occurs 2 times"):
        parse_reply(twice).apply("f(x)\ng(x)\n")


def test_whole_file_and_requests() -> None:
    reply = "Here:\n```python\nclass ModelNew:\n    pass\n```\n"
    assert parse_reply(reply).whole_file == "class ModelNew:\n    pass\n"
    requests = parse_reply(
        "Let me look.\nTRACE kernel=_k line=12 pid=3,0,0\nPROBE bounds\n```python\nPROBE sizes\n```\n"
    ).requests
    assert [(r.kind, r.kernel, r.line, r.pid) for r in requests] == [
        ("trace", "_k", 12, (3, 0, 0)),
        ("bounds", "", 0, (0, 0, 0)),
    ]
    assert not parse_reply("I am not sure what is wrong.").has_edit
