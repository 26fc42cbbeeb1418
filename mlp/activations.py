"""The activations: one row each, in every form the project computes or shows one.

The model takes its layer and its function from a row; the manual engine its f(z) and f'(z),
written once for NumPy and PyTorch alike (`xp(z)` is the array's own namespace), whose source
the Forward & backward page shows beside the numbers; the NumPy fast path its forms on float32
columns; the pages its label and formulas. Adding an activation is adding a row to ACTIVATIONS
(and a test): nothing else names one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

Array = Any  # np.ndarray or torch.Tensor; a function answers in the kind it was given
LEAKY_SLOPE = 0.01  # nn.LeakyReLU's default
GELU_C, GELU_K = math.sqrt(2.0 / math.pi), 0.044715  # GELU's tanh form: ½ z (1 + tanh(c (z + k z³)))
F32 = np.float32


def xp(a: Array) -> Any:
    """The namespace of `a`'s kind, numpy or torch: their element-wise math is spelled alike."""
    return torch if torch.is_tensor(a) else np


@dataclass(frozen=True)
class Activation:
    """One activation function, in each form the model, the manual engine, the fast path and
    the pages use it."""

    name: str  # as links and files write it
    label: str  # as the pages show it
    torch: Callable[[torch.Tensor], torch.Tensor]  # what the model's forward calls
    module: Callable[[], nn.Module]  # the model's layer, as print(model) shows it
    f: Callable[[Array], Array]  # the manual engine's f(z), NumPy or PyTorch
    grad: Callable[[Array], Array]  # ...and f'(z)
    tex: str  # f(z) in LaTeX
    grad_tex: str  # f'(z) in LaTeX
    # The fast path's forms on float32 columns, as torch computes them: f(z) (`zeros`: z's shape),
    # which may overwrite z when f'(z) can be had from a = f(z) alone; and f'(z) from (z, a), into
    # `out` (a's shape) where that helps.
    columns: Callable[[np.ndarray, np.ndarray], np.ndarray]
    columns_grad: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]
    relu_like: bool = False  # ~0 below 0 and ~z above: He's init suits it


# --- the manual engine's forms: one code for NumPy and PyTorch ------------------------------------


def relu(z):
    return xp(z).where(z > 0, z, xp(z).zeros_like(z))  # max(0, z)


def relu_grad(z):
    return xp(z).where(z > 0, xp(z).ones_like(z), xp(z).zeros_like(z))  # 1[z > 0]


def leaky_relu(z):
    return xp(z).where(z > 0, z, LEAKY_SLOPE * z)


def leaky_relu_grad(z):
    ones = xp(z).ones_like(z)
    return xp(z).where(z > 0, ones, LEAKY_SLOPE * ones)


def tanh(z):
    return xp(z).tanh(z)


def tanh_grad(z):
    return 1 - xp(z).tanh(z) ** 2


def sigmoid(z):
    return 0.5 * (1 + xp(z).tanh(0.5 * z))  # = 1 / (1 + e^-z), without overflow


def sigmoid_grad(z):
    s = 0.5 * (1 + xp(z).tanh(0.5 * z))
    return s * (1 - s)


def gelu(z):
    return 0.5 * z * (1 + xp(z).tanh(GELU_C * (z + GELU_K * z**3)))


def gelu_grad(z):
    t = xp(z).tanh(GELU_C * (z + GELU_K * z**3))
    return 0.5 * (1 + t) + 0.5 * z * (1 - t**2) * GELU_C * (1 + 3 * GELU_K * z**2)


def silu(z):
    return z * 0.5 * (1 + xp(z).tanh(0.5 * z))  # z · σ(z)


def silu_grad(z):
    s = 0.5 * (1 + xp(z).tanh(0.5 * z))
    return s * (1 + z * (1 - s))


# --- the fast path's forms: float32 columns, in place where f'(z) can be had from a alone ------------


def _relu_columns(z, zeros):
    return np.maximum(z, zeros, out=z)


def _relu_columns_grad(z, a, zeros, out):
    return np.greater(a, zeros, out=out)  # a 0/1 float mask


def _leaky_columns(z, zeros):
    return np.where(z > 0, z, z * F32(LEAKY_SLOPE))


def _leaky_columns_grad(z, a, zeros, out):
    return np.where(a > 0, F32(1), F32(LEAKY_SLOPE))  # a > 0 exactly where z > 0


def _tanh_columns(z, zeros):
    return np.tanh(z, out=z)


def _tanh_columns_grad(z, a, zeros, out):
    return 1 - a * a


def _sigmoid_columns(z, zeros):
    return 0.5 * (1 + np.tanh(0.5 * z))  # without overflow warnings


def _sigmoid_columns_grad(z, a, zeros, out):
    return a * (1 - a)


def _gelu_columns(z, zeros):
    return 0.5 * z * (1 + np.tanh(GELU_C * (z + GELU_K * z * z * z)))


def _gelu_columns_grad(z, a, zeros, out):
    t = np.tanh(GELU_C * (z + GELU_K * z * z * z))
    return 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * GELU_C * (1 + 3 * GELU_K * z * z)


def _silu_columns(z, zeros):
    return z * (0.5 * (1 + np.tanh(0.5 * z)))


def _silu_columns_grad(z, a, zeros, out):
    s = 0.5 * (1 + np.tanh(0.5 * z))
    return s * (1 + z * (1 - s))


ACTIVATIONS: dict[str, Activation] = {
    a.name: a
    for a in (
        Activation(
            "relu",
            "ReLU",
            torch.relu,
            nn.ReLU,
            relu,
            relu_grad,
            r"\max(0, z)",
            r"\mathbb{1}[z > 0]",
            _relu_columns,
            _relu_columns_grad,
            relu_like=True,
        ),
        Activation(
            "leaky_relu",
            "Leaky ReLU",
            partial(F.leaky_relu, negative_slope=LEAKY_SLOPE),
            partial(nn.LeakyReLU, LEAKY_SLOPE),
            leaky_relu,
            leaky_relu_grad,
            rf"\max({LEAKY_SLOPE}\,z,\ z)",
            rf"\mathbb{{1}}[z > 0] + {LEAKY_SLOPE}\,\mathbb{{1}}[z \le 0]",
            _leaky_columns,
            _leaky_columns_grad,
            relu_like=True,
        ),
        Activation(
            "gelu",
            "GELU",
            partial(F.gelu, approximate="tanh"),
            partial(nn.GELU, approximate="tanh"),
            gelu,
            gelu_grad,
            r"\tfrac{1}{2} z \left(1 + \tanh\!\left(\sqrt{2/\pi}\,(z + 0.044715 z^3)\right)\right)",
            r"\mathrm{GELU}'(z)",
            _gelu_columns,
            _gelu_columns_grad,
            relu_like=True,
        ),
        Activation(
            "tanh",
            "tanh",
            torch.tanh,
            nn.Tanh,
            tanh,
            tanh_grad,
            r"\tanh(z)",
            r"1 - \tanh^2(z)",
            _tanh_columns,
            _tanh_columns_grad,
        ),
        Activation(
            "sigmoid",
            "Sigmoid",
            torch.sigmoid,
            nn.Sigmoid,
            sigmoid,
            sigmoid_grad,
            r"\sigma(z) = 1 / (1 + e^{-z})",
            r"\sigma(z)\,(1 - \sigma(z))",
            _sigmoid_columns,
            _sigmoid_columns_grad,
        ),
        Activation(
            "silu",
            "SiLU",
            F.silu,
            nn.SiLU,
            silu,
            silu_grad,
            r"z\,\sigma(z)",
            r"\sigma(z)\,(1 + z\,(1 - \sigma(z)))",
            _silu_columns,
            _silu_columns_grad,
            relu_like=True,
        ),
    )
}


def activation(name: str) -> Activation:
    """The row of `name`, or a ValueError naming the choices."""
    if name not in ACTIVATIONS:
        raise ValueError(f"Unknown activation {name!r}; choose one of {', '.join(ACTIVATIONS)}.")
    return ACTIVATIONS[name]
