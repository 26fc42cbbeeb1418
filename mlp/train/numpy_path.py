"""The NumPy path: one whole training step of a small MLP in float32 NumPy, as torch computes it.

Forward, loss (cross-entropy through log-softmax, or the MSE), backprop by hand (the notes' and
mlp.manual's math), L2's gradient, global-norm clipping as `clip_grad_norm_`, then SGD (momentum,
Nesterov), Adam or AdamW as torch.optim's kernels, and L1's proximal step. Everything works in
place on NumPy views of the stepper's flat buffers (a CPU tensor's `.numpy()` shares its memory),
so the model, the guard, evaluation and export see every step, and the torch path can take over
at any step with the optimizer's state as it is. On a small network a torch step is ~30 dispatched
operations of a few µs each; the same arithmetic costs less than their overhead here.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch

from mlp.metrics import mse, r2_score
from mlp.model import LEAKY_SLOPE
from mlp.train.inference import evaluate
from mlp.train.optim import BETAS, EPS

GELU_C, GELU_K = math.sqrt(2.0 / math.pi), 0.044715  # torch's tanh-form GELU constants
F32 = np.float32
MAX_KEPT_INPUTS = 1 << 20  # validation inputs up to this many numbers are kept as float32 (4 MiB)


def activate(name: str, z: np.ndarray, zeros: np.ndarray) -> np.ndarray:
    """The activation a = f(z), as torch's forward computes it; in z's memory where backprop
    needs a alone (every activation but GELU, whose f'(z) needs z). `zeros`: z's shape."""
    if name == "relu":
        return np.maximum(z, zeros, out=z)  # ~3x faster against an array than against a scalar 0
    if name == "leaky_relu":
        return np.where(z > 0, z, z * F32(LEAKY_SLOPE))
    if name == "tanh":
        return np.tanh(z, out=z)
    if name == "sigmoid":
        return 0.5 * (1 + np.tanh(0.5 * z))  # = 1 / (1 + e^-z), without overflow warnings
    return 0.5 * z * (1 + np.tanh(GELU_C * (z + GELU_K * z * z * z)))  # gelu


def activation_grad(name: str, z: np.ndarray, a: np.ndarray) -> np.ndarray:
    """f'(z), from a = f(z) as torch's backward computes it; GELU's from z (for the others, z may
    have been overwritten by a)."""
    if name == "relu":
        return a > 0  # a mask: multiplying by it costs less than by a float copy
    if name == "leaky_relu":
        return np.where(a > 0, F32(1), F32(LEAKY_SLOPE))  # a > 0 exactly where z > 0
    if name == "tanh":
        return 1 - a * a
    if name == "sigmoid":
        return a * (1 - a)
    t = np.tanh(GELU_C * (z + GELU_K * z * z * z))  # gelu
    return 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * GELU_C * (1 + 3 * GELU_K * z * z)


class NumpyPath:
    """The step of mlp.train.paths.TorchPath in NumPy, on views of the same buffers."""

    name, reason = "numpy", ""

    def __init__(self, trainer) -> None:
        self.cfg = cfg = trainer.cfg
        self.totals = trainer.totals
        self.model, self.activation = trainer.model, trainer.model.config.activation
        layers = trainer.model.layers
        self.W = [layer.weight.detach().numpy() for layer in layers]  # (n_out, n_in), torch's layout
        self.b = [layer.bias.detach().numpy() for layer in layers]
        self.dW = [layer.weight.grad.numpy() for layer in layers]  # views into the stepper's .grad buffer
        self.db = [layer.bias.grad.numpy() for layer in layers]
        self.groups = trainer.stepper.groups
        self.flat = [(g.flat.numpy(), g.grad.numpy()) for g in self.groups]
        self.l1_group = 0 if cfg.l1 > 0 else None  # the stepper puts the weights first when L1 is on
        self._val: tuple[object, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._labels: tuple[object, np.ndarray] | None = None
        self._batch: tuple[object, np.ndarray, np.ndarray] | None = None  # (xb, x, y): a full batch's, kept
        self._state: dict[int, tuple[np.ndarray, ...]] = {}  # a group's Adam moments and step count, as views
        self._ones_cache: dict[int, np.ndarray] = {}
        self._zeros_cache: dict[tuple[int, ...], np.ndarray] = {}

    # --- forward and backward ------------------------------------------------------------

    def forward(self, x: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """([x, a1, ..., a_{L-1}], [z1, ..., z_L]): each layer's input and pre-activation."""
        inputs, pre, last = [x], [], len(self.W) - 1
        for l, (W, b) in enumerate(zip(self.W, self.b, strict=True)):
            z = inputs[-1] @ W.T  # (N, n_in) @ (n_in, n_out) -> (N, n_out)
            z += b  # + (n_out,), in place
            pre.append(z)
            if l < last:
                inputs.append(activate(self.activation, z, self._zeros(z.shape)))
        return inputs, pre

    def loss_and_dlogits(self, z: np.ndarray, y: np.ndarray, yb: object) -> tuple[float, np.ndarray, int]:
        """(mean loss, d loss / d logits (N, K), correct predictions) of a batch."""
        n = len(z)
        if self.cfg.loss == "mse":
            diff = z[:, 0] - y.astype(F32)  # (N,): ŷ - y
            return float(np.dot(diff, diff)) / n, (diff * F32(2 / n))[:, None], 0
        # Row maxima through argmax and a gather: a reduction along a short axis costs ~10x more.
        predicted = z.argmax(axis=1)
        shifted = z - z[np.arange(n), predicted][:, None]  # (N, K), max 0 per row: exp can't overflow
        e = np.exp(shifted)
        s = e @ self._ones(z.shape[1])  # (N, K) @ (K,) -> (N,): the softmax's denominators
        Y = self._one_hot(y, z.shape[1], yb)
        loss = (float(np.log(s).sum()) - float(np.vdot(shifted, Y))) / n  # mean of -log softmax[y]
        dz = e / s[:, None]  # softmax P
        dz -= Y
        dz *= F32(1 / n)  # (P - Y) / N
        return loss, dz, int(np.count_nonzero(predicted == y))

    def _zeros(self, shape: tuple[int, ...]) -> np.ndarray:
        if shape not in self._zeros_cache:
            self._zeros_cache[shape] = np.zeros(shape, dtype=F32)
        return self._zeros_cache[shape]

    def _ones(self, n: int) -> np.ndarray:
        """A vector of n ones: a product with it sums rows or columns (BLAS beats a reduction)."""
        if n not in self._ones_cache:
            self._ones_cache[n] = np.ones(n, dtype=F32)
        return self._ones_cache[n]

    def _one_hot(self, y: np.ndarray, K: int, key: object) -> np.ndarray:
        """Y (N, K), kept while the labels are the same tensor `key` (a full batch's are, every step)."""
        if self._labels is None or self._labels[0] is not key:
            self._labels = (key, np.eye(K, dtype=F32)[y])
        return self._labels[1]

    def backward(self, inputs: list[np.ndarray], pre: list[np.ndarray], dz: np.ndarray) -> None:
        """dW, db of every layer into the .grad views (weights before this step's update)."""
        ones = self._ones(len(dz))
        for l in range(len(self.W) - 1, -1, -1):
            np.matmul(dz.T, inputs[l], out=self.dW[l])  # (n_out, N) @ (N, n_in) -> (n_out, n_in)
            np.matmul(ones, dz, out=self.db[l])  # (N,) @ (N, n_out) -> (n_out,): the sum over rows
            if l:
                da = dz @ self.W[l]  # (N, n_out) @ (n_out, n_in) -> (N, n_in)
                dz = da * activation_grad(self.activation, pre[l - 1], inputs[l])

    # --- the step --------------------------------------------------------------------------

    def step(self, xb: torch.Tensor, yb: torch.Tensor, lr: float) -> None:
        """One optimizer step on the batch, its loss and predictions added to the running totals."""
        cfg = self.cfg
        if self._batch is None or self._batch[0] is not xb:  # a full batch is the same tensor every step
            self._batch = (xb, as_float32(xb), yb.numpy())
        _, x, y = self._batch
        inputs, pre = self.forward(x)
        loss, dz, correct = self.loss_and_dlogits(pre[-1], y, yb)
        self.backward(inputs, pre, dz)
        if cfg.l2:  # λ₂·Σw² in the loss; its gradient 2λ₂·w joins backprop's
            loss += cfg.l2 * float(sum(float(np.dot(W.ravel(), W.ravel())) for W in self.W))
            for W, dW in zip(self.W, self.dW, strict=True):
                dW += F32(2 * cfg.l2) * W
        if cfg.l1:  # in the loss shown, at the weights the gradient saw; the step is proximal
            loss += cfg.l1 * float(sum(float(np.abs(W).sum()) for W in self.W))
        if cfg.grad_clip > 0:
            self.clip(cfg.grad_clip)
        for group, (flat, grad) in zip(self.groups, self.flat, strict=True):
            self.update(group, flat, grad, lr)
        if self.l1_group is not None:
            self.l1_step(lr)
        self.totals.add_counts(loss, correct, len(y), pre[-1].shape[1], yb.is_floating_point())

    def clip(self, max_norm: float) -> None:
        """Scale every gradient by min(1, max_norm / (total norm + 1e-6)), as clip_grad_norm_."""
        total = math.sqrt(sum(float(np.dot(grad, grad)) for _, grad in self.flat))
        coef = min(max_norm / (total + 1e-6), 1.0)
        for _, grad in self.flat:
            grad *= F32(coef)

    def update(self, group, p: np.ndarray, grad: np.ndarray, lr: float) -> None:
        """torch.optim's update of one flat group, in place (coupled decay, except AdamW's)."""
        cfg, decay = self.cfg, group.weight_decay
        if cfg.optimizer in ("adam", "adamw"):
            if decay and cfg.optimizer == "adamw":
                p *= F32(1 - lr * decay)
            elif decay:
                grad = grad + F32(decay) * p
            if id(group) not in self._state:
                self._state[id(group)] = (
                    group.exp_avgs[0].numpy(),
                    group.exp_avg_sqs[0].numpy(),
                    group.steps[0].numpy(),
                )
            m, v, steps = self._state[id(group)]
            steps += 1
            t = float(steps)
            m += F32(1 - BETAS[0]) * (grad - m)  # lerp toward the gradient
            v *= F32(BETAS[1])
            v += F32(1 - BETAS[1]) * grad * grad
            denom = np.sqrt(v) * F32(1 / math.sqrt(1 - BETAS[1] ** t)) + F32(EPS)
            p -= F32(lr / (1 - BETAS[0] ** t)) * m / denom
            return
        if decay:
            grad = grad + F32(decay) * p
        if cfg.optimizer != "sgd":
            if group.momentum[0] is None:  # torch's first step: the buffer is the gradient
                group.momentum[0] = torch.from_numpy(grad.copy())
                buf = group.momentum[0].numpy()
            else:
                buf = group.momentum[0].numpy()
                buf *= F32(cfg.momentum)
                buf += grad
            grad = grad + F32(cfg.momentum) * buf if cfg.optimizer == "nesterov" else buf
        p -= F32(lr) * grad

    def l1_step(self, lr: float) -> None:
        """L1's proximal step on the weights, as Stepper._l1_step: shrink, stop at exactly 0."""
        group = self.groups[self.l1_group]
        p, threshold = self.flat[self.l1_group][0], F32(lr * self.cfg.l1)
        if self.cfg.optimizer in ("adam", "adamw"):
            v_hat = group.exp_avg_sqs[0].numpy() / F32(1 - BETAS[1] ** float(group.steps[0]))
            threshold = threshold / (np.sqrt(v_hat) + F32(EPS))
        np.copyto(p, np.where(np.abs(p) > threshold, p - np.sign(p) * threshold, F32(0)))

    def weights_finite(self) -> bool:
        """Whether every parameter is finite (the divergence guard's check, ~10x cheaper here)."""
        return all(np.isfinite(flat).all() for flat, _ in self.flat)

    # --- evaluation --------------------------------------------------------------------------

    def evaluate(self, X: torch.Tensor, y: torch.Tensor, set_eval: bool) -> tuple[float, float]:
        """As mlp.train.inference.evaluate: (mean cross-entropy, accuracy), or (MSE, R²)."""
        if X.numel() > MAX_KEPT_INPUTS:  # MNIST's test set: torch's evaluation, in chunks, keeps no copy
            return evaluate(self.model, X, y, set_eval=set_eval, loss=self.cfg.loss)
        if self._val is None or self._val[0] is not X:
            labels = y.numpy()
            self._val = (X, as_float32(X), labels, np.arange(len(labels)))
        _, x, labels, rows = self._val
        z = self.forward(x)[1][-1]
        if self.cfg.loss == "mse":
            return mse(labels, z[:, 0]), r2_score(labels, z[:, 0])
        n, predicted = max(1, len(z)), z.argmax(axis=1)
        m = z[rows, predicted]  # (N,): each row's maximum
        s = np.exp(z - m[:, None]) @ self._ones(z.shape[1])  # (N,): Σ_k e^(z_k - m)
        # Σ -log softmax[y] = Σ (log s + m - z[y]), each sum at once
        loss_sum = float(np.log(s).sum()) + float(m.sum()) - float(z[rows, labels].sum())
        return loss_sum / n, int(np.count_nonzero(predicted == labels)) / n


class Scratch:
    """Buffers for numpy_outputs's layers, kept for the next call. A plane's layer is ~1 MB (32
    units × 10,000 points), and a fresh array that size costs its page faults again on every
    frame, about as much as the arithmetic. Only the last shape of each is kept, so memory
    stays bounded however the networks change."""

    def __init__(self) -> None:
        self.buffers: dict[object, np.ndarray] = {}

    def empty(self, key: object, shape: tuple[int, ...]) -> np.ndarray:
        """A float32 buffer of this shape under `key`, its old contents left as they were."""
        if key not in self.buffers or self.buffers[key].shape != shape:
            self.buffers[key] = np.zeros(shape, dtype=F32)
        return self.buffers[key]

    def zeros(self, key: object, shape: tuple[int, ...]) -> np.ndarray:
        """Zeros of this shape, for ReLU to compare against (never written to)."""
        return self.empty(("zeros", key), shape)


class _Lender:
    """One Scratch for the process, lent to one caller at a time: frames take turns
    (mlp.train.turns), and a caller who finds it lent out gets a fresh one."""

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


def numpy_outputs(model: torch.nn.Module, xT: np.ndarray, softmax: bool = False) -> np.ndarray:
    """A CPU float32 MLP's outputs (N, d_out) on the float32 columns xT (d_in, N), in eval mode
    (dropout off), or their softmax probabilities: predict_outputs's numbers in one NumPy forward
    pass, without torch's per-operation dispatch (the playground's plane: 10,000 points a frame).

    Columns, not rows: a bias then adds along rows of N numbers, not N rows of a few, ~4x faster.
    """
    layers, activation, last = model.layers, model.config.activation, len(model.layers) - 1
    a = xT
    with _lender.lend() as scratch:
        for l, layer in enumerate(layers):
            W, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
            z = np.matmul(W, a, out=scratch.empty(l, (len(W), a.shape[1])))  # (n_out, n_in) @ (n_in, N)
            z += b[:, None]
            a = z if l == last else activate(activation, z, scratch.zeros(l, z.shape))
        if not softmax:
            return a.T.copy()  # out of the lent buffer
        m = a[0].copy()  # each point's largest output, a row at a time: K is small
        for k in range(1, len(a)):
            np.maximum(m, a[k], out=m)
        e = np.exp(a - m)  # (K, N), each column's largest 1: can't overflow
    e /= np.ones(len(e), dtype=F32) @ e  # (K,) @ (K, N) -> (N,): the softmax's denominators
    return e.T


def as_float32(x: torch.Tensor) -> np.ndarray:
    """A CPU batch as float32 rows, as prepare_inputs makes it (uint8 pixels scaled to [0, 1])."""
    a = x.numpy()
    if a.ndim > 2:  # images as rows
        a = a.reshape(len(a), -1)
    if a.dtype == np.uint8:
        return a.astype(F32) * F32(1 / 255)
    return a if a.dtype == F32 else a.astype(F32)
