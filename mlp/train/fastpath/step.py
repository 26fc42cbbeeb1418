"""The NumPy path: one whole training step of a small MLP in float32 NumPy, as torch computes it.

Forward (dropout's masks drawn by torch from the run's own generator, so they are autograd's
masks), the loss (cross-entropy through log-softmax, or the MSE), backprop by hand (the notes'
and mlp.manual's math), L2's gradient, global-norm clipping as `clip_grad_norm_`, then the
optimizer's update as torch.optim's kernels compute it (each optimizer's NumPy form, in its row:
mlp.train.optimizers), and L1's proximal step. The math runs one example a
column (mlp.train.fastpath.columns says why) and in place on NumPy views of the stepper's flat buffers
(a CPU tensor's `.numpy()` shares its memory), so the model, the guard, evaluation and export
see every step, and the torch path can take over at any step with the optimizer's state as it
is. On a small network a torch step is ~30 dispatched operations of a few µs each; the same
arithmetic costs less than their overhead here.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from mlp.metrics import mse, r2_score
from mlp.train.fastpath.columns import (
    F32,
    Buffers,
    Pass,
    Scratch,
    activation_grad,
    as_float32,
    forward,
    weights_of,
    widths_of,
)
from mlp.train.inference import evaluate
from mlp.train.optimizers import OPTIMIZERS

MAX_KEPT_INPUTS = 1 << 20  # validation inputs up to this many numbers are kept as float32 (4 MiB)


class NumpyPath:
    """The step of mlp.train.fastpath.choice.TorchPath in NumPy, on views of the same buffers."""

    name, reason = "numpy", ""

    def __init__(self, trainer) -> None:
        self.cfg = cfg = trainer.cfg
        self.rule = OPTIMIZERS[cfg.optimizer]  # the optimizer's row, looked up once
        self.totals, self.model = trainer.totals, trainer.model
        config = trainer.model.config
        self.activation, self.keep = config.activation, 1.0 - config.dropout
        self.W, self.b = weights_of(trainer.model)  # W (n_out, n_in), torch's layout
        self.widths = widths_of(self.W)
        self.ones_K = np.ones(self.widths[-1], dtype=F32)  # a product with these sums a column's classes
        layers = trainer.model.layers
        self.dW = [layer.weight.grad.numpy() for layer in layers]  # views into the stepper's .grad buffer
        self.db = [layer.bias.grad.numpy() for layer in layers]
        self.groups = trainer.stepper.groups
        self.flat = [(g.flat.numpy(), g.grad.numpy()) for g in self.groups]
        self.l1_group = 0 if cfg.l1 > 0 else None  # the stepper puts the weights first when L1 is on
        self.scratch = Scratch()
        self._batch: tuple[object, np.ndarray, Labels] | None = None  # tensor, columns, labels: kept
        self._val: tuple[object, np.ndarray, Labels] | None = None

    # --- forward and backward ------------------------------------------------------------

    def _columns(self, xb: torch.Tensor, yb: torch.Tensor) -> tuple[np.ndarray, Labels]:
        """(x (d_in, N), its labels) of a batch; kept while the batch is the same tensor (a full
        batch's is, every step)."""
        if self._batch is not None and self._batch[0] is xb:
            _, x, labels = self._batch
            if not x.flags.c_contiguous:  # the same batch again (a full batch): laid out once
                x = np.ascontiguousarray(x)
                self._batch = (xb, x, labels)
            return x, labels
        # A view: BLAS reads the rows as columns. Laying out a mini-batch's columns would cost
        # more than it saves (~50 µs a step on MNIST's batches of 128).
        x = as_float32(xb).T
        labels = labels_of(yb.numpy(), len(self.ones_K), self.cfg.loss == "mse")
        self._batch = (xb, x, labels)
        return x, labels

    def _dropout(self, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(a with units dropped, the mask scaled by 1 / keep): the mask torch's forward would
        draw here, from the same generator in the same order (mlp.model.MLP._dropout)."""
        mask = torch.empty(a.shape[::-1]).bernoulli_(self.keep, generator=self.model.generator)
        scaled = mask.div_(self.keep).numpy().T  # (n_l, N)
        return a * scaled, scaled

    def forward_train(self, x: np.ndarray) -> tuple[Pass, Buffers]:
        """The forward pass of a training batch x (d_in, N), with dropout's masks if it has any."""
        dropout = self._dropout if self.keep < 1 else None
        buffers = self.scratch.get("train", self.widths, x.shape[1], backward=True)
        return forward(self.W, self.b, self.activation, x, buffers, dropout), buffers

    def loss_and_dlogits(self, z: np.ndarray, labels: Labels) -> tuple[float, np.ndarray, int]:
        """(mean loss, d loss / d logits (K, N), correct predictions) of a batch; z (K, N)."""
        n = z.shape[1]
        if labels.Y is None:  # the MSE of the one output
            diff = z[0] - labels.y  # (N,): ŷ - y
            return float(np.dot(diff, diff)) / n, (diff * F32(2 / n))[None, :], 0
        loss_sum, correct, e, s = softmax_loss(z, labels, self.ones_K)
        e /= s  # softmax P
        e -= labels.Y
        e *= F32(1 / n)  # (P - Y) / N
        return loss_sum / n, e, correct

    def backward(self, done: Pass, buffers: Buffers, dz: np.ndarray) -> None:
        """dW, db of every layer into the .grad views (weights before this step's update), from
        dz (K, N) = d loss / d logits."""
        for l in range(len(self.W) - 1, -1, -1):
            np.matmul(dz, done.inputs[l].T, out=self.dW[l])  # (n_out, N) @ (N, n_in) -> (n_out, n_in)
            np.matmul(dz, buffers.ones, out=self.db[l])  # (n_out, N) @ (N,) -> (n_out,): sum over examples
            if l:
                h = l - 1  # the hidden layer below
                da = np.matmul(self.W[l].T, dz, out=buffers.da[h])  # (n_in, n_out) @ (n_out, N) -> (n_in, N)
                if done.masks:  # through dropout: the kept units' gradients, scaled as they were
                    da *= done.masks[h]
                da *= activation_grad(
                    self.activation, done.pre[h], done.activations[h], buffers.zeros[h], buffers.mask[h]
                )
                dz = da  # dL/dz of layer h

    # --- the step --------------------------------------------------------------------------

    def step(self, xb: torch.Tensor, yb: torch.Tensor, lr: float) -> None:
        """One optimizer step on the batch, its loss and predictions added to the running totals."""
        cfg = self.cfg
        x, labels = self._columns(xb, yb)
        done, buffers = self.forward_train(x)
        loss, dz, correct = self.loss_and_dlogits(done.pre[-1], labels)
        self.backward(done, buffers, dz)
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
        self.totals.add_counts(loss, correct, x.shape[1], len(self.ones_K), labels.Y is None)

    def clip(self, max_norm: float) -> None:
        """Scale every gradient by min(1, max_norm / (total norm + 1e-6)), as clip_grad_norm_."""
        total = math.sqrt(sum(float(np.dot(grad, grad)) for _, grad in self.flat))
        coef = min(max_norm / (total + 1e-6), 1.0)
        for _, grad in self.flat:
            grad *= F32(coef)

    def update(self, group, p: np.ndarray, grad: np.ndarray, lr: float) -> None:
        """The optimizer's update of one flat group in place, as torch.optim's (its row's NumPy
        form: mlp.train.optimizers)."""
        self.rule.numpy_step(group, p, grad, lr, self.cfg)

    def l1_step(self, lr: float) -> None:
        """L1's proximal step on the weights, as Stepper._l1_step: shrink, stop at exactly 0."""
        group = self.groups[self.l1_group]
        p, threshold = self.flat[self.l1_group][0], F32(lr * self.cfg.l1)
        if (scale := self.rule.step_scale) is not None:
            threshold = threshold * scale(group).numpy()
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
            x = np.ascontiguousarray(as_float32(X).T)
            self._val = (X, x, labels_of(y.numpy(), len(self.ones_K), self.cfg.loss == "mse"))
        _, x, labels = self._val
        buffers = self.scratch.get("val", self.widths, x.shape[1])
        z = forward(self.W, self.b, self.activation, x, buffers).pre[-1]  # (K, N)
        if labels.Y is None:
            return mse(labels.y, z[0]), r2_score(labels.y, z[0])
        n = max(1, len(labels.y))
        loss_sum, correct, _, _ = softmax_loss(z, labels, self.ones_K)
        return loss_sum / n, correct / n


class Labels(NamedTuple):
    """A batch's labels as the NumPy path reads them."""

    y: np.ndarray  # (N,): classes, or a regression's values (float32)
    Y: np.ndarray | None  # (K, N): one-hot classes; None for a regression
    at: np.ndarray | None  # (N,): where each example's class is in z.ravel() of logits z (K, N): y·N + n


def labels_of(y: np.ndarray, classes: int, regress: bool) -> Labels:
    """The labels y (N,) of a batch, with what the cross-entropy reads of them."""
    if regress:
        return Labels(y.astype(F32), None, None)
    n = len(y)
    return Labels(y, np.eye(classes, dtype=F32)[:, y], y * n + np.arange(n))


def softmax_loss(
    z: np.ndarray, labels: Labels, ones_K: np.ndarray
) -> tuple[float, int, np.ndarray, np.ndarray]:
    """(Σ -log softmax(z)[y], correct predictions, e = exp(z - max) (K, N), s = Σ_k e (N,)) of
    logits z (K, N), as torch's cross-entropy and argmax compute them."""
    n = z.shape[1]
    shifted = z - z.max(axis=0)  # (K, N): each column's largest is 0, so exp can't overflow
    true = shifted.ravel().take(labels.at)  # (N,): the true class's, 0 where it scores highest
    correct = n - int(np.count_nonzero(true))
    if correct and np.count_nonzero(shifted == 0) > n:  # a tie: argmax takes the first, as torch's
        correct = int(np.count_nonzero(z.argmax(axis=0) == labels.y))
    e = np.exp(shifted, out=shifted)
    s = ones_K @ e  # (K,) @ (K, N) -> (N,): the softmax's denominators
    # -log softmax[y] = log s - shifted[y], summed at once
    return float(np.log(s).sum()) - float(true.sum()), correct, e, s
