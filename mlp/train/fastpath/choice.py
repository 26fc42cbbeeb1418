"""How a step runs: torch (autograd, the stepper's fused kernels) or, for a small network on the
CPU, one NumPy step that does the same math without PyTorch's per-operation dispatch.

Users see one engine ("autograd"); the path is an implementation detail. `path_problem` is the
rule's one home: the reason a run can't take the NumPy path, or None. Both paths update the very
same buffers (the parameters, their .grad and the optimizer's state are views into the
stepper's flat buffers), so a run can change path between two steps and lose nothing.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise
from typing import Any

import torch
from torch import nn

from mlp.train.config import TrainConfig
from mlp.train.fastpath.step import NumpyPath
from mlp.train.inference import evaluate

Trainer = Any  # mlp.train.trainer.Trainer, which imports this module: what a path reads of it

# Up to this many multiply-adds per step (batch × Σ n_in·n_out) a run takes the NumPy path: torch's
# per-operation dispatch (and its batch gathering and uint8 conversion) is most of a small step.
# Measured with bench.fast_path on the shared 2-core CPU, one thread each (torch ms / NumPy ms a step):
# 2-32-32-3 × 480 (0.57 M) 3.1x, 2-64-64-3 × 480 (2.1 M) 2.1x, 2-128-128-3 × 480 (8.2 M) 1.6x,
# MNIST's 784-128-10 × 64 (6.5 M) 1.35x and × 128 (13 M) 1.2x. Past the bound NumPy still wins on
# one thread (784-256-10 × 128, 26 M, 1.15x; 784-512-10 × 128, 52 M, 1.16x), by the margin of
# the bookkeeping, while the products are most of the step; the app runs NumPy's BLAS on one
# thread (mlp.device.one_blas_thread) and torch's thread tuning gives a larger network every
# core of a student's laptop, so larger nets keep torch's path.
MAX_MULTIPLY_ADDS = 16_000_000
NUMPY_PATH, TORCH_PATH = NumpyPath.name, "torch"


def multiply_adds(widths: list[int], batch_size: int) -> int:
    """Multiply-adds of one forward pass of a batch (backward costs about twice as many)."""
    return batch_size * sum(a * b for a, b in pairwise(widths))


def path_problem(model: nn.Module, cfg: TrainConfig, device: torch.device, batch_size: int) -> str | None:
    """Why this run can't take the NumPy path (so takes torch's), or None: the rule's one home."""
    config = getattr(model, "config", None)
    if config is None or not hasattr(model, "layers"):
        return "the NumPy path trains mlp.model.MLP networks only"
    if any(p.dtype != torch.float32 for p in model.parameters()):
        return "the NumPy path steps float32 weights only"
    return config_problem(config.widths, cfg, device, batch_size)


def config_problem(widths: list[int], cfg: TrainConfig, device: torch.device, batch_size: int) -> str | None:
    """path_problem for a float32 mlp.model.MLP of these widths, before it is made (a page says
    which path a run will take)."""
    if cfg.engine != "autograd":
        return f"the {cfg.engine} engine computes the gradients, torch's optimizer steps"
    if not cfg.fast_path:
        return "autograd itself trains while the engines are compared"
    if device.type != "cpu":
        return f"on {device.type.upper()} torch's kernels are the fast ones"
    if cfg.amp or cfg.compile:
        return "mixed precision and torch.compile are torch's"
    if multiply_adds(widths, batch_size) > MAX_MULTIPLY_ADDS:
        return f"past {MAX_MULTIPLY_ADDS / 1e6:g} M multiply-adds a step, torch's matrix products win"
    return None


def numpy_inference(model: nn.Module) -> bool:
    """Whether numpy_outputs can run this model: an mlp.model.MLP with float32 weights on the CPU
    (in eval mode its dropout is off, so a run with dropout qualifies too). Asked every frame:
    its layers' parameters are looked at, not model.parameters()'s walk of every module."""
    if getattr(model, "config", None) is None or not hasattr(model, "linears"):
        return False
    return all(p.device.type == "cpu" and p.dtype == torch.float32 for pair in model.linears() for p in pair)


class TorchPath:
    """Today's step: autograd (or mlp.manual) fills .grad, torch clips, the stepper updates."""

    name = TORCH_PATH

    def __init__(self, trainer: Trainer, reason: str) -> None:
        self.reason = reason
        self.model, self.cfg, self.params = trainer.model, trainer.cfg, trainer.params
        self.gradients, self.stepper, self.totals = trainer.gradients, trainer.stepper, trainer.totals

    def step(self, xb: torch.Tensor, yb: torch.Tensor, lr: float) -> None:
        """One optimizer step on the batch, its loss and predictions added to the running totals."""
        self.stepper.zero_grad()
        loss, logits = self.gradients(xb, yb)
        if self.cfg.grad_clip > 0:
            nn.utils.clip_grad_norm_(self.params, self.cfg.grad_clip, foreach=True)
        self.stepper.step(lr)
        self.totals.add(loss, logits, yb)

    def evaluate(self, X: torch.Tensor, y: torch.Tensor, set_eval: bool) -> tuple[float, float]:
        return evaluate(self.model, X, y, set_eval=set_eval, loss=self.cfg.loss)


def make_path(trainer: Trainer):
    """The path this trainer's steps take: NumPy where it can, else torch (its reason kept)."""
    reason = path_problem(trainer.model, trainer.cfg, trainer.device, trainer.batch_size)
    path = NumpyPath(trainer) if reason is None else TorchPath(trainer, reason)
    trainer.guard.finite = getattr(path, "weights_finite", None)  # the guard's check, path-made
    return path


def switch_path(trainer: Trainer, fast_path: bool) -> None:
    """Allow (or forbid) the NumPy path from the next step on: unlike Trainer.reconfigure, the
    optimizer's state stays, since both paths step the same buffers."""
    trainer.cfg = replace(trainer.cfg, fast_path=fast_path)
    trainer.path = make_path(trainer)


def describe_path(trainer: Trainer) -> str:
    """How the run's steps are computed, in one sentence, for the page's run description."""
    return path_sentence(None if trainer.path.name == NUMPY_PATH else trainer.path.reason)


def path_sentence(problem: str | None) -> str:
    """A path in one sentence: the NumPy path's (no problem), or torch's and why."""
    if problem is None:
        return "Steps run as one NumPy computation (a small network on the CPU: the same math, faster)."
    return f"Steps run in PyTorch: {problem}."
