"""An MLP's math in NumPy, one example a column: what the NumPy path trains with and the plane draws.

Activations are (units, N), not torch's (N, units). With torch's weight layout (n_out, n_in) a
layer is then `z = W @ a + b[:, None]`, and everything a small network does between its matrix
products (a bias, an activation, a softmax over K classes) runs along rows of N numbers instead
of N rows of a few, which NumPy does ~2-4x faster. On a 2-32-32-3 network and 480 points a whole
training step costs ~2.4x less this way than the same NumPy code on rows.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np
import torch

from mlp.activations import ACTIVATIONS

F32 = np.float32


class Buffers:
    """The arrays of one pass over N examples, kept from one call to the next: a fresh array of a
    plane's layer (~1 MB) costs its page faults again on every frame, about as much as the
    arithmetic; a training step's are small but many, and a lookup each costs as much as adding them."""

    def __init__(self, widths: tuple[int, ...], n: int, backward: bool) -> None:
        self.widths, self.n = widths, n
        self.z = [np.zeros((w, n), dtype=F32) for w in widths[1:]]  # each layer's z (n_out, N)
        hidden = widths[1:-1]
        self.zeros = [np.zeros((w, n), dtype=F32) for w in hidden]  # ReLU compares against these (read only)
        # Backprop's: dL/da of each hidden layer, and f'(z) where it is a mask (ReLU's)
        self.da = [np.zeros((w, n), dtype=F32) for w in hidden] if backward else []
        self.mask = [np.zeros((w, n), dtype=F32) for w in hidden] if backward else []
        self.ones = np.ones(n, dtype=F32)  # a product with these sums over examples: BLAS beats a reduction


class Scratch:
    """Buffers by what they are for (a training batch, the validation set, the plane) and N: a
    few sizes alternate (a batch, the last short batch, the validation set), each keeps its own.
    Only the last network's are kept, so memory stays bounded however the networks change."""

    def __init__(self) -> None:
        self.buffers: dict[tuple[str, int], Buffers] = {}

    def get(self, tag: str, widths: tuple[int, ...], n: int, backward: bool = False) -> Buffers:
        """The buffers of a pass of this network over n examples."""
        buffers = self.buffers.get((tag, n))
        if buffers is None or buffers.widths != widths:
            if buffers is None and len(self.buffers) >= 8:  # sizes seen once (a data set edited by clicks)
                self.buffers.clear()
            elif buffers is not None:
                self.buffers = {k: v for k, v in self.buffers.items() if v.widths == widths}
            buffers = self.buffers[(tag, n)] = Buffers(widths, n, backward)
        return buffers


def activate(name: str, z: np.ndarray, zeros: np.ndarray) -> np.ndarray:
    """a = f(z) as torch's forward computes it (the activations' table: mlp/activations.py), in
    z's own memory for an activation whose f'(z) can be had from a alone. `zeros`: z's shape."""
    return ACTIVATIONS[name].columns(z, zeros)


def activation_grad(
    name: str, z: np.ndarray, a: np.ndarray, zeros: np.ndarray, out: np.ndarray
) -> np.ndarray:
    """f'(z), as torch's backward computes it, from a = f(z) (and z, where `activate` kept it);
    into `out` where that helps (`zeros`: a's shape)."""
    return ACTIVATIONS[name].columns_grad(z, a, zeros, out)


_views: weakref.WeakKeyDictionary[torch.nn.Module, list[tuple[int, np.ndarray]]] = weakref.WeakKeyDictionary()


def weights_of(model: torch.nn.Module) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """([W1, ..., WL], [b1, ..., bL]) of an mlp.model.MLP on the CPU: NumPy views of its very
    parameters (W (n_out, n_in), torch's layout), so they follow every step. Kept per model
    while each parameter's memory is the same (an optimizer flattening them moves it): a frame
    asks several times, and making six views costs more than a small net's forward pass."""
    params = [t for pair in model.linears() for t in pair]  # (W, b) of each layer, cached by the MLP
    kept = _views.get(model)
    if kept is None or [p.data_ptr() for p in params] != [ptr for ptr, _ in kept]:
        kept = _views[model] = [(p.data_ptr(), p.detach().numpy()) for p in params]
    arrays = [a for _, a in kept]
    return arrays[0::2], arrays[1::2]


class Pass(NamedTuple):
    """A forward pass, what backprop reads."""

    inputs: list[np.ndarray]  # each layer's input: x, then a_l (after dropout, if any), (n_in, N)
    pre: list[np.ndarray]  # z_1 ... z_L, (n_out, N); an in-place activation's holds a_l by now
    activations: list[np.ndarray]  # a_1 ... a_{L-1} before dropout: what f'(z) is read from
    masks: list[np.ndarray]  # dropout's masks, scaled by 1 / keep, (n_l, N); none without dropout


Dropout = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]  # a -> (a with units dropped, scaled mask)


def forward(
    W: list[np.ndarray],
    b: list[np.ndarray],
    activation: str,
    x: np.ndarray,
    buffers: Buffers,
    dropout: Dropout | None = None,
) -> Pass:
    """The forward pass on inputs x (d_in, N), in `buffers`; `dropout` after each hidden
    activation, if given."""
    done, last = Pass([x], [], [], []), len(W) - 1
    for l in range(last + 1):
        z = np.matmul(W[l], done.inputs[-1], out=buffers.z[l])  # (n_out, n_in) @ (n_in, N) -> (n_out, N)
        z += b[l][:, None]  # + (n_out, 1)
        done.pre.append(z)
        if l < last:
            a = activate(activation, z, buffers.zeros[l])
            done.activations.append(a)
            if dropout is not None:
                a, mask = dropout(a)
                done.masks.append(mask)
            done.inputs.append(a)
    return done


def widths_of(W: list[np.ndarray]) -> tuple[int, ...]:
    """(d_in, n_1, ..., d_out) of a network's weights."""
    return (W[0].shape[1], *(len(w) for w in W))


def softmax_columns(z: np.ndarray, ones: np.ndarray) -> np.ndarray:
    """Each column's softmax (K, N), a new array. `ones`: K ones."""
    m = z[0].copy()  # each column's largest, a row at a time: K is small
    for k in range(1, len(z)):
        np.maximum(m, z[k], out=m)
    e = z - m  # each column's largest is now 0: exp can't overflow
    np.exp(e, out=e)
    e /= ones @ e  # (K,) @ (K, N) -> (N,): the denominators
    return e


def hidden_maxima(model: torch.nn.Module, xT: np.ndarray) -> list[np.ndarray]:
    """Each hidden unit's largest output (units,) over the float32 columns xT (d_in, N), layer by
    layer, in eval mode: a CPU float32 MLP's activations() reduced, in one NumPy pass."""
    W, b = weights_of(model)
    with _lender.lend() as scratch:
        buffers = scratch.get("activations", widths_of(W), xT.shape[1])
        return [a.max(axis=1) for a in forward(W, b, model.config.activation, xT, buffers).activations]


def top_class(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each column's top class (N,) uint8, the first of a tie as argmax; its softmax probability
    (N,) float32) of logits z (K, N), K ≤ 255: what a plane's boundary shades. A class at a time:
    argmax along K copies the logits first, ~8x slower here."""
    top = z[0].copy()
    winner = np.zeros(z.shape[1], dtype=np.uint8)
    for k in range(1, len(z)):
        better = z[k] > top
        winner += better * (np.uint8(k) - winner)  # k where better, else unchanged (uint8 wraps back)
        np.maximum(top, z[k], out=top)
    e = z - top  # each column's largest is now 0
    np.exp(e, out=e)
    total = np.ones(len(z), dtype=F32) @ e  # (K,) @ (K, N) -> (N,): Σ_k e^(z_k - max) ≥ 1
    return winner, np.divide(1, total, out=total)


class _Lender:
    """One Scratch for the process's plane drawing, lent to one caller at a time: frames take
    turns (pages.serving.turns), and a caller who finds it lent out gets a fresh one."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.scratch = Scratch()

    @contextmanager
    def lend(self) -> Iterator[Scratch]:
        if not self.lock.acquire(blocking=False):
            yield Scratch()
            return
        try:
            yield self.scratch
        finally:
            self.lock.release()


_lender = _Lender()


def numpy_outputs(
    model: torch.nn.Module, xT: np.ndarray, softmax: bool = False, columns: bool = False
) -> np.ndarray:
    """A CPU float32 MLP's outputs (N, d_out) on the float32 columns xT (d_in, N), in eval mode
    (dropout off), or their softmax probabilities; `columns`: the outputs as (d_out, N).
    predict_outputs's numbers in one NumPy forward pass, without torch's per-operation dispatch
    (the playground's plane: 10,000 points a frame)."""
    W, b = weights_of(model)
    with _lender.lend() as scratch:
        buffers = scratch.get("plane", widths_of(W), xT.shape[1])
        z = forward(W, b, model.config.activation, xT, buffers).pre[-1]  # (d_out, N)
        if softmax:
            return softmax_columns(z, np.ones(len(z), dtype=F32)).T  # a new array: not the lent buffer
        return z.copy() if columns else z.T.copy()


def as_float32(x: torch.Tensor) -> np.ndarray:
    """A CPU batch as float32 rows, as prepare_inputs makes it (uint8 pixels scaled to [0, 1])."""
    a = x.numpy()
    if a.ndim > 2:  # images as rows
        a = a.reshape(len(a), -1)
    if a.dtype == np.uint8:
        return np.multiply(a, F32(1 / 255), dtype=F32)  # one pass: float32(x) · float32(1/255), as torch
    return a if a.dtype == F32 else a.astype(F32)
