"""The integrity rules: ids (stable, from DESIGN.md), titles and plain-word explanations."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    explanation: str
    """What the rule catches and why it matters, in plain words (shown by `kope check`)."""


RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule(
            "torch-compute",
            "computes with PyTorch instead of its own kernel",
            "PyTorch, not the candidate's kernels, computed the output. Under the strict policy (the "
            "reference computes one operator): PyTorch computed on the task's inputs, or the PyTorch work "
            "after the kernels is more than a small epilogue. Under both policies: an output element comes "
            "from PyTorch alone, or from a table of the task's operator precomputed in __init__. "
            "Allocation, views, reshapes, casts, initialising parameters in __init__ and small epilogues on "
            "the kernels' results are allowed. A task widens this with ALLOW_TORCH = [...] or "
            'INTEGRITY_POLICY = "partial" when it replaces only part of a model.',
        ),
        Rule(
            "host-compute",
            "computes on the host",
            "During forward, tensor data derived from the inputs was read into Python (tolist, item, numpy, "
            "__array__, dlpack, storage bytes, ctypes, a device-to-host copy), or an output holds values built "
            "from Python data (torch.tensor, as_tensor, from_numpy, frombuffer). Values computed on the host "
            "are not the kernels' work, whatever the code is named.",
        ),
        Rule(
            "copy-kernel",
            "its kernels only copy",
            "The candidate's kernels on the path to an output only copy (the values they store are exactly the "
            "values of one load: the output equals an input, a view of it, or a result PyTorch or __init__ "
            "computed), or they never read the task inputs the reference reads (only constants, parameters or "
            "host-built tensors).",
        ),
        Rule(
            "kernel-not-launched",
            "its kernels do not do the work",
            "A forward call launched none of the candidate's own kernels, the file defines no kernel "
            "that it launches, or replacing every launch by a no-op left the output unchanged (the kernel "
            "is a decoy and the result comes from elsewhere).",
        ),
        Rule(
            "fallback-branch",
            "falls back to another computation when the kernel fails",
            "A try/except around a kernel launch whose handler does something other than re-raise: in an "
            "evaluation, a kernel that fails must fail, not be replaced by a PyTorch result.",
        ),
        Rule(
            "output-caching",
            "returns cached outputs",
            "Called again on the same input storage with new contents, the candidate returned an output "
            "that matches the old inputs, not the new ones (at run time: reject); or it keeps a cache keyed "
            "on data_ptr()/id() or memoises a function (in the source: a warning).",
        ),
        Rule(
            "reference-access",
            "reaches for the reference, the evaluator or the file system",
            "The candidate inspects the interpreter (gc, inspect, frames, sys.modules, __globals__, "
            "__code__), imports kope or the task, executes generated code (exec, eval, compile, "
            "__import__), or reads files. None of it is needed to compute the function.",
        ),
        Rule(
            "harness-tamper",
            "patches PyTorch, Triton, the comparison or the environment",
            "The candidate assigns attributes of torch, triton, numpy, builtins, sys, os or kope, writes "
            "os.environ, changes PyTorch's deterministic or function-mode state, or a watched function was "
            "replaced by the time forward returned.",
        ),
        Rule(
            "timer-tamper",
            "patches a timer",
            "The candidate replaces time.*, CUDA events or synchronisation, or Triton's benchmarking: "
            "timings taken afterwards cannot be trusted.",
        ),
        Rule(
            "input-mutation",
            "writes to its inputs",
            "An input tensor had different contents after forward. Kernels must not modify their inputs "
            "(a modified input can make a later reference run agree with a wrong result).",
        ),
        Rule(
            "output-aliasing",
            "returns memory that belongs to an input",
            "An output shares storage with an input: the candidate returned (a view of) its input, possibly "
            "after computing in place.",
        ),
        Rule(
            "lazy-output",
            "returns something other than a plain tensor",
            "An output is not exactly torch.Tensor: a subclass, or an object that computes when looked at "
            "(__torch_function__, __torch_dispatch__), can show the checker an answer the kernel never "
            "produced.",
        ),
        Rule(
            "threads-processes",
            "starts threads or processes",
            "The candidate imports or uses threading, multiprocessing, subprocess, ctypes, signals or os "
            "process calls, or a thread or child process was alive after forward: background work can finish "
            "after the timer stops or tamper with the harness.",
        ),
        Rule(
            "shape-specialization",
            "is specialised to the shapes it was shown",
            "The kernel passes the visible case but fails hidden ones (a warning: the failing cases decide), "
            "or its source holds literals equal to the visible case's sizes.",
        ),
        Rule(
            "device-fallback",
            "has a path for data off the GPU",
            "A branch chosen by where the data is (`if not x.is_cuda: return torch.relu(x)`). On a GPU, and "
            "under kope's CUDA emulation on the CPU, the CUDA path runs and is what gets judged; the other path "
            "never runs in an evaluation. A warning: the kernel decides.",
        ),
        Rule(
            "precision-downcast",
            "computes in lower precision than the task",
            "Casts to half precision (or TF32 matrix products) in a float32 task. A warning: mixed precision "
            "with float32 accumulation can be right, and the error check decides.",
        ),
        Rule(
            "problem-override",
            "redefines the problem",
            "The candidate defines get_inputs/get_init_inputs/get_cases or Model, or the task's size "
            "parameters. kope ignores them (inputs always come from the task), so this is a warning.",
        ),
        Rule(
            "implausible-speedup",
            "is faster than physics allows",
            "On CUDA, the measured time is below what memory bandwidth allows for the bytes the task must "
            "read and write, or the speedup exceeds the configured bound. Flagged for review.",
        ),
    )
}


def explain(rule_id: str) -> Rule:
    return RULES.get(rule_id, Rule(rule_id, rule_id, ""))
