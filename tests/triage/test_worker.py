"""Names of the files triage writes per candidate."""

from __future__ import annotations

from kope.triage.worker import slug


def test_a_plain_id_keeps_its_readable_name() -> None:
    assert slug("level1/1_relu/sample_1.py") == "level1__1_relu__sample_1"


def test_ids_that_would_share_a_name_get_distinct_names() -> None:
    ids = ["a/b.py", "a__b.py", "a_/b.py", "a/_b.py", "a b.py", "a?b.py", "a_b.py"]
    names = [slug(ident) for ident in ids]
    assert len(set(names)) == len(ids), names
    assert all("/" not in name for name in names)
