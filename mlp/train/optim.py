"""The update: the optimizer's row (mlp.train.optimizers) applied to flat parameter groups, with
weight decay on weights only; then, with an L1 rate, L1's proximal step on the weights
(mlp.train.penalty says why).

`Stepper` calls each row's torch form, torch.optim's own functional kernels (`adam`, `adamw`,
`sgd`: what `Adam(fused=True)` and friends run), on flat parameters: each group's parameters
are views into one buffer, and so are their gradients, so an update is one kernel call on one
tensor, not one per layer. It also skips `Optimizer.step`'s bookkeeping (hooks, profiler
records, state lookups) and LambdaLR: on a small network those cost more than the update.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from mlp.train.config import TrainConfig
from mlp.train.optimizers import OPTIMIZERS
from mlp.train.penalty import soft_threshold_


def param_groups(
    model: nn.Module, weight_decay: float, split: bool = False
) -> list[tuple[list[nn.Parameter], float]]:
    """(parameters, weight decay) groups: decay on weights (2-D and up), never on biases.

    Without decay, one group: one kernel call per step instead of two; `split` keeps the weights
    a group of their own anyway (L1's proximal step shrinks them, not the biases).
    """
    params = list(model.parameters())
    if weight_decay == 0 and not split:
        return [(params, 0.0)]
    return [([p for p in params if p.ndim >= 2], weight_decay), ([p for p in params if p.ndim < 2], 0.0)]


class Group:
    """One parameter group flattened: its parameters and their gradients are views into two
    buffers, and the optimizer's state is a flat tensor each (shapes the update never needs)."""

    def __init__(self, params: list[nn.Parameter], weight_decay: float, fused: bool) -> None:
        self.params, self.weight_decay = params, weight_decay
        device = params[0].device if params else torch.device("cpu")
        dtype = params[0].dtype if params else torch.float32
        size = sum(p.numel() for p in params)
        self.flat = torch.empty(size, device=device, dtype=dtype)
        self.grad = torch.zeros(size, device=device, dtype=dtype)
        offset = 0
        for p in params:  # autograd then accumulates each gradient into its view, in place
            n = p.numel()
            self.flat[offset : offset + n].copy_(p.detach().flatten())
            p.data = self.flat[offset : offset + n].view_as(p)
            p.grad = self.grad[offset : offset + n].view_as(p)
            offset += n
        # Fused kernels keep the step count on the device; the others on the host.
        self.steps = [torch.zeros((), dtype=torch.float32, device=device if fused else "cpu")]
        self.exp_avgs = [torch.zeros_like(self.flat)]
        self.exp_avg_sqs = [torch.zeros_like(self.flat)]
        self.momentum: list[torch.Tensor | None] = [None]  # made on the first step
        self.views: dict[str, Any] = {}  # NumPy views of the state, made once (the fast path's)


class Stepper:
    """Applies one update to a model's parameters from their .grad, at the learning rate given."""

    def __init__(self, model: nn.Module, cfg: TrainConfig) -> None:
        self.cfg = cfg
        self.rule = OPTIMIZERS[cfg.optimizer]  # its row, looked up once, not every step
        device = next(model.parameters()).device
        # Fused single-kernel steps where they exist (CPU, CUDA, MPS in recent torch), else foreach.
        self.fused = device.type in ("cpu", "cuda", "mps") and next(model.parameters()).is_floating_point()
        groups = param_groups(model, cfg.weight_decay, split=cfg.l1 > 0)
        self.groups = [Group(params, decay, self.fused) for params, decay in groups]
        self.weights = self.groups[0] if cfg.l1 > 0 else None  # the group L1's step shrinks
        self.fused_checked = False  # a fused step has run: the device and dtype have the kernel

    def layout(self) -> list[tuple[torch.Tensor, list[nn.Parameter]]]:
        """(flat buffer, the parameters viewing it) of each group: what a copy of the weights copies."""
        return [(g.flat, g.params) for g in self.groups]

    def zero_grad(self) -> None:
        """Gradients to zero, in place: every parameter's .grad is a view that must stay one."""
        for group in self.groups:
            group.grad.zero_()

    def step(self, lr: float) -> None:
        """One update from the gradients, at learning rate `lr`."""
        for group in self.groups:
            self._step_group(group, lr)
        if self.weights is not None:
            self._l1_step(lr)

    def _step_group(self, group: Group, lr: float) -> None:
        """One group's update (no L1 step): one kernel call on its flat buffers. A device or dtype
        without a fused kernel says so on the first step: that step and the rest take foreach."""
        if not self.fused or self.fused_checked:
            self._step(group, lr)
            return
        counts = [s.clone() for s in group.steps]  # fused Adam adds 1 to them before its kernel runs
        try:
            self._step(group, lr)
        except (RuntimeError, ValueError):
            self.fused = False
            for g in self.groups:
                g.steps = [s.cpu() for s in g.steps]
            group.steps = [c.cpu() for c in counts]  # as they were: the retry adds its own 1
            self._step(group, lr)
            return
        self.fused_checked = True

    def _l1_step(self, lr: float) -> None:
        """L1's proximal step on the weights: each one lr·λ₁ nearer 0 (scaled as the optimizer
        scales a gradient: Adam's / (√v̂ + ε)), and exactly 0 if it would cross. mlp.train.penalty
        says why."""
        g, threshold = self.weights, lr * self.cfg.l1
        if (scale := self.rule.step_scale) is not None:
            threshold = threshold * scale(g)
        soft_threshold_(g.flat, threshold)

    def _step(self, g: Group, lr: float) -> None:
        kinds = {"fused": self.fused or None, "foreach": None if self.fused else True}
        self.rule.torch_step(g, lr, self.cfg, kinds)


def make_optimizer(model: nn.Module, cfg: TrainConfig, fused: bool | None = None) -> torch.optim.Optimizer:
    """The torch.optim optimizer equivalent to a Stepper without L1 (for notebooks, and to test it
    against); L1's proximal step is the Stepper's own."""
    groups = [
        {"params": params, "weight_decay": decay} for params, decay in param_groups(model, cfg.weight_decay)
    ]
    return OPTIMIZERS[cfg.optimizer].torch_class(groups, cfg, fused)
