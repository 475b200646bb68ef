"""The experience graph memory: every debug and optimize run, recorded; experience packed into prompts.

    from kope.memory import ExperienceStore
    with ExperienceStore.open() as store:            # SQLite at data_dir()/memory.db; or any SQLAlchemy URL
        print(store.stats())

See docs/guide/memory.md for the design.
"""

from kope.memory.engine import default_url
from kope.memory.records import DecisionIn, EvaluationRecord, Injected, RunRecord, TaskRecord, VersionRecord
from kope.memory.store import ExperienceStore, StoreError

__all__ = [
    "DecisionIn",
    "EvaluationRecord",
    "ExperienceStore",
    "Injected",
    "RunRecord",
    "StoreError",
    "TaskRecord",
    "VersionRecord",
    "default_url",
]
