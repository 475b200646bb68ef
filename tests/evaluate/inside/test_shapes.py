"""The shapes job's meta-device shapes of the recurrent modules (kope.evaluate.inside.shapes)."""

from __future__ import annotations

import time
from typing import Any

import pytest
import torch

from kope.evaluate.inside.shapes import _recurrent_shapes


def _shapes(value: Any) -> list[tuple[int, ...]]:
    if isinstance(value, torch.Tensor):
        return [tuple(value.shape)]
    return [shape for item in value for shape in _shapes(item)]


def _run(module: type[torch.nn.Module], batch_first: bool, bidirectional: bool, state: bool, **extra: int) -> Any:
    torch.manual_seed(0)
    model = module(5, 7, num_layers=2, batch_first=batch_first, bidirectional=bidirectional, **extra)
    x = torch.rand((4, 6, 5) if batch_first else (6, 4, 5))
    if not state:
        return _shapes(model(x))
    layers = 2 * (2 if bidirectional else 1)
    h0 = torch.rand(layers, 4, extra.get("proj_size") or 7)
    hx = (h0, torch.rand(layers, 4, 7)) if module is torch.nn.LSTM else h0
    return _shapes(model(x, hx))


@pytest.mark.parametrize("module", [torch.nn.LSTM, torch.nn.GRU, torch.nn.RNN])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("state", [False, True])
def test_recurrent_modules_on_the_meta_device_have_their_real_shapes(
    module: type[torch.nn.Module], batch_first: bool, bidirectional: bool, state: bool
) -> None:
    real = _run(module, batch_first, bidirectional, state)
    with torch.device("meta"), torch.no_grad(), _recurrent_shapes():
        assert _run(module, batch_first, bidirectional, state) == real


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
def test_lstm_projection_a_wrong_size_and_a_long_sequence_on_the_meta_device() -> None:
    real = _run(torch.nn.LSTM, True, True, True, proj_size=3)
    with torch.device("meta"), torch.no_grad(), _recurrent_shapes():
        assert _run(torch.nn.LSTM, True, True, True, proj_size=3) == real
        with pytest.raises(RuntimeError, match="input_size"):
            torch.nn.GRU(5, 7)(torch.rand(3, 2, 6))
        began = time.perf_counter()
        out, _ = torch.nn.LSTM(128, 256, 6)(torch.rand(512, 10, 128))
        assert out.shape == (512, 10, 256) and time.perf_counter() - began < 5, "not step by step"
    assert torch.lstm(torch.rand(3, 2, 5), *_lstm_args()) is not None, "the real op is back outside"


def _lstm_args() -> tuple[Any, ...]:
    model = torch.nn.LSTM(5, 7)
    hx = (torch.zeros(1, 2, 7), torch.zeros(1, 2, 7))
    return (hx, model._flat_weights, True, 1, 0.0, False, False, False)
