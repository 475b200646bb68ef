"""How a case's floating-point inputs are made: the transform a case applies after `get_inputs()`.

A case carries it (`kope.cases.task.Case.inputs`), a result reports it (`kope.protocol.results.CaseResult.inputs`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

InputPattern = Literal["ones", "zeros", "arange", "onehot", "identity", "symmetric", "outliers"]


class InputTransform(BaseModel):
    """A case's change of input distribution: floating-point inputs become `x * scale + shift`.

    With a `pattern`, each floating-point input is first replaced by a structured tensor of its
    shape: all ones, all zeros, `arange` (0, 1/n, 2/n... over the flattened tensor), `onehot` (a 1 at
    the first position of the last dimension, zeros elsewhere) or `identity` (the identity matrix over
    the last two dimensions); `symmetric` keeps the values but makes the last two dimensions symmetric
    (`(x + x.T) / 2`, where they are equal); `outliers` keeps the values but multiplies every 61st element
    of the flattened tensor by 10, alternately by -10. Diagnosis probes use them ("right on ones, wrong on
    arange"); derivation widens a low-signal task's inputs with `outliers` (see `kope.cases.derive`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    scale: float = 1.0
    shift: float = 0.0
    pattern: InputPattern | None = None

    @property
    def identity(self) -> bool:
        return self.scale == 1.0 and self.shift == 0.0 and self.pattern is None

    def label(self) -> str:
        """`x*4`, `x-0.5`, `x*100+1`, `ones`, `arange*100`."""
        scale = f"*{self.scale:g}" if self.scale != 1.0 else ""
        shift = f"{self.shift:+g}" if self.shift != 0.0 else ""
        return f"{self.pattern or 'x'}{scale}{shift}"

    @model_serializer(mode="wrap")
    def _drop_no_pattern(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """`{"scale": 4.0, "shift": 0.0}` in JSON, `pattern` only where there is one."""
        data: dict[str, Any] = handler(self)
        if data.get("pattern") is None:
            data.pop("pattern", None)
        return data
