"""The optimizers: one row each, in every form the engine runs or the pages show one.

A row's `torch_step` is the torch path's update of one flat parameter group (torch.optim's own
functional kernel: mlp.train.optim's Stepper calls it); its `numpy_step` is the fast path's update
of the same buffers as NumPy views (mlp.train.fastpath.step), so either path can take over at any
step with the optimizer's state as it is; its `torch_class` is torch.optim's optimizer with the
same numbers, for a notebook; `reads` names the settings it reads beyond the learning rate and
weight decay (the pages offer those only for it); `step_scale` is how it scales a gradient per
weight (L1's proximal step shrinks a weight as far as a step would move it). Adding an optimizer
is adding a row to OPTIMIZERS (and a test): nothing else names one.

Each group's state (mlp.train.optim.Group): `steps` (a 0-d count), `exp_avgs` and `exp_avg_sqs`
(running averages of the gradient and of its square), `momentum` (a buffer made on the first
step) — one flat tensor each, NumPy views of them in `views` (made once a group).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch.optim.rmsprop import rmsprop
from torch.optim.sgd import sgd

from mlp.train.adam import BETAS, EPS, adam_rule, adam_update

if TYPE_CHECKING:
    from mlp.train.config import TrainConfig
    from mlp.train.optim import Group

F32 = np.float32
# From this many parameters in a group, the fast path's Adam update is torch's fused kernel on
# the same buffers (mlp.train.adam.adam_update): one pass instead of NumPy's thirteen, for a call
# that costs a few µs more. Timed within fit, one thread, kernel vs NumPy: the playground's
# 2-32-32-3 (1,251 parameters) even (10 steps 1.68-1.69 ms vs 1.63-1.69); UCI digits' 64-128-10
# (9,610) 15 µs vs 25; MNIST's 784-128-10 (101,770) 60-72 µs vs 150.
FUSED_ADAM_FROM = 4_096


@dataclass(frozen=True)
class Optimizer:
    """One update rule, in each form the engine runs it and the pages name it."""

    name: str  # as links and configs write it
    label: str  # as the pages show it
    help: str  # what it does, in a sentence (the sidebar's help)
    # (group, lr, cfg, {fused=, foreach=}): the torch path's update of a flat group, in place
    torch_step: Callable[[Group, float, TrainConfig, dict[str, Any]], None]
    # (group, p, grad, lr, cfg): the fast path's, on NumPy views p and grad of the same buffers
    numpy_step: Callable[[Group, np.ndarray, np.ndarray, float, TrainConfig], None]
    torch_class: Callable[[list[dict[str, Any]], TrainConfig, bool | None], torch.optim.Optimizer]
    reads: tuple[str, ...] = ()  # TrainConfig's fields it reads besides lr and weight_decay
    step_scale: Callable[[Group], torch.Tensor] | None = None  # a gradient's scale per weight; None: 1
    # step_scale as a notebook writes it (mlp.export): in `state`, torch_class's state of a weight
    scale_code: str = ""


# --- SGD, with momentum or Nesterov's -------------------------------------------------------------


def _sgd_torch(momentum: Callable[[TrainConfig], float], nesterov: bool):
    def step(g: Group, lr: float, cfg: TrainConfig, kinds: dict[str, Any]) -> None:
        sgd(
            [g.flat],
            [g.grad],
            g.momentum,
            **kinds,
            weight_decay=g.weight_decay,
            momentum=momentum(cfg),
            lr=lr,
            dampening=0.0,
            nesterov=nesterov,
            maximize=False,
        )

    return step


def _sgd_numpy(momentum: Callable[[TrainConfig], float], nesterov: bool):
    def step(g: Group, p: np.ndarray, grad: np.ndarray, lr: float, cfg: TrainConfig) -> None:
        """torch.optim.sgd's update in NumPy: coupled weight decay, then momentum's buffer."""
        if g.weight_decay:
            grad = grad + F32(g.weight_decay) * p
        mu = momentum(cfg)
        if mu:
            if g.momentum[0] is None:  # torch's first step: the buffer is the gradient
                g.momentum[0] = torch.from_numpy(grad.copy())
                buf = g.momentum[0].numpy()
            else:
                buf = g.momentum[0].numpy()
                buf *= F32(mu)
                buf += grad
            grad = grad + F32(mu) * buf if nesterov else buf
        p -= F32(lr) * grad

    return step


def _sgd_class(momentum: Callable[[TrainConfig], float], nesterov: bool):
    def make(groups: list[dict[str, Any]], cfg: TrainConfig, fused: bool | None) -> torch.optim.Optimizer:
        return torch.optim.SGD(groups, lr=cfg.lr, momentum=momentum(cfg), nesterov=nesterov, fused=fused)

    return make


def _no_momentum(cfg: TrainConfig) -> float:
    return 0.0


def _momentum(cfg: TrainConfig) -> float:
    return cfg.momentum


# --- Adam and AdamW ------------------------------------------------------------------------------


def _adam_torch(decoupled: bool):
    def step(g: Group, lr: float, cfg: TrainConfig, kinds: dict[str, Any]) -> None:
        state = (g.exp_avgs, g.exp_avg_sqs, g.steps)
        adam_rule([g.flat], [g.grad], *state, lr, g.weight_decay, decoupled, **kinds)

    return step


def _adam_numpy(decoupled: bool):
    def step(g: Group, p: np.ndarray, grad: np.ndarray, lr: float, cfg: TrainConfig) -> None:
        """torch.optim.adam's update in NumPy (a large group: torch's fused kernel itself)."""
        decay = g.weight_decay
        if p.size >= FUSED_ADAM_FROM:  # torch's fused kernel: one pass, not NumPy's thirteen
            adam_update([g.flat], [g.grad], *(g.exp_avgs, g.exp_avg_sqs, g.steps), lr, decay, decoupled)
            return
        if decay and decoupled:
            p *= F32(1 - lr * decay)
        elif decay:
            grad = grad + F32(decay) * p
        if "adam" not in g.views:
            g.views["adam"] = (
                g.exp_avgs[0].numpy(),
                g.exp_avg_sqs[0].numpy(),
                g.steps[0].numpy(),
                np.empty_like(p),  # a temporary: no fresh array for each of the update's terms
            )
        m, v, steps, tmp = g.views["adam"]
        t = float(steps) + 1
        steps[()] = t
        np.subtract(grad, m, out=tmp)
        tmp *= F32(1 - BETAS[0])
        m += tmp  # m ← m + (1 - β₁)(g - m): lerp toward the gradient
        np.multiply(grad, grad, out=tmp)
        tmp *= F32(1 - BETAS[1])
        v *= F32(BETAS[1])
        v += tmp  # v ← β₂ v + (1 - β₂) g²
        denom = np.sqrt(v, out=tmp)
        denom *= F32(1 / math.sqrt(1 - BETAS[1] ** t))
        denom += F32(EPS)  # √v̂ + ε
        update = np.divide(m, denom, out=tmp)
        update *= F32(lr / (1 - BETAS[0] ** t))
        p -= update  # p ← p - lr · m̂ / (√v̂ + ε)

    return step


def _adam_class(decoupled: bool):
    def make(groups: list[dict[str, Any]], cfg: TrainConfig, fused: bool | None) -> torch.optim.Optimizer:
        cls = torch.optim.AdamW if decoupled else torch.optim.Adam
        return cls(groups, lr=cfg.lr, betas=BETAS, eps=EPS, fused=fused)

    return make


ADAM_SCALE_CODE = f'1 / ((state["exp_avg_sq"] / (1 - {BETAS[1]} ** state["step"])).sqrt() + {EPS})'


def _adam_scale(g: Group) -> torch.Tensor:
    """1 / (√v̂ + ε): how Adam scales a gradient, weight by weight."""
    v_hat = g.exp_avg_sqs[0] / (1 - torch.pow(BETAS[1], g.steps[0].to(g.flat.device)))
    return 1 / (v_hat.sqrt() + EPS)


# --- RMSprop --------------------------------------------------------------------------------------

ALPHA = 0.99  # torch.optim.RMSprop's default: how slowly the average of g² forgets


def _rmsprop_torch(g: Group, lr: float, cfg: TrainConfig, kinds: dict[str, Any]) -> None:
    rmsprop(
        [g.flat],
        [g.grad],
        g.exp_avg_sqs,
        [],
        g.momentum,
        g.steps,
        foreach=kinds["foreach"],
        lr=lr,
        alpha=ALPHA,
        eps=EPS,
        weight_decay=g.weight_decay,
        momentum=0.0,
        centered=False,
    )


def _rmsprop_numpy(g: Group, p: np.ndarray, grad: np.ndarray, lr: float, cfg: TrainConfig) -> None:
    """torch.optim.rmsprop's update in NumPy: v ← α v + (1 − α) g², p ← p − lr · g / (√v + ε)."""
    if g.weight_decay:
        grad = grad + F32(g.weight_decay) * p
    v, steps = g.exp_avg_sqs[0].numpy(), g.steps[0].numpy()
    steps[()] += 1
    v *= F32(ALPHA)
    v += F32(1 - ALPHA) * grad * grad
    p -= F32(lr) * grad / (np.sqrt(v) + F32(EPS))


def _rmsprop_class(
    groups: list[dict[str, Any]], cfg: TrainConfig, fused: bool | None
) -> torch.optim.Optimizer:
    return torch.optim.RMSprop(groups, lr=cfg.lr, alpha=ALPHA, eps=EPS)


def _rmsprop_scale(g: Group) -> torch.Tensor:
    return 1 / (g.exp_avg_sqs[0].sqrt() + EPS)


def _sgd_row(name: str, label: str, help: str, nesterov: bool, momentum: bool) -> Optimizer:
    """SGD's row, plain, with momentum or with Nesterov's: its three forms from one choice."""
    mu = _momentum if momentum else _no_momentum
    forms = (_sgd_torch(mu, nesterov), _sgd_numpy(mu, nesterov), _sgd_class(mu, nesterov))
    return Optimizer(name, label, help, *forms, reads=("momentum",) if momentum else ())


def _adam_row(name: str, label: str, help: str, decoupled: bool) -> Optimizer:
    """Adam's row, or AdamW's (`decoupled` weight decay): its three forms and its step's scale."""
    forms = (_adam_torch(decoupled), _adam_numpy(decoupled), _adam_class(decoupled))
    return Optimizer(name, label, help, *forms, step_scale=_adam_scale, scale_code=ADAM_SCALE_CODE)


OPTIMIZERS: dict[str, Optimizer] = {
    o.name: o
    for o in (
        _sgd_row(
            "sgd",
            "SGD",
            "Plain gradient descent: each step moves every weight by −lr × its gradient.",
            nesterov=False,
            momentum=False,
        ),
        _sgd_row(
            "momentum",
            "Momentum",
            "SGD with a velocity: each step adds the gradient to a running sum that decays by the momentum.",
            nesterov=False,
            momentum=True,
        ),
        _sgd_row(
            "nesterov",
            "Nesterov",
            "Momentum that looks ahead: the step uses the gradient plus the momentum's next move.",
            nesterov=True,
            momentum=True,
        ),
        _adam_row(
            "adam",
            "Adam",
            "Per-weight steps: a running mean of the gradient over the root of a running mean of its square.",
            decoupled=False,
        ),
        _adam_row(
            "adamw",
            "AdamW",
            "Adam with decoupled weight decay: weights shrink by lr × decay apart from the gradient's step.",
            decoupled=True,
        ),
        Optimizer(
            "rmsprop",
            "RMSprop",
            "Per-weight steps: the gradient over the root of a running mean of its square.",
            _rmsprop_torch,
            _rmsprop_numpy,
            _rmsprop_class,
            step_scale=_rmsprop_scale,
            scale_code=f'1 / (state["square_avg"].sqrt() + {EPS})',
        ),
    )
}


def optimizer(name: str) -> Optimizer:
    """The row of `name`, or a ValueError naming the choices."""
    if name not in OPTIMIZERS:
        raise ValueError(f"Unknown optimizer {name!r}; choose one of {', '.join(OPTIMIZERS)}.")
    return OPTIMIZERS[name]
