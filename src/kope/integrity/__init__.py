"""Integrity gates: catch the ways a generated kernel fakes success.

- `static`: rules over the candidate's syntax tree (it never runs there), with `vocabulary`: what the
  names they look for mean (compute, tamper, reference access, processes);
- `kope.evaluate.inside.monitor` (with `provenance`): checks inside the candidate's process while it
  runs (launch counts, PyTorch calls, mutation, aliasing, tampering, threads, ghost replay); it lives
  with the rest of the sandboxed side, and the PyTorch allowlist both sides apply is
  `kope.protocol.policy`;
- `dynamic`: findings from what the monitor saw and from the evaluation (caching probe, hidden-case
  failures, impossible speed);
- `gate`: everything merged into one verdict, which `Evaluator.evaluate` attaches to its result.

Rule ids, titles and plain-word explanations: `rules.RULES`.
"""

from kope.integrity.dynamic import verdict
from kope.integrity.rules import RULES, Rule, explain
from kope.integrity.static import StaticContext, check_source

__all__ = ["RULES", "Rule", "StaticContext", "check_source", "explain", "verdict"]
