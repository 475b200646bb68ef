"""The catalog of built-in operators: name, family and one line each."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

_HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class OpInfo:
    """One operator of the built-in suite: a KernelBench-format task and a correct Triton kernel."""

    name: str
    family: str
    summary: str

    @property
    def directory(self) -> Path:
        return _HERE / self.name

    @property
    def task_path(self) -> Path:
        return self.directory / "task.py"

    @property
    def kernel_path(self) -> Path:
        return self.directory / "kernel.py"


CATALOG: tuple[OpInfo, ...] = (
    OpInfo("relu", "elementwise", "ReLU, max(x, 0)"),
    OpInfo("gelu_tanh", "elementwise", "GELU with the tanh approximation"),
    OpInfo("silu", "elementwise", "SiLU (swish), x * sigmoid(x)"),
    OpInfo("sigmoid", "elementwise", "logistic sigmoid"),
    OpInfo("leaky_relu", "elementwise", "leaky ReLU with a negative slope"),
    OpInfo("bias_add", "elementwise", "bias added to a 2-D input, broadcast over rows"),
    OpInfo("row_sum", "reduction", "sum over the last dimension"),
    OpInfo("row_max", "reduction", "maximum over the last dimension"),
    OpInfo("row_mean", "reduction", "mean over the last dimension"),
    OpInfo("argmax", "reduction", "index of the maximum over the last dimension"),
    OpInfo("softmax", "normalization", "softmax over the last dimension"),
    OpInfo("log_softmax", "normalization", "log-softmax over the last dimension"),
    OpInfo("layernorm", "normalization", "LayerNorm over the last dimension with weight and bias"),
    OpInfo("rmsnorm", "normalization", "RMSNorm over the last dimension with a weight"),
    OpInfo("matmul", "matmul", "C = A @ B"),
    OpInfo("bmm", "matmul", "batched matrix multiply"),
    OpInfo("matmul_transposed", "matmul", "C = A @ B.T with B stored row-major"),
    OpInfo("linear_bias_relu", "matmul", "fused linear layer, bias and ReLU"),
    OpInfo("cumsum", "scan", "inclusive prefix sum over the last dimension"),
    OpInfo("mse_loss", "loss", "mean squared error between two tensors"),
    OpInfo("cross_entropy", "loss", "cross-entropy of logits against class indices, mean over the batch"),
    OpInfo("conv1d", "convolution", "1-D convolution with bias, stride 1, no padding"),
    OpInfo("embedding", "gather", "embedding table lookup"),
    OpInfo("attention", "attention", "small scaled dot-product attention"),
)
