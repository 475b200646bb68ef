"""Each static rule on small sources: it fires on the cheat, and stays quiet on honest code."""

from __future__ import annotations

import textwrap

import pytest

from kope.integrity.static import STATIC_RULES, StaticContext, check_source
from kope.ops import list_ops

HEADER = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


def launch(x):
    y = torch.empty_like(x)
    _k[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    return y
"""


def findings(body: str, context: StaticContext | None = None, header: str = HEADER) -> set[tuple[str, str]]:
    source = header + textwrap.dedent(body)
    return {(f.rule, f.severity) for f in check_source(source, context)}


def rules(body: str, context: StaticContext | None = None, header: str = HEADER) -> set[str]:
    return {rule for rule, _ in findings(body, context, header)}


HONEST = """
class ModelNew(nn.Module):
    def forward(self, x):
        return launch(x.contiguous().view(-1))
"""


def test_honest_candidate_is_clean() -> None:
    assert rules(HONEST) == set()


def test_every_suite_kernel_is_statically_clean() -> None:
    for op in list_ops():
        assert check_source(op.kernel_path.read_text(), StaticContext()) == [], op.name


@pytest.mark.parametrize(
    "body",
    [
        "class ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n",
        "import torch as t\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return "
        "t.nn.functional.gelu(x)\n",
        "from torch.nn import functional as F\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        "
        "return F.softmax(x, -1)\n",
        "class ModelNew(nn.Module):\n    def forward(self, x):\n        return getattr(torch, 'relu')(x)\n",
        "class ModelNew(nn.Module):\n    def forward(self, x):\n        return getattr(torch, 'rel' + 'u')(x)\n",
        "class ModelNew(nn.Module):\n    def forward(self, x):\n        return x.exp().sum(-1)\n",
        "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = "
        "nn.Linear(4, 4)\n"
        "    def forward(self, x):\n        return self.fc(x)\n",
        "mm = torch.matmul\nclass ModelNew(nn.Module):\n    def forward(self, a, b):\n        return mm(a, b)\n",
        "class ModelNew(nn.Module):\n    def forward(self, x):\n        return nn.ReLU()(x)\n",
    ],
)
def test_torch_compute(body: str) -> None:
    assert ("torch-compute", "reject") in findings(body)


def test_torch_compute_respects_the_task_allowlist_and_own_methods() -> None:
    body = "class ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(launch(x))\n"
    assert "torch-compute" not in rules(body, StaticContext(extra_allow=frozenset({"relu"})))
    own = (
        "class ModelNew(nn.Module):\n    def norm(self, x):\n        return launch(x)\n"
        "    def forward(self, x):\n        return self.norm(x)\n"
    )
    assert "torch-compute" not in rules(own)
    setup = (
        "class ModelNew(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
        "        self.w = nn.Parameter(torch.randn(d))\n        self.lin = nn.Linear(d, d)\n"
        "    def forward(self, x):\n        return launch(x.reshape(-1))\n"
    )
    assert rules(setup) == set()


def test_fallback_branch() -> None:
    body = """
class ModelNew(nn.Module):
    def forward(self, x):
        try:
            return launch(x)
        except Exception:
            return x * 2
"""
    assert ("fallback-branch", "reject") in findings(body)
    reraise = """
class ModelNew(nn.Module):
    def forward(self, x):
        try:
            return launch(x)
        except RuntimeError:
            raise
"""
    assert "fallback-branch" not in rules(reraise)


def test_a_handler_that_only_skips_is_a_warning_and_one_that_computes_is_not() -> None:
    """A hand-written autotuning loop skips configs that fail to launch; the launch after it computes."""
    skips = """
class ModelNew(nn.Module):
    def forward(self, x):
        for block in (128, 256):
            try:
                launch(x)
            except Exception as exc:
                print("config failed", exc)
                continue
        return launch(x)
"""
    assert ("fallback-branch", "warn") in findings(skips)
    assert ("fallback-branch", "reject") not in findings(skips)
    sneaky = """
class ModelNew(nn.Module):
    def forward(self, x):
        for block in (128, 256):
            try:
                return launch(x)
            except Exception:
                print(torch.relu(x))
                continue
"""
    assert ("fallback-branch", "reject") in findings(sneaky)


@pytest.mark.parametrize(
    "test",
    ["not x.is_cuda", "x.device.type != 'cuda'", "not torch.cuda.is_available()", "x.is_cpu or x.numel() == 0"],
)
def test_a_path_off_the_gpu_is_a_device_fallback_warning(test: str) -> None:
    body = f"""
class ModelNew(nn.Module):
    def forward(self, x):
        if {test}:
            return torch.relu(x)
        return launch(x)
"""
    assert ("device-fallback", "warn") in findings(body)


def test_a_device_choice_without_a_second_path_is_not_a_fallback() -> None:
    body = """
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.where = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        if torch.cuda.is_available():
            self.stream = torch.cuda.Stream()

    def forward(self, x):
        assert x.is_cuda
        return launch(x)
"""
    assert "device-fallback" not in rules(body)


def test_kernel_not_launched() -> None:
    no_kernel = "import torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x\n"
    assert ("kernel-not-launched", "reject") in findings(no_kernel, header="")
    never = HEADER.replace("_k[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)", "pass")
    assert ("kernel-not-launched", "reject") in findings(HONEST, header=never)
    extension = (
        "from torch.utils.cpp_extension import load_inline\nimport torch.nn as nn\n"
        "ext = load_inline('k', cpp_sources='', cuda_sources='', functions=['run'])\n"
        "class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.run(x)\n"
    )
    assert "kernel-not-launched" not in rules(extension, header="")


def test_output_caching_is_a_warning() -> None:
    body = """
_cache = {}
class ModelNew(nn.Module):
    def forward(self, x):
        key = x.data_ptr()
        if key in _cache:
            return _cache[key]
        _cache[key] = launch(x)
        return _cache[key]
"""
    assert ("output-caching", "warn") in findings(body)
    memo = "import functools\n@functools.lru_cache\ndef f(n):\n    return n\n" + HONEST
    assert ("output-caching", "warn") in findings(memo)


@pytest.mark.parametrize(
    "body",
    [
        "import gc\n" + HONEST,
        "import inspect\n" + HONEST,
        "import sys\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        ref = "
        "sys.modules['kope_task']\n        return launch(x)\n",
        "import sys\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        sys._getframe(1).f_globals\n"
        "        return launch(x)\n",
        "class ModelNew(nn.Module):\n    def forward(self, x):\n        exec('y = 1')\n        return launch(x)\n",
        "class ModelNew(nn.Module):\n    def forward(self, x):\n        open('/etc/passwd').read()\n        "
        "return launch(x)\n",
        "import os\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        os.listdir('.')\n        "
        "return launch(x)\n",
        "def f():\n    return f.__globals__\n" + HONEST,
    ],
)
def test_reference_access(body: str) -> None:
    assert ("reference-access", "reject") in findings(body)


@pytest.mark.parametrize(
    ("body", "rule"),
    [
        ("torch.allclose = lambda *a, **k: True\n" + HONEST, "harness-tamper"),
        ("import torch as t\nt.Tensor.__eq__ = lambda a, b: True\n" + HONEST, "harness-tamper"),
        ("setattr(torch, 'equal', lambda a, b: True)\n" + HONEST, "harness-tamper"),
        ("import os\nos.environ['TRITON_INTERPRET'] = '0'\n" + HONEST, "harness-tamper"),
        ("torch.use_deterministic_algorithms(False)\n" + HONEST, "harness-tamper"),
        ("import time\ntime.perf_counter = lambda: 0.0\n" + HONEST, "timer-tamper"),
        ("torch.cuda.Event.elapsed_time = lambda self, other: 0.001\n" + HONEST, "timer-tamper"),
    ],
)
def test_tampering(body: str, rule: str) -> None:
    assert (rule, "reject") in findings(body)


def test_inductors_entry_points_under_torch_c_are_not_tampering_and_the_rest_of_torch_c_still_is() -> None:
    inductor = (
        "assert_size_stride = torch._C._dynamo.guards.assert_size_stride\n"
        "empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda\n"
        "from torch._C import _cuda_getCurrentRawStream as get_raw_stream\n"
        "assert_size_stride(torch.empty(4), (4,), (1,))\nempty_strided_cuda((4,), (1,), torch.float32)\n"
        "get_raw_stream(0)\n" + HONEST
    )
    assert "harness-tamper" not in rules(inductor)
    for other in ("torch._C._dynamo.guards.install_no_tensor_aliasing_guard(1)", "torch._C._set_grad_enabled(True)"):
        assert ("harness-tamper", "reject") in findings(f"{other}\n" + HONEST)


HELPER = """
@triton.jit
def _tl_tanh(x):
    return 2.0 * tl.sigmoid(2.0 * x) - 1.0


"""


def test_a_math_helper_bound_under_triton_language_is_its_kernels_own_math_a_warning() -> None:
    """A prelude real pipelines prepend where their Triton lacks a function (`tl.tanh = _tl_tanh`): its own function
    for elementwise math, judged by the values its kernels compute, not a cheat."""
    assert findings(HELPER + "tl.tanh = _tl_tanh\n" + HONEST) == {("harness-tamper", "warn")}
    assert findings(HELPER + "triton.language.gelu = _tl_tanh\n" + HONEST) == {("harness-tamper", "warn")}
    plain = "def _py_tanh(x):\n    return 2.0 * tl.sigmoid(2.0 * x) - 1.0\n\n\ntl.tanh = _py_tanh\n"
    assert findings(plain + HONEST) == {("harness-tamper", "warn")}  # a kernel cannot call it: the GPU front end says


@pytest.mark.parametrize(
    "binding",
    [
        "tl.load = _tl_tanh",  # a memory operation kope's checks observe: not math
        "tl.program_id = _tl_tanh",
        "tl.tanh = lambda x: x",  # not a function of its own kernels
        "tl.tanh = _tl_tanh\n_tl_tanh = torch.tanh",  # rebound after
        "tl.tanh, tl.exp = _tl_tanh, _tl_tanh",  # several targets at once
        "tl.tanh = tl.exp = _tl_tanh",
        "tl.math.tanh = _tl_tanh",  # below triton.language
        "triton.testing.do_bench = _tl_tanh",
        "setattr(tl, 'tanh', _tl_tanh)",
    ],
)
def test_other_bindings_under_triton_stay_tampering(binding: str) -> None:
    found = findings(HELPER + binding + "\n" + HONEST)
    assert any(severity == "reject" and rule.endswith("tamper") for rule, severity in found), found


def test_backend_flags_are_not_tampering_but_tf32_is_a_downcast() -> None:
    body = "torch.backends.cuda.matmul.allow_tf32 = True\n" + HONEST
    assert "harness-tamper" not in rules(body)
    assert ("precision-downcast", "warn") in findings(body, StaticContext(float32_task=True))


@pytest.mark.parametrize(
    "body",
    [
        "import threading\n" + HONEST,
        "from multiprocessing import Pool\n" + HONEST,
        "import subprocess\n" + HONEST,
        "import ctypes\n" + HONEST,
        "import os\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        os.system('true')\n        "
        "return launch(x)\n",
    ],
)
def test_threads_processes(body: str) -> None:
    assert ("threads-processes", "reject") in findings(body)


def test_lazy_output() -> None:
    subclass = "class Lazy(torch.Tensor):\n    pass\n" + HONEST
    assert ("lazy-output", "reject") in findings(subclass)
    dispatch = (
        "class Box:\n    def __torch_function__(self, func, types, args=(), kwargs=None):\n        return 0\n" + HONEST
    )
    assert ("lazy-output", "reject") in findings(dispatch)


def test_shape_specialization_literals() -> None:
    baked = "class ModelNew(nn.Module):\n    def forward(self, x):\n        return launch(x.view(1000))\n"
    context = StaticContext(visible_sizes={"N": 1000, "M": 1024})
    assert ("shape-specialization", "warn") in findings(baked, context)
    assert "shape-specialization" not in rules(HONEST.replace("view(-1)", "view(1024)"), context)


def test_precision_downcast_only_in_float32_tasks() -> None:
    body = "class ModelNew(nn.Module):\n    def forward(self, x):\n        return launch(x.half())\n"
    assert ("precision-downcast", "warn") in findings(body, StaticContext(float32_task=True))
    assert "precision-downcast" not in rules(body, StaticContext(float32_task=False))
    kernel = HEADER.replace("* 2.0", ".to(tl.float16) * 2.0")
    assert ("precision-downcast", "warn") in findings(HONEST, StaticContext(float32_task=True), header=kernel)


def test_problem_override() -> None:
    body = "N = 10\ndef get_inputs():\n    return []\nclass Model(nn.Module):\n    pass\n" + HONEST
    found = findings(body, StaticContext(visible_sizes={"N": 1000}))
    assert ("problem-override", "warn") in found
    assert (
        len(
            [
                f
                for f in check_source(HEADER + body, StaticContext(visible_sizes={"N": 1000}))
                if f.rule == "problem-override"
            ]
        )
        == 3
    )


def test_every_static_rule_is_known_and_unparsable_source_is_quiet() -> None:
    from kope.integrity.rules import RULES

    assert set(STATIC_RULES) <= set(RULES)
    assert check_source("def broken(:\n") == []
