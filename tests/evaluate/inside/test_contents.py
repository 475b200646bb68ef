"""What tracked memory held when a tracked writer last touched it: changes behind kope's back are seen, tracked
writes and other storages are not mistaken for them."""

import ctypes

import torch

from kope.evaluate.inside.contents import Contents


def _poke(tensor: torch.Tensor, index: int, value: float) -> None:
    """Write one float32 where no hook sees it."""
    ctypes.c_float.from_address(tensor.data_ptr() + index * 4).value = value


def test_a_write_by_address_after_the_last_tracked_write_is_a_change() -> None:
    contents, t = Contents(), torch.zeros(8)
    contents.note(t)
    assert not contents.changed(t)
    _poke(t, 3, 1.5)
    assert contents.changed(t)
    assert contents.changed(t[2:5]), "a view reads the same storage"


def test_a_tracked_write_noted_again_is_no_change() -> None:
    contents, t = Contents(), torch.zeros(8)
    contents.note(t)
    t.add_(1.0)
    contents.note(t)
    assert not contents.changed(t)


def test_a_kernel_store_into_a_kept_storage_refreshes_it() -> None:
    contents, t = Contents(), torch.zeros(8)
    contents.note(t)
    _poke(t, 7, 2.0)  # as a store beyond its own tensor would, from a kernel kope traced
    contents.note_ranges([(t.data_ptr() + 28, t.data_ptr() + 32)])
    assert not contents.changed(t)
    _poke(t, 6, 3.0)
    contents.note_ranges([(t.data_ptr() + 24, t.data_ptr() + 28)], skip={t.data_ptr()})
    assert contents.changed(t), "a storage in skip is not refreshed"
    far = torch.zeros(8)
    contents.note(far)
    _poke(far, 0, 1.0)
    contents.note_ranges([(t.data_ptr(), t.data_ptr() + 4)])
    assert contents.changed(far), "a range elsewhere refreshes nothing else"


def test_memory_never_noted_is_not_judged() -> None:
    contents, t = Contents(), torch.zeros(8)
    _poke(t, 0, 1.0)
    assert not contents.changed(t)


def test_a_resized_storage_is_not_compared_with_its_old_bytes() -> None:
    contents, t = Contents(), torch.zeros(8)
    contents.note(t)
    assert not contents.changed(t)
    t.resize_(4096)  # still resizable: kope's copies leave the candidate's storages as they were
    t.fill_(1.0)
    assert not contents.changed(t)


def test_the_copies_are_capped_oldest_first(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("kope.evaluate.inside.contents.MAX_BYTES", 64)
    contents, a, b = Contents(), torch.zeros(8), torch.zeros(8)
    contents.note(a)
    contents.note(b)
    assert contents.held == 64
    c = torch.zeros(8)
    contents.note(c)
    assert contents.held == 64 and len(contents.entries) == 2
    _poke(a, 0, 1.0)
    assert not contents.changed(a), "a's copy went first"
    _poke(c, 0, 1.0)
    assert contents.changed(c)
