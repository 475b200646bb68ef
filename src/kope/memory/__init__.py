"""The experience graph memory: every debug and optimize run, recorded; experience packed into prompts.

    from kope.memory import ExperienceStore
    with ExperienceStore.open() as store:            # SQLite at data_dir()/memory.db; or any SQLAlchemy URL
        print(store.stats())

See docs/guide/memory.md for the design.
"""

from kope.memory.store import (
    DecisionIn,
    EvaluationRecord,
    ExperienceStore,
    Injected,
    RunRecord,
    StoreError,
    TaskRecord,
    VersionRecord,
    default_url,
)

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
