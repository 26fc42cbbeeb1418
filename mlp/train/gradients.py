"""Who computes the gradients: PyTorch autograd, or mlp.manual's backprop written by hand.

Both fill each parameter's `.grad` (zeroed by the stepper, views into its flat buffer) and
return (loss, logits), so the optimizer, the schedule and everything after them can't tell
which one ran. The loss they return includes the L1 and L2 penalties (mlp.train.penalty); the
gradient includes L2's, while L1 is the stepper's proximal step, the same for both.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from mlp.manual import train_step
from mlp.train.config import TrainConfig, engine_problem
from mlp.train.inference import batch_loss, prepare_inputs
from mlp.train.penalty import l1_term, l2_term, penalised

StepResult = tuple[torch.Tensor, torch.Tensor]  # (mean loss, a scalar tensor; logits (N, K))


class AutogradGradients:
    """loss.backward() on the model's own forward (optionally bf16 autocast, or CUDA graphs)."""

    def __init__(self, model: nn.Module, cfg: TrainConfig, device: torch.device) -> None:
        self.model, self.device, self.amp, self.loss = model, device, cfg.amp, cfg.loss
        self.l1, self.l2, self.weights = cfg.l1, cfg.l2, penalised(model)
        self.dtype = next(model.parameters()).dtype
        self.one = torch.ones((), device=device)  # d loss / d loss, made once rather than every step
        # On CUDA an eager step is launch-bound (~0.2 ms for a small MLP); CUDA graphs replay
        # the whole forward and backward in one launch. A short last batch compiles a second graph.
        self.forward = torch.compile(model, mode="reduce-overhead") if cfg.compile else model

    def __call__(self, xb: torch.Tensor, yb: torch.Tensor) -> StepResult:
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.amp):
            logits = self.forward(prepare_inputs(xb, self.dtype))
            loss = batch_loss(logits.float(), yb, self.loss)
        if self.l2:
            loss = loss + l2_term(self.weights, self.l2)  # its gradient 2λ₂·w comes with backward
        loss.backward(self.one)  # into each .grad, which the stepper has zeroed
        shown = loss.detach()
        if self.l1:  # in the loss shown; the stepper's proximal step does what its gradient would
            shown = shown + l1_term([w.detach() for w in self.weights], self.l1)
        return shown, logits.detach()


class ManualGradients:
    """mlp.manual's hand-written backprop fills each .grad: the optimizer can't tell the difference.

    On the CPU it runs the NumPy code on views of the weights (no copies); elsewhere the
    PyTorch code, on the device. L2's gradient 2λ₂·W is added by hand there; L1 only adds its
    value to the loss here, because the stepper's proximal step applies it, as with autograd.
    """

    def __init__(
        self,
        model: nn.Module,
        device: torch.device,
        l1: float = 0.0,
        l2: float = 0.0,
        loss: str = "cross_entropy",
    ) -> None:
        self.model, self.device, self.l1, self.l2, self.loss = model, device, l1, l2, loss
        self.dtype = next(model.parameters()).dtype
        self._views: tuple[tuple[int, int], list, list] | None = None

    def _numpy_views(self) -> tuple[list, list]:
        """[(W (in, out), b)] and their .grad as NumPy views, made again only when the buffers
        behind them change (a new optimizer flattens the parameters anew)."""
        first = self.model.layers[0].weight
        key = (first.data_ptr(), first.grad.data_ptr())
        if self._views is None or self._views[0] != key:
            layers = self.model.layers
            params = [(layer.weight.detach().numpy().T, layer.bias.detach().numpy()) for layer in layers]
            grads = [(layer.weight.grad.numpy().T, layer.bias.grad.numpy()) for layer in layers]
            self._views = (key, params, grads)
        return self._views[1], self._views[2]

    def __call__(self, xb: torch.Tensor, yb: torch.Tensor) -> StepResult:
        x, activation = prepare_inputs(xb, self.dtype), self.model.config.activation
        if self.device.type == "cpu":  # NumPy, on views of the weights and of the .grad buffers
            params, grad_views = self._numpy_views()
            loss, logits, grads = train_step(
                params, x.numpy(), yb.numpy(), activation, l2=self.l2, loss=self.loss
            )
            for (dW, db), (gW, gb) in zip(grads, grad_views, strict=True):
                np.copyto(gW, dW)
                np.copyto(gb, db)
            return self._with_l1(torch.tensor(loss)), torch.from_numpy(logits)
        layers = self.model.layers
        params = [(layer.weight.detach().T, layer.bias.detach()) for layer in layers]
        loss, logits, grads = train_step(params, x, yb, activation, l2=self.l2, loss=self.loss)
        for layer, (dW, db) in zip(layers, grads, strict=True):  # into the stepper's views
            layer.weight.grad.copy_(dW.T)
            layer.bias.grad.copy_(db)
        return self._with_l1(loss), logits

    def _with_l1(self, loss: torch.Tensor) -> torch.Tensor:
        """The loss shown: with λ₁·Σ|W| (its step is the stepper's, as for autograd)."""
        if not self.l1:
            return loss
        return loss + l1_term([layer.weight.detach() for layer in self.model.layers], self.l1)


def check_engine(model: nn.Module, engine: str) -> None:
    """Raise ValueError if `engine` can't train `model`."""
    if engine != "manual":
        return
    config = getattr(model, "config", None)
    if config is None:
        raise ValueError("The manual engine trains mlp.model.MLP networks only.")
    if problem := engine_problem(engine, config.dropout):
        raise ValueError(problem)


def check_loss(model: nn.Module, loss: str) -> None:
    """Raise ValueError if `loss` can't train `model`: the MSE fits one output, a regression's value."""
    config = getattr(model, "config", None)
    if loss == "mse" and config is not None and config.d_out != 1:
        raise ValueError(
            f"The MSE loss fits one output (a regression's value); this network has {config.d_out}."
        )


def make_gradients(model: nn.Module, cfg: TrainConfig, device: torch.device):
    """The gradient source cfg.engine names, checked against the model."""
    check_engine(model, cfg.engine)
    check_loss(model, cfg.loss)
    if cfg.engine == "manual":
        return ManualGradients(model, device, cfg.l1, cfg.l2, cfg.loss)
    return AutogradGradients(model, cfg, device)
