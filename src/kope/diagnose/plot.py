"""A heatmap of where an output is wrong, marked with the kernel's block grid.

Outputs are viewed as rows × last dimension (higher ranks flatten their leading dimensions into
rows). A 1-D output is wrapped into rows one block wide, so each row is one program's block. Colour
is the error in units of the tolerance (log scale); elements that are NaN or infinite where the
reference is not are drawn in a colour of their own. Large maps are max-pooled to fit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

_MAX_CELLS = 1024


def error_map(reference: np.ndarray, candidate: np.ndarray, atol: float, rtol: float) -> np.ndarray:
    """Error divided by the allowed error, elementwise; inf where only one side is NaN or infinite."""
    ref = np.asarray(reference, dtype=np.float64)
    cand = np.asarray(candidate, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        finite = np.isfinite(ref) & np.isfinite(cand)
        ratio = np.where(finite, np.abs(cand - ref) / (atol + rtol * np.abs(ref) + 1e-300), 0.0)
        same_special = (np.isnan(ref) & np.isnan(cand)) | (np.isinf(ref) & (ref == cand))
        return np.where(finite | same_special, ratio, np.inf)


def _grid(values: np.ndarray, block: int | None) -> tuple[np.ndarray, int | None]:
    if values.ndim == 0:
        return values.reshape(1, 1), None
    if values.ndim == 1:
        n = values.size
        width = block if block and block < n else max(1, int(np.ceil(np.sqrt(n))))
        rows = -(-n // width)
        padded = np.full(rows * width, np.nan)
        padded[:n] = values
        return padded.reshape(rows, width), width if block and block < n else None
    return values.reshape(-1, values.shape[-1]), block


def _pool(grid: np.ndarray) -> tuple[np.ndarray, int, int]:
    rows, cols = grid.shape
    fy, fx = max(1, -(-rows // _MAX_CELLS)), max(1, -(-cols // _MAX_CELLS))
    if fy == 1 and fx == 1:
        return grid, 1, 1
    padded = np.full((-(-rows // fy) * fy, -(-cols // fx) * fx), np.nan)
    padded[:rows, :cols] = grid
    pooled = np.nanmax(padded.reshape(padded.shape[0] // fy, fy, padded.shape[1] // fx, fx), axis=(1, 3))
    return pooled, fy, fx


def heatmap(
    reference: np.ndarray,
    candidate: np.ndarray,
    atol: float,
    rtol: float,
    path: Path,
    *,
    block: int | None = None,
    title: str = "",
) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap, LogNorm

    ratio = error_map(reference, candidate, atol, rtol)
    grid, column_block = _grid(ratio, block)
    pooled, fy, fx = _pool(grid)
    special = np.isinf(pooled)
    shown = np.where(special, np.nan, np.clip(pooled, 1e-3, 1e3))
    height = max(2.5, min(9.0, 1.5 + pooled.shape[0] / 20))
    figure, axes = plt.subplots(figsize=(10, height))
    image = axes.imshow(
        shown, aspect="auto", interpolation="nearest", cmap="viridis", norm=LogNorm(vmin=1e-3, vmax=1e3)
    )
    if special.any():
        overlay = np.ma.masked_where(~special, np.ones_like(pooled))
        axes.imshow(overlay, aspect="auto", interpolation="nearest", cmap=ListedColormap(["red"]), vmin=0, vmax=1)
    if column_block and grid.shape[1] // column_block <= 64:
        for x in range(column_block, grid.shape[1], column_block):
            axes.axvline(x / fx - 0.5, color="white", linewidth=0.6, alpha=0.7)
    colorbar = figure.colorbar(image, ax=axes)
    colorbar.set_label("|error| / allowed error (> 1 is wrong)")
    wrong = float((ratio > 1).mean() if ratio.size else 0.0)
    special_note = ", red: NaN/inf" if special.any() else ""
    block_note = f", block {column_block}" if column_block else ""
    axes.set_title(f"{title}  —  {wrong:.1%} of elements wrong{block_note}{special_note}")
    axes.set_xlabel("last dimension" + (f" (pooled x{fx})" if fx > 1 else ""))
    axes.set_ylabel("rows" + (f" (pooled x{fy})" if fy > 1 else ""))
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
