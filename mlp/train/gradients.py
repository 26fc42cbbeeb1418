"""Who computes the gradients: PyTorch autograd, or mlp.manual's backprop written by hand.

Both fill each parameter's `.grad` (zeroed by the stepper, views into its flat buffer) and
return (loss, logits), so the optimizer, the schedule and everything after them can't tell
which one ran.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from mlp.manual import forward_backward
from mlp.train.config import TrainConfig, engine_problem
from mlp.train.inference import as_tensor, prepare_inputs

StepResult = tuple[torch.Tensor, torch.Tensor]  # (mean loss, a scalar tensor; logits (N, K))


class AutogradGradients:
    """loss.backward() on the model's own forward (optionally bf16 autocast, or CUDA graphs)."""

    def __init__(self, model: nn.Module, cfg: TrainConfig, device: torch.device) -> None:
        self.model, self.device, self.amp = model, device, cfg.amp
        self.dtype = next(model.parameters()).dtype
        self.one = torch.ones((), device=device)  # d loss / d loss, made once rather than every step
        # On CUDA an eager step is launch-bound (~0.2 ms for a small MLP); CUDA graphs replay
        # the whole forward and backward in one launch. A short last batch compiles a second graph.
        self.forward = torch.compile(model, mode="reduce-overhead") if cfg.compile else model

    def __call__(self, xb: torch.Tensor, yb: torch.Tensor) -> StepResult:
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.amp):
            logits = self.forward(prepare_inputs(xb, self.dtype))
            loss = F.cross_entropy(logits.float(), yb)
        loss.backward(self.one)  # into each .grad, which the stepper has zeroed
        return loss.detach(), logits.detach()


class ManualGradients:
    """mlp.manual's hand-written backprop fills each .grad: the optimizer can't tell the difference.

    On the CPU it runs the NumPy code on views of the weights (no copies); elsewhere the
    PyTorch code, on the device.
    """

    def __init__(self, model: nn.Module, device: torch.device) -> None:
        self.model, self.device = model, device
        self.dtype = next(model.parameters()).dtype

    def __call__(self, xb: torch.Tensor, yb: torch.Tensor) -> StepResult:
        x = prepare_inputs(xb, self.dtype)
        layers = self.model.layers
        params = [(layer.weight.detach().T, layer.bias.detach()) for layer in layers]
        y = yb
        if self.device.type == "cpu":
            params = [(W.numpy(), b.numpy()) for W, b in params]
            x, y = x.numpy(), yb.numpy()
        result = forward_backward(params, x, y, self.model.config.activation, record=False)
        for layer, (dW, db) in zip(layers, result.grads, strict=True):  # into the stepper's views
            layer.weight.grad.copy_(as_tensor(dW).T)
            layer.bias.grad.copy_(as_tensor(db))
        logits = as_tensor(result.tensors[f"z{len(layers)}"]).to(self.device)
        return torch.tensor(result.loss, device=self.device), logits


def check_engine(model: nn.Module, engine: str) -> None:
    """Raise ValueError if `engine` can't train `model`."""
    if engine != "manual":
        return
    config = getattr(model, "config", None)
    if config is None:
        raise ValueError("The manual engine trains mlp.model.MLP networks only.")
    if problem := engine_problem(engine, config.dropout):
        raise ValueError(problem)


def make_gradients(model: nn.Module, cfg: TrainConfig, device: torch.device):
    """The gradient source cfg.engine names, checked against the model."""
    check_engine(model, cfg.engine)
    if cfg.engine == "manual":
        return ManualGradients(model, device)
    return AutogradGradients(model, cfg, device)
