"""What the sandbox supervisor reports to the parent: which protections held for a job (`kope.evaluate.confine`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Level = Literal["namespaces", "landlock", "process"]
SandboxMode = Literal["strict", "auto", "off", "landlock", "process"]
SANDBOX_MODES: tuple[str, ...] = ("strict", "auto", "off", "landlock", "process")


class SandboxReport(BaseModel):
    """Which protections held for a job (or, combined, for every job of an evaluation)."""

    level: Level = "process"
    mode: SandboxMode = "auto"
    protections: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    """Protections that were tried and did not hold, each with the reason."""

    @property
    def weaker_than_namespaces(self) -> bool:
        return self.level != "namespaces"

    def summary(self) -> str:
        text = f"sandbox: {self.level}"
        if self.missing:
            text += " (" + "; ".join(self.missing) + ")"
        return text
