"""Running a model without training it: inputs as the model eats them, the loss, probabilities and
outputs, evaluation."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from mlp.metrics import mse, r2_score


def as_tensor(x: Any) -> torch.Tensor:
    """A tensor sharing memory with `x` where possible (the engine only reads its data)."""
    if torch.is_tensor(x):
        return x
    array = np.asarray(x)
    with warnings.catch_warnings():  # read-only arrays (the shared MNIST cache) are fine to read
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        return torch.as_tensor(array)


def prepare_inputs(x: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A batch as the model eats it: uint8 pixels scaled to [0, 1], images flattened to rows."""
    if x.dtype == torch.uint8:
        x = x.to(dtype).mul_(1 / 255)  # in place: the conversion already made a fresh tensor
    elif x.dtype != dtype:
        x = x.to(dtype)
    return x.flatten(1) if x.ndim > 2 else x


def batch_loss(logits: torch.Tensor, y: torch.Tensor, loss: str = "cross_entropy") -> torch.Tensor:
    """The mean loss of a batch: softmax cross-entropy against classes y, or for "mse" the mean
    squared error (1/N) Σ (ŷ - y)² of the one output ŷ = logits[:, 0] against real values y."""
    if loss == "mse":
        return (logits[:, 0] - y.to(logits.dtype)).square().mean()  # (N,) -> ()
    return F.cross_entropy(logits, y)


def mode_matters(model: nn.Module) -> bool:
    """Whether train/eval mode changes what the model computes (dropout, batch norm)."""
    return any(isinstance(m, (nn.Dropout, nn.modules.batchnorm._BatchNorm)) for m in model.modules())


@contextmanager
def eval_mode(model: nn.Module, needed: bool = True) -> Iterator[None]:
    """Eval mode for the block, then back. `needed=False` skips the toggle: it walks every module."""
    was_training = model.training
    if needed:
        model.eval()
    try:
        yield
    finally:
        if needed:
            model.train(was_training)


@torch.inference_mode()
def predict_proba(model: nn.Module, X: Any, batch_size: int = 8192, set_eval: bool = True) -> torch.Tensor:
    """Softmax probabilities (N, K) on the model's device, in eval mode, in chunks."""
    outputs = predict_outputs(model, X, batch_size, set_eval)
    return torch.softmax(outputs, dim=1) if len(outputs) else outputs


@torch.inference_mode()
def predict_outputs(model: nn.Module, X: Any, batch_size: int = 8192, set_eval: bool = True) -> torch.Tensor:
    """The model's raw outputs (N, d_out) (a regression's predictions), in eval mode, in chunks."""
    param = next(model.parameters())
    X = as_tensor(X)
    with eval_mode(model, set_eval):
        chunks = [
            model(prepare_inputs(X[i : i + batch_size].to(param.device), param.dtype))
            for i in range(0, len(X), batch_size)
        ]
    return torch.cat(chunks) if chunks else torch.empty(0, device=param.device)


@torch.inference_mode()
def evaluate(
    model: nn.Module,
    X: Any,
    y: Any,
    batch_size: int = 8192,
    set_eval: bool = True,
    loss: str = "cross_entropy",
) -> tuple[float, float]:
    """Mean cross-entropy and accuracy of `model` on (X, y), in eval mode; for loss="mse", the mean
    squared error and R² (1 - SS_res / SS_tot) of its one output."""
    if loss == "mse":
        predicted = predict_outputs(model, X, batch_size, set_eval)[:, 0].double().cpu().numpy()
        values = as_tensor(y).double().cpu().numpy()
        return mse(values, predicted), r2_score(values, predicted)
    param = next(model.parameters())
    X, y = as_tensor(X), as_tensor(y)
    loss_sum = torch.zeros((), device=param.device, dtype=torch.float64)
    correct = torch.zeros((), device=param.device, dtype=torch.int64)
    with eval_mode(model, set_eval):
        for i in range(0, len(X), batch_size):
            xb = prepare_inputs(X[i : i + batch_size].to(param.device), param.dtype)
            yb = y[i : i + batch_size].to(param.device)
            logits = model(xb)
            loss_sum += F.cross_entropy(logits, yb, reduction="sum").double()
            correct += (logits.argmax(1) == yb).sum()
    n = max(1, len(X))
    return loss_sum.item() / n, correct.item() / n
