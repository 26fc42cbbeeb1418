"""The lesson's counts: every tensor of the pass with its bytes, every layer with its parameters and FLOPs."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from mlp.lessons.forward_backward import Walkthrough
from mlp.manual import shape_text


def role_of(name: str) -> str:
    """'parameter' (W, b), 'input' (X, y), 'gradient' (d...) or 'activation' (z, a, probs, ...)."""
    if name in ("X", "y"):
        return "input"
    if name[0] in "Wb":
        return "parameter"
    return "gradient" if name.startswith("d") else "activation"


def tensor_table(lesson: Walkthrough) -> list[dict]:
    """Every tensor of the pass: name, role, shape, elements and bytes."""
    rows = []
    for name, value in lesson.result.tensors.items():
        array = np.asarray(value)
        rows.append(
            {
                "tensor": name,
                "role": role_of(name),
                "shape": shape_text(lesson.symbols(name)),
                "size": shape_text(array.shape),
                "elements": array.size,
                "bytes": array.nbytes,
            }
        )
    return rows


def layer_table(widths: Sequence[int], n: int) -> list[dict]:
    """Per layer: parameters (n_in + 1) × n_out and forward FLOPs 2 · N · n_in · n_out."""
    rows = []
    for layer, (n_in, n_out) in enumerate(pairwise(widths), start=1):
        rows.append(
            {
                "layer": layer,
                "n_in": n_in,
                "n_out": n_out,
                "parameters": (n_in + 1) * n_out,
                "formula": f"({n_in} + 1) × {n_out}",
                "forward FLOPs": 2 * n * n_in * n_out,
                "backward FLOPs": 4 * n * n_in * n_out,  # dW = aᵀ dz and da = dz Wᵀ: two matmuls
            }
        )
    return rows
