"""Agents: the debug loop (kope's main job) and the regenerate baseline.

from kope.agents import DebugConfig, debug
report = debug("task.py", "near_miss.py", load_model("offline"), out=Path("fixed.py"), evaluator=evaluator)
"""

from kope.agents.debug import DebugConfig, DebugLoop, DebugReport, debug
from kope.agents.regenerate import RegenerateReport, pass_at_k, regenerate
from kope.loop import LoopLimits

__all__ = [
    "DebugConfig",
    "DebugLoop",
    "DebugReport",
    "LoopLimits",
    "RegenerateReport",
    "debug",
    "pass_at_k",
    "regenerate",
]
