"""The same MLP with the math written out: forward, loss and backprop by hand, no autograd.

Every operation is a small function below, written once for NumPy and once for PyTorch (the
activations' f and f' once for both, in their table: mlp/activations.py), so the page can show
the exact code that produced each number. `forward_backward` runs them in
order and records each intermediate as a named `Step` (`z1, a1, ..., probs, loss` forward;
`Y, dz2, dW2, db2, da1, ...` backward), the names the seed notes and the page use.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import torch

from mlp.activations import ACTIVATIONS
from mlp.activations import activation as activation_row

Array = Any  # np.ndarray or torch.Tensor; a call answers in the kind it was given


class CommonOps:
    """The operations NumPy and PyTorch spell the same way: matmuls and element-wise math."""

    @staticmethod
    def affine(a_prev, W, b):
        return a_prev @ W + b  # (N, n_in) @ (n_in, n_out) + (n_out,) -> (N, n_out)

    @staticmethod
    def dlogits(probs, Y):
        return (probs - Y) / len(probs)  # (N, K): d(mean loss)/d logits

    @staticmethod
    def mse(z, y):
        return ((z[:, 0] - y) ** 2).mean()  # (N, 1) logits: the one output ŷ; (1/N) Σ (ŷ - y)²

    @staticmethod
    def dmse(z, y):
        return (2 * (z[:, 0] - y) / len(z))[:, None]  # (N, 1): d(MSE)/dŷ = 2 (ŷ - y) / N

    @staticmethod
    def weight_grad(a_prev, dz):
        return a_prev.T @ dz  # (n_in, N) @ (N, n_out) -> (n_in, n_out)

    @staticmethod
    def input_grad(dz, W):
        return dz @ W.T  # (N, n_out) @ (n_out, n_in) -> (N, n_in)

    @staticmethod
    def preact_grad(da, act_grad):
        return da * act_grad  # (N, n) * (N, n): chain rule through the activation

    @staticmethod
    def penalty(W, l1, l2):
        return l1 * abs(W).sum() + l2 * (W * W).sum()  # λ₁·Σ|w| + λ₂·Σw²: a scalar, weights only

    @staticmethod
    def sgd_update(param, grad, lr):
        return param - lr * grad  # same shape as param: a small step against the gradient


class NumpyOps(CommonOps):
    """Each operation of the forward and backward pass, in NumPy."""

    @staticmethod
    def softmax(logits):
        e = np.exp(logits - logits.max(axis=1, keepdims=True))  # shift: exp never overflows
        return e / e.sum(axis=1, keepdims=True)  # (N, K), rows sum to 1

    @staticmethod
    def cross_entropy(logits, y):
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))  # log-softmax
        return -log_probs[np.arange(len(y)), y].mean()  # mean over the batch of -log p[y]

    @staticmethod
    def one_hot(y, K, like):
        Y = np.zeros_like(like)  # (N, K)
        Y[np.arange(len(y)), y] = 1
        return Y

    @staticmethod
    def bias_grad(dz):
        return dz.sum(axis=0)  # (N, n_out) -> (n_out,): the bias touched every row

    @staticmethod
    def penalty_grad(W, l1, l2):
        return l1 * np.sign(W) + 2 * l2 * W  # (n_in, n_out): d penalty / dW; sign(0) = 0, as autograd's


class TorchOps(CommonOps):
    """Each operation of the forward and backward pass, in PyTorch (no autograd used)."""

    @staticmethod
    def softmax(logits):
        e = torch.exp(logits - logits.amax(dim=1, keepdim=True))  # shift: exp never overflows
        return e / e.sum(dim=1, keepdim=True)  # (N, K), rows sum to 1

    @staticmethod
    def cross_entropy(logits, y):
        shifted = logits - logits.amax(dim=1, keepdim=True)
        log_probs = shifted - torch.log(torch.exp(shifted).sum(dim=1, keepdim=True))  # log-softmax
        return -log_probs[torch.arange(len(y)), y].mean()  # mean over the batch of -log p[y]

    @staticmethod
    def one_hot(y, K, like):
        Y = torch.zeros_like(like)  # (N, K)
        Y[torch.arange(len(y)), y] = 1
        return Y

    @staticmethod
    def bias_grad(dz):
        return dz.sum(dim=0)  # (N, n_out) -> (n_out,): the bias touched every row

    @staticmethod
    def penalty_grad(W, l1, l2):
        return l1 * torch.sign(W) + 2 * l2 * W  # (n_in, n_out): d penalty / dW; sign(0) = 0, as autograd's


BACKENDS: dict[str, type] = {"numpy": NumpyOps, "torch": TorchOps}
BACKWARD_OPS = ("one_hot", "dlogits", "weight_grad", "bias_grad", "input_grad", "preact_grad")
NEW = "_new"  # the suffix of a parameter after the update, and of what the pass computes with it


@dataclass(frozen=True)
class Step:
    """One named intermediate of the computation."""

    name: str  # the variable, as in the notes: "z1", "a1", "probs", "loss", "dz2", "dW2", ...
    phase: str  # "forward", "backward" or "update"
    op: str  # the function of NumpyOps / TorchOps that computed it
    layer: int  # 1-based layer this step belongs to; 0 for softmax, loss and one-hot
    formula: str  # LaTeX of what it computes
    inputs: tuple[str, ...]  # names of its operands in ForwardBackward.tensors
    value: Array = field(repr=False)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(np.shape(self.value))


@dataclass
class ForwardBackward:
    """Everything one forward and backward pass computed."""

    loss: float  # mean cross-entropy over the batch
    probs: Array  # (N, K) softmax probabilities
    grads: list[tuple[Array, Array]]  # [(dW, db)], each with its parameter's shape
    steps: list[Step]  # forward then backward, in the order they ran
    tensors: dict[str, Array]  # every named tensor: X, y, W1, b1, z1, ..., db1
    backend: str  # "numpy" or "torch"

    def step(self, name: str) -> Step:
        """The step that computed `name`."""
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(f"No step named {name!r}; steps are {[s.name for s in self.steps]}.")


def shape_text(shape: Sequence) -> str:
    """Python's way of writing a shape: (N, d_in), (K,), ()."""
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(s) for s in shape) + ")"


def backend_of(x: Array) -> str:
    """'torch' for a tensor, 'numpy' for anything array-like."""
    return "torch" if torch.is_tensor(x) else "numpy"


def derivative_name(layer: int) -> str:
    """The name of the activation's derivative at z_layer, an operand of backprop: "f'(z1)"."""
    return f"f'(z{layer})"


def step_code(step: Step, backend: str, activation: str, break_grad: bool = False) -> str:
    """The code that computed `step`, as it ran: the call with its arguments, then the source of
    each function it called (and whether NumPy and PyTorch share it). dz = da ⊙ f'(z) shows the
    derivative's own call first."""
    same = "  (NumPy and PyTorch run this very code)" if same_in_both(step.op, activation) else ""
    if step.op == "sgd_update":
        lr = step.formula.split("=")[-1].strip()
        call = f"{step.name} = sgd_update({', '.join(step.inputs)}, lr)  # lr = {lr}"
        return f"# this step:{same}\n{call}\n\n{op_source(backend, step.op)}"
    if step.name.endswith(NEW):  # loss_new: the same batch through the updated network
        lines, h = [], "X"
        for l in range(1, int(step.inputs[0][1 : -len(NEW)]) + 1):
            lines += [
                f"z{l}{NEW} = affine({h}, W{l}{NEW}, b{l}{NEW})",
                f"a{l}{NEW} = {activation}(z{l}{NEW})",
            ]
            h = f"a{l}{NEW}"
        calls = "\n".join([*lines[:-1], f"{step.name} = cross_entropy({', '.join(step.inputs)})"])
        again = "# this step: the forward pass again, with the new parameters"
        return f"{again}\n{calls}\n\n{op_source(backend, step.op)}"
    if step.op != "preact_grad":
        call = f"{step.name} = {step.op}({', '.join(step.inputs)})"
        return f"# this step:{same}\n{call}\n\n{op_source(backend, step.op)}"
    da, z = step.inputs
    derivative = f"{activation}_grad({z})"
    f_prime = f"1 - {derivative}  # broken on purpose: the mask flipped" if break_grad else derivative
    calls = f"f_prime = {f_prime}  # f'({z})\n{step.name} = preact_grad({da}, f_prime)"
    sources = f"{op_source(backend, f'{activation}_grad')}\n\n{op_source(backend, step.op)}"
    return f"# this step:{same}\n{calls}\n\n{sources}"


def same_in_both(op: str, activation: str) -> bool:
    """Whether NumPy and PyTorch run the very same code for this operation."""
    ops = [op, f"{activation}_grad"] if op == "preact_grad" else [op]
    return all(op_source("numpy", name) == op_source("torch", name) for name in ops)


@cache
def op_source(backend: str, op: str) -> str:
    """The source of one operation, as it runs: what the page shows beside the numbers."""
    name, note = op.removesuffix("_grad"), ""
    if name in ACTIVATIONS:  # an activation's f or f': one code for NumPy and PyTorch
        fn = ACTIVATIONS[name].grad if op.endswith("_grad") else ACTIVATIONS[name].f
        note = "# xp(z): numpy for an array, torch for a tensor (their math is spelled alike)\n"
    else:
        fn = getattr(BACKENDS[backend], op)
    lines = inspect.getsource(fn).splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def "))
    return note + textwrap.dedent("\n".join(lines[start:]))


@cache
def pass_source() -> str:
    """The source of forward_backward: the loop that calls the operations in order."""
    return inspect.getsource(forward_backward)


def _check_inputs(params: Sequence[tuple[Array, Array]], X: Array, y: Array) -> None:
    if len(params) == 0:
        raise ValueError("params is empty: a network needs at least one (W, b) layer.")
    if len(np.shape(X)) != 2:
        raise ValueError(f"X must be 2-D (N, d_in); got shape {tuple(np.shape(X))}.")
    n, width = np.shape(X)
    if np.shape(y) != (n,):
        raise ValueError(f"y must hold one label per row of X, shape ({n},); got {tuple(np.shape(y))}.")
    for l, (W, b) in enumerate(params, start=1):
        if len(np.shape(W)) != 2 or np.shape(W)[0] != width or np.shape(b) != (np.shape(W)[1],):
            raise ValueError(
                f"Layer {l}: W must be ({width}, n_out) and b (n_out,); "
                f"got W {tuple(np.shape(W))}, b {tuple(np.shape(b))}."
            )
        width = np.shape(W)[1]
    labels = y.cpu().numpy() if torch.is_tensor(y) else np.asarray(y)
    if n and (labels.min() < 0 or labels.max() >= width):
        raise ValueError(f"Labels must be integers in [0, {width - 1}] for K = {width} classes.")


def _tex(name: str) -> str:
    """'dW2' -> 'dW_{2}', 'X' -> 'X', 'W2_new' -> 'W_{2}^{\\text{new}}'."""
    if name.endswith(NEW):
        return _tex(name[: -len(NEW)]) + r"^{\text{new}}"
    stem = name.rstrip("0123456789")
    return f"{stem}_{{{name[len(stem) :]}}}" if stem != name else name


def formula(name: str, op: str, inputs: Sequence[str], activation: str, lr: float = 0.0) -> str:
    """LaTeX for the step `name` = op(inputs)."""
    out, ins = _tex(name), [_tex(i) for i in inputs]
    if op == "affine":
        return rf"{out} = {ins[0]} {ins[1]} + {ins[2]}"
    if op in ACTIVATIONS:
        return rf"{out} = f({ins[0]}),\quad f(z) = {ACTIVATIONS[activation].tex}"
    if op == "softmax":
        return r"P_{ik} = \frac{e^{z_{ik} - \max_j z_{ij}}}{\sum_j e^{z_{ij} - \max_j z_{ij}}}"
    if op == "cross_entropy" and name.endswith(NEW):  # the forward pass again, with the new parameters
        return r"\mathcal{L}^{\text{new}} = -\frac{1}{N} \sum_{i=1}^{N} \log P^{\text{new}}_{i, y_i}"
    if op == "cross_entropy":
        return r"\mathcal{L} = -\frac{1}{N} \sum_{i=1}^{N} \log P_{i, y_i}"
    if op == "one_hot":
        return r"Y_{ik} = \mathbb{1}[y_i = k]"
    if op == "dlogits":
        return rf"{out} = \frac{{P - Y}}{{N}}"
    if op == "weight_grad":
        return rf"{out} = {ins[0]}^\top {ins[1]}"
    if op == "bias_grad":
        return rf"{out} = \mathbf{{1}}^\top {ins[0]} = \textstyle\sum_i {ins[0]}[i, :]"
    if op == "input_grad":
        return rf"{out} = {ins[0]}\, {ins[1]}^\top"
    if op == "preact_grad":
        return rf"{out} = {ins[0]} \odot f'({ins[1]}),\quad f'(z) = {ACTIVATIONS[activation].grad_tex}"
    if op == "sgd_update":
        return rf"{out} = {ins[0]} - \mathrm{{lr}} \cdot {ins[1]},\quad \mathrm{{lr}} = {lr:g}"
    raise ValueError(f"No formula for op {op!r}.")


def forward_backward(
    params: Sequence[tuple[Array, Array]],
    X: Array,
    y: Array,
    activation: str = "relu",
    *,
    break_grad: bool = False,
    lr: float | None = None,
) -> ForwardBackward:
    """Forward pass, softmax cross-entropy loss and backprop for [(W, b)] with W (in, out).

    `break_grad` is a teaching switch: backprop uses 1 - f'(z) instead of f'(z) (for ReLU, the
    mask flipped), so a gradient check has something to catch. With `lr`, the pass ends with one
    step of gradient descent, W_new = W - lr * dW for every parameter, and the loss of the batch
    under the new parameters (`loss_new`). Training goes through `train_step`: the same
    operations without the steps and their formulas.
    """
    activation_row(activation)  # a ValueError naming the choices, for one that isn't
    _check_inputs(params, X, y)
    backend = backend_of(X)
    ops = BACKENDS[backend]
    act, act_grad = ACTIVATIONS[activation].f, ACTIVATIONS[activation].grad
    L = len(params)
    steps: list[Step] = []
    tensors: dict[str, Array] = {"X": X, "y": y}
    for l, (W, b) in enumerate(params, start=1):
        tensors[f"W{l}"], tensors[f"b{l}"] = W, b

    def keep(name: str, op: str, layer: int, inputs: Sequence[str], value: Array) -> Array:
        phase = "update" if name.endswith(NEW) else "backward" if op in BACKWARD_OPS else "forward"
        step_formula = formula(name, op, inputs, activation, lr or 0.0)
        steps.append(Step(name, phase, op, layer, step_formula, tuple(inputs), value))
        tensors[name] = value
        return value

    def a(l: int) -> str:  # the name of layer l's input; a0 is the batch X
        return "X" if l == 0 else f"a{l}"

    # Forward: z_l = a_{l-1} W_l + b_l, then a_l = f(z_l) for hidden layers; z_L are the logits.
    h = X
    for l, (W, b) in enumerate(params, start=1):
        z = keep(f"z{l}", "affine", l, [a(l - 1), f"W{l}", f"b{l}"], ops.affine(h, W, b))
        if l < L:
            h = keep(a(l), activation, l, [f"z{l}"], act(z))
    probs = keep("probs", "softmax", 0, [f"z{L}"], ops.softmax(z))
    loss = keep("loss", "cross_entropy", 0, [f"z{L}", "y"], ops.cross_entropy(z, y))

    # Backward: dz_L = (P - Y) / N, then per layer dW = a^T dz, db = 1^T dz, da = dz W^T,
    # and dz of the layer below = da * f'(z).
    Y = keep("Y", "one_hot", 0, ["y"], ops.one_hot(y, np.shape(probs)[1], probs))
    dz = keep(f"dz{L}", "dlogits", L, ["probs", "Y"], ops.dlogits(probs, Y))
    grads: list[tuple[Array, Array]] = []
    for l in range(L, 0, -1):
        dW = keep(f"dW{l}", "weight_grad", l, [a(l - 1), f"dz{l}"], ops.weight_grad(tensors[a(l - 1)], dz))
        db = keep(f"db{l}", "bias_grad", l, [f"dz{l}"], ops.bias_grad(dz))
        grads.insert(0, (dW, db))
        if l > 1:
            da = keep(
                f"da{l - 1}", "input_grad", l, [f"dz{l}", f"W{l}"], ops.input_grad(dz, params[l - 1][0])
            )
            f_prime = act_grad(tensors[f"z{l - 1}"])
            if break_grad:
                f_prime = 1 - f_prime
            tensors[derivative_name(l - 1)] = f_prime  # dz's other operand: f'(z), as it was used
            dz = keep(
                f"dz{l - 1}", "preact_grad", l - 1, [f"da{l - 1}", f"z{l - 1}"], ops.preact_grad(da, f_prime)
            )

    if lr is not None:  # one step downhill, then the same batch through the new network
        new_params = [
            (
                keep(f"W{l}{NEW}", "sgd_update", l, [f"W{l}", f"dW{l}"], ops.sgd_update(W, dW, lr)),
                keep(f"b{l}{NEW}", "sgd_update", l, [f"b{l}", f"db{l}"], ops.sgd_update(b, db, lr)),
            )
            for l, ((W, b), (dW, db)) in enumerate(zip(params, grads, strict=True), start=1)
        ]
        h = X
        for l, (W, b) in enumerate(new_params, start=1):
            h = z = ops.affine(h, W, b)
            if l < L:
                h = act(z)
        tensors[f"z{L}{NEW}"] = z  # the new logits: loss_new's operand, not a step of its own
        keep(f"loss{NEW}", "cross_entropy", 0, [f"z{L}{NEW}", "y"], ops.cross_entropy(z, y))

    return ForwardBackward(float(loss), probs, grads, steps, tensors, backend)


def train_step(
    params: Sequence[tuple[Array, Array]],
    X: Array,
    y: Array,
    activation: str = "relu",
    l1: float = 0.0,
    l2: float = 0.0,
    loss: str = "cross_entropy",
) -> tuple[Array, Array, list[tuple[Array, Array]]]:
    """(loss, logits, [(dW, db)] per layer): the training engine's way into this module.

    The same operations as `forward_backward`, in the same order, with nothing kept but what
    backprop needs: on a small network each Python-level step is a large part of the cost.
    With `l1`, `l2`: the loss is cross-entropy + λ₁·Σ|W| + λ₂·ΣW² over the weights (not the
    biases), and each dW gets the penalty's gradient λ₁·sign(W) + 2λ₂·W added by hand.
    With loss="mse" (a regression: one output, real-valued y), the loss is (1/N) Σ (ŷ - y)² and
    backprop starts from dz_L = 2 (ŷ - y) / N instead of (P - Y) / N.
    """
    ops = BACKENDS[backend_of(X)]
    act, act_grad = ACTIVATIONS[activation].f, ACTIVATIONS[activation].grad
    inputs, pre = [X], []  # a_{l-1} and z_l of every layer
    for l, (W, b) in enumerate(params, start=1):
        z = ops.affine(inputs[-1], W, b)
        pre.append(z)
        if l < len(params):
            inputs.append(act(z))
    if loss == "mse":
        y = y.to(z.dtype) if torch.is_tensor(y) else y.astype(z.dtype)
        dz = ops.dmse(z, y)
    else:
        probs = ops.softmax(z)
        dz = ops.dlogits(probs, ops.one_hot(y, probs.shape[1], probs))
    grads: list[tuple[Array, Array]] = []
    for l in range(len(params) - 1, -1, -1):
        grads.append((ops.weight_grad(inputs[l], dz), ops.bias_grad(dz)))
        if l:
            dz = ops.preact_grad(ops.input_grad(dz, params[l][0]), act_grad(pre[l - 1]))
    loss, grads = (ops.mse(z, y) if loss == "mse" else ops.cross_entropy(z, y)), grads[::-1]
    if l1 or l2:  # the penalty is a sum over weights: its gradient adds to dW and to nothing else
        loss = loss + sum(ops.penalty(W, l1, l2) for W, _ in params)
        pairs = zip(grads, params, strict=True)
        grads = [(dW + ops.penalty_grad(W, l1, l2), db) for (dW, db), (W, _) in pairs]
    return loss, z, grads
