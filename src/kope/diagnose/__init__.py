"""Diagnosis: why a near miss fails, as features, cues and ranked hypotheses.

    with Evaluator() as evaluator:
        diagnosis = Diagnoser(evaluator).diagnose("task.py", "near_miss.py")
        print(diagnosis.hypotheses[0].pattern, diagnosis.features.measured())

`Diagnosis` (report) is what `kope diagnose --json` prints; the extraction of its features is in
`extract`, the per-output mismatch signature in `signature`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kope._lazy import exports

if TYPE_CHECKING:
    from kope.diagnose.diagnoser import Diagnoser
    from kope.diagnose.report import CaseDiagnosis, Diagnosis, Probe

_HOMES = {
    "CaseDiagnosis": "kope.diagnose.report",
    "Diagnoser": "kope.diagnose.diagnoser",
    "Diagnosis": "kope.diagnose.report",
    "Probe": "kope.diagnose.report",
}

__all__ = [
    "CaseDiagnosis",
    "Diagnoser",
    "Diagnosis",
    "Probe",
]

__getattr__ = exports(__name__, _HOMES)
