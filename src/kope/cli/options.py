"""The option vocabulary: one spelling per concept, shared by every command that evaluates or searches.

    --out --json --device --sandbox --policy --tolerance --module-mode --trials --timeout --set --cases
    --cache-dir --store --max-tokens --max-seconds --max-iterations

An option left out takes the library's default (`EvalOptions`, `LoopLimits`, `OptimizeConfig`): the
declarations here default to None and `kope.cli.run` fills in the rest from those objects, so a
default is stated once, in the library. The help shows it, read from the same objects.

Old spellings (`--budget-tokens`, `--budget-seconds`, `--iterations`, `--out-dir`) are kept for one
release as hidden options (`Deprecated*`); `kope.cli.run.renamed` merges them and prints a deprecation line.
"""

from __future__ import annotations

import dataclasses
import importlib
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from kope.loop import STOP_REASONS

CANONICAL = (
    "--out",
    "--json",
    "--device",
    "--sandbox",
    "--policy",
    "--tolerance",
    "--module-mode",
    "--trials",
    "--timeout",
    "--set",
    "--cases",
    "--cache-dir",
    "--store",
    "--max-tokens",
    "--max-seconds",
    "--max-iterations",
)
"""The shared vocabulary (tests/cli/test_vocabulary.py checks every command's --help against it)."""

RENAMED = {
    "--budget-tokens": "--max-tokens",
    "--budget-seconds": "--max-seconds",
    "--iterations": "--max-iterations",
    "--out-dir": "--out",
}
"""Old spelling -> the one to use; the old ones are hidden and print a deprecation line."""


_EVAL = ("kope.evaluate.options", "EvalOptions")
_LOOP = ("kope.loop", "LoopLimits")
_OPTIMIZE = ("kope.agents.optimize", "OptimizeConfig")
LIBRARY_DEFAULTS: dict[str, tuple[str, str, str]] = {
    "--trials": (*_EVAL, "trials"),
    "--timeout": (*_EVAL, "timeout_s"),
    "--seed": (*_EVAL, "seed"),
    "--max-tokens": (*_LOOP, "max_tokens"),
    "--max-seconds": (*_LOOP, "max_seconds"),
    "--max-iterations": (*_LOOP, "max_iterations"),
    "--prompt-tokens": ("kope.agents.debug", "DebugConfig", "prompt_budget"),
}
"""Option -> (module, config class, field): where an option left out takes its value from."""
COMMAND_DEFAULTS: dict[tuple[str, str], tuple[str, str, str]] = {
    ("optimize", "--max-tokens"): (*_OPTIMIZE, "max_tokens"),
    ("optimize", "--max-seconds"): (*_OPTIMIZE, "max_seconds"),
    ("optimize", "--max-iterations"): (*_OPTIMIZE, "iterations"),
    ("optimize", "--prompt-tokens"): (*_OPTIMIZE, "prompt_budget"),
}
"""The same, where one command's config differs from the shared one."""


def default_of(config: type, name: str) -> Any:
    """The default of dataclass field `name` of `config`."""
    for field in dataclasses.fields(config):
        if field.name == name:
            if field.default is not dataclasses.MISSING:
                return field.default
            if field.default_factory is not dataclasses.MISSING:
                return field.default_factory()
    raise KeyError(name)


def library_default(command: str, option: str) -> Any:
    """The library's default for `option` of `command` (None: the option has no library default).

    Imports the config's module: called when a command's help is shown, never at import."""
    source = COMMAND_DEFAULTS.get((command, option)) or LIBRARY_DEFAULTS.get(option)
    if source is None:
        return None
    module, name, field = source
    return default_of(getattr(importlib.import_module(module), name), field)


STOP_HELP = "Stop reasons: " + ", ".join(STOP_REASONS) + " (docs/guide/contracts.md says what each means)."


class PolicyChoice(StrEnum):
    strict = "strict"
    partial = "partial"
    auto = "auto"


class ToleranceChoice(StrEnum):
    strict = "strict"
    kernelbench = "kernelbench"
    auto = "auto"


class ModuleModeChoice(StrEnum):
    train = "train"
    eval = "eval"


class SandboxChoice(StrEnum):
    strict = "strict"
    auto = "auto"
    off = "off"


class RepairChoice(StrEnum):
    search = "search"
    recipes = "recipes"


JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a readable report.")]
DeviceOpt = Annotated[
    str,
    typer.Option(
        "--device",
        help="cpu (Triton runs in its interpreter), cuda, cuda:N, or auto (cuda when an NVIDIA driver is present).",
    ),
]
SandboxOpt = Annotated[
    SandboxChoice | None,
    typer.Option(
        "--sandbox",
        help="The OS boundary around task and candidate code: auto (the default: the strongest this machine "
        "allows: namespaces, else Landlock, else process isolation), strict (refuse to run without namespaces), "
        "off (process isolation only). `kope doctor` says what this machine supports.",
        show_default=False,
    ),
]
PolicyOpt = Annotated[
    PolicyChoice | None,
    typer.Option(
        "--policy",
        help="Integrity policy: strict (the kernels compute the function), partial (PyTorch may compute some of "
        "the model's operators, every output passes through a computing kernel; KernelBench levels 2-3 need it), "
        "or auto (the default: the task's INTEGRITY_POLICY, else decided from what the reference calls).",
        show_default=False,
    ),
]
ToleranceOpt = Annotated[
    ToleranceChoice | None,
    typer.Option(
        "--tolerance",
        help="Tolerance profile: strict (kope's, about 1e-4 in float32), kernelbench (atol = rtol = 1e-2), or auto "
        "(the default: kernelbench for a KernelBench task file levelL/N_Name.py, strict elsewhere). A task's own "
        "TOLERANCES win.",
        show_default=False,
    ),
]
TrialsOpt = Annotated[
    int | None,
    typer.Option("--trials", min=1, help="Runs per case, each with fresh seeded inputs."),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option("--timeout", min=1, help="Wall-time limit of each run, in seconds."),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a size parameter of the task in every case: NAME=VALUE (repeatable)."),
]
CasesOpt = Annotated[
    Path | None,
    typer.Option(
        "--cases", help="A JSON file with a list of override dicts, one per case (replaces the task's cases)."
    ),
]
CacheDirOpt = Annotated[
    Path | None,
    typer.Option("--cache-dir", help="Where reference outputs are cached.", show_default="~/.cache/kope/reference"),
]
StoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="The experience store: a SQLAlchemy URL (postgresql+psycopg://... for a shared one) or a SQLite file "
        "(default: ~/.local/share/kope/memory.db, or under $XDG_DATA_HOME). `none` records nothing.",
    ),
]
MaxElementsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-elements",
        min=1,
        help="Tasks without get_cases(): the most elements the inputs (or the outputs) of one derived case "
        "may hold (default: 300000 on the CPU, 2^26 on CUDA).",
    ),
]
ModuleModeOpt = Annotated[
    ModuleModeChoice | None,
    typer.Option(
        "--module-mode",
        help="The mode both models run in: train (PyTorch's default, as KernelBench's harness runs them) or eval "
        "(BatchNorm on its running statistics, Dropout off; as pipelines that call .eval() judge). Default: train.",
        show_default=False,
    ),
]
EmulationOpt = Annotated[
    bool,
    typer.Option(
        "--cuda-emulation/--no-cuda-emulation",
        help="On the CPU, run kernels written for CUDA (is_cuda asserts, device='cuda', torch.cuda queries) in the "
        "interpreter as on a GPU; every verdict made so says so. Never applies on a GPU.",
    ),
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        min=1,
        help="Prompt + completion tokens at most (a hard limit).",
    ),
]
MaxIterationsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-iterations",
        min=1,
        help="Model calls (or decisions) at most.",
    ),
]
ModelOpt = Annotated[
    str,
    typer.Option(
        "--model",
        help="offline (kope's recipes: no network, no tokens), openai:MODEL, anthropic:MODEL or replay:FILE.",
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="Endpoint of an OpenAI-compatible server (vLLM, SGLang, Ollama...)."),
]
RecordOpt = Annotated[
    Path | None, typer.Option("--record", help="Record every model exchange to this JSONL file (replay:FILE).")
]
ExecutorOpt = Annotated[
    str, typer.Option("--executor", help="Where jobs run: local (worker processes) or ray (a Ray cluster).")
]
AddressOpt = Annotated[
    str | None,
    typer.Option("--address", help="Ray: auto (the running cluster) or ray://HOST:PORT; default: a local cluster."),
]

# The old spellings, hidden; each prints a deprecation line (kope.cli.run.renamed).
DeprecatedBudgetTokens = Annotated[int | None, typer.Option("--budget-tokens", min=1, hidden=True)]
DeprecatedBudgetSeconds = Annotated[float | None, typer.Option("--budget-seconds", min=0, hidden=True)]
DeprecatedIterations = Annotated[int | None, typer.Option("--iterations", min=1, hidden=True)]
DeprecatedOutDir = Annotated[Path | None, typer.Option("--out-dir", hidden=True)]


MaxSecondsOpt = Annotated[
    float | None,
    typer.Option(
        "--max-seconds",
        min=1,
        help="Wall-clock budget, in seconds: a hard limit, the run ends within it plus two evaluation timeouts.",
    ),
]
