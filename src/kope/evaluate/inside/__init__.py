"""What runs in the sandboxed, untrusted process: the worker and everything it uses.

The fork server (`kope.evaluate.runner`) imports `worker` once and forks a supervisor per job; the
supervisor (`kope.evaluate.sandbox`, parent-side code) forks the worker process, which loads the task
and the candidate. Everything here may therefore run next to hostile code: the worker, shapes jobs,
tensor exchange (safetensors, never pickle), timing, the Triton interpreter set-up, the integrity
monitor (`monitor`, over `tracing`, `hooks`, `watch` and `outputs`) and its provenance tracking, the bounds
checker and the tracer.

Modules here import only this package, `kope.protocol` (the typed data both sides share),
the standard library and third-party code: never the parent side (the evaluator, compare, diagnosis,
knowledge...). The `kope` and `kope.evaluate` package namespaces load their names lazily, so
importing this package does not pull the evaluator in either. The parent side imports nothing from
here except the process-start code in `runner`. `tests/test_architecture.py` checks both rules.
"""
