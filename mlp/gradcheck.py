"""Checks of mlp.manual's gradients: autograd is the oracle, finite differences the referee."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from mlp.manual import Array, forward_backward
from mlp.model import MLP


@dataclass(frozen=True)
class Comparison:
    """One gradient compared with its reference, as makemore's `cmp` prints it."""

    name: str  # "dW1", "db1", ...
    exact: bool  # bit-for-bit equal
    close: bool  # torch.allclose at the given tolerance
    max_diff: float  # max |manual - reference|
    shape_ok: bool  # the gradient has its parameter's shape


def _as_f64(x: Array) -> torch.Tensor:
    t = x if torch.is_tensor(x) else torch.from_numpy(np.asarray(x))
    return t.detach().to(device="cpu", dtype=torch.float64)


def autograd_grads(
    params: Sequence[tuple[Array, Array]], X: Array, y: Array, activation: str = "relu"
) -> tuple[float, list[tuple[torch.Tensor, torch.Tensor]]]:
    """Loss and [(dW, db)] from PyTorch autograd on nn.Linear layers, in float64, W as (in, out)."""
    model = MLP.from_manual([(_as_f64(W), _as_f64(b)) for W, b in params], activation=activation)
    loss = F.cross_entropy(model(_as_f64(X)), _as_f64(y).long())
    loss.backward()
    return loss.item(), [(layer.weight.grad.T.clone(), layer.bias.grad.clone()) for layer in model.layers]


def compare_grads(
    manual: Sequence[tuple[Array, Array]],
    reference: Sequence[tuple[Array, Array]],
    atol: float = 1e-10,
    rtol: float = 1e-7,
) -> list[Comparison]:
    """Compare [(dW, db)] lists layer by layer; names follow the notes (dW1, db1, ...)."""
    rows = []
    for l, (pair, ref_pair) in enumerate(zip(manual, reference, strict=True), start=1):
        for stem, g, ref in zip(("dW", "db"), pair, ref_pair, strict=True):
            g64, ref64 = _as_f64(g), _as_f64(ref)
            shape_ok = g64.shape == ref64.shape
            diff = (g64 - ref64).abs().max().item() if shape_ok and g64.numel() else float("inf")
            rows.append(
                Comparison(
                    name=f"{stem}{l}",
                    exact=shape_ok and torch.equal(g64, ref64),
                    close=shape_ok and torch.allclose(g64, ref64, atol=atol, rtol=rtol),
                    max_diff=diff if shape_ok else float("inf"),
                    shape_ok=shape_ok,
                )
            )
    return rows


@dataclass(frozen=True)
class FiniteDifference:
    """One sampled parameter entry: the analytic gradient against a central difference."""

    name: str  # "W1", "b2", ...
    index: tuple[int, ...]
    analytic: float
    numeric: float  # (L(θ + ε) - L(θ - ε)) / 2ε
    rel_error: float  # |a - n| / max(|a|, |n|, 1e-12)


def finite_differences(
    params: Sequence[tuple[Array, Array]],
    X: Array,
    y: Array,
    activation: str = "relu",
    grads: Sequence[tuple[Array, Array]] | None = None,
    per_param: int = 3,
    eps: float = 1e-6,
    seed: int = 0,
) -> list[FiniteDifference]:
    """Central differences on a few distinct random entries of every parameter, in float64 NumPy."""
    rng = np.random.default_rng(seed)
    p64 = [(_as_f64(W).numpy().copy(), _as_f64(b).numpy().copy()) for W, b in params]
    X64, y_np = _as_f64(X).numpy(), _as_f64(y).numpy().astype(np.int64)
    if grads is None:
        grads = forward_backward(p64, X64, y_np, activation).grads
    rows = []
    for l, pair in enumerate(p64, start=1):
        for which, (stem, theta) in enumerate(zip(("W", "b"), pair, strict=True)):
            analytic = _as_f64(grads[l - 1][which]).numpy()
            # Distinct entries (without replacement), as many as the parameter has, at most per_param.
            picks = rng.choice(theta.size, size=min(per_param, theta.size), replace=False)
            for flat in picks:
                index = tuple(int(i) for i in np.unravel_index(int(flat), theta.shape))
                original = theta[index]
                theta[index] = original + eps
                plus = forward_backward(p64, X64, y_np, activation).loss
                theta[index] = original - eps
                minus = forward_backward(p64, X64, y_np, activation).loss
                theta[index] = original
                numeric = (plus - minus) / (2 * eps)
                a = float(analytic[index])
                rel = abs(a - numeric) / max(abs(a), abs(numeric), 1e-12)
                rows.append(FiniteDifference(f"{stem}{l}", index, a, numeric, rel))
    return rows
