"""Adam's two calls: torch.optim's functional rule (`adam_rule`: what the torch path's Stepper
runs), and its fused CPU kernel called directly (`adam_update`: the fast path's update of a
large parameter group, mlp.train.optimizers).

Why call the kernel directly: `torch.optim.adam.adam(fused=True)` runs this very
kernel, but around it groups the tensors by device, adds 1 to the step count with a dispatched
`_foreach_add_` and checks for torch.compile. Timed within `fit` on MNIST's 784-128-10 (101,770
parameters, batch 128, one thread), an update through adam() took 92–115 µs, ~45 µs of it
adam()'s own; called directly, with the step count added through a NumPy view, 60–72 µs.

What would break: `torch._fused_adam_` and `torch._fused_adamw_` are torch's private ops, called
here as torch 2.13's adam() calls them. If a release renames them or changes their arguments,
the first call raises an AttributeError or a TypeError before the kernel runs, the step count
is put back, and from then on every update goes through the public `adam` / `adamw`, with one
warning in the server's log: the same numbers, a little slower. Any other error is the
kernel's own (a wrong dtype), and is raised with the count put back. tests/test_fastpath.py
pins the direct call against the public one, bit for bit, and the fallback.
"""

from __future__ import annotations

import logging

import torch
from torch.optim.adam import adam
from torch.optim.adamw import adamw

BETAS, EPS = (0.9, 0.999), 1e-8  # torch.optim.Adam's defaults
OPS = {False: "_fused_adam_", True: "_fused_adamw_"}  # decoupled weight decay -> torch's op
_direct = True  # False once a direct call has failed: the public functions from then on
_log = logging.getLogger(__name__)


def adam_rule(
    params: list[torch.Tensor],
    grads: list[torch.Tensor],
    exp_avgs: list[torch.Tensor],
    exp_avg_sqs: list[torch.Tensor],
    steps: list[torch.Tensor],
    lr: float,
    weight_decay: float,
    decoupled: bool,
    **kinds: bool | None,
) -> None:
    """torch.optim's functional Adam (AdamW, `decoupled`) with this project's betas and eps, in
    place; `kinds`: fused= and foreach=, as torch.optim.adam.adam takes them."""
    rule = adamw if decoupled else adam
    rule(params, grads, exp_avgs, exp_avg_sqs, [], steps, **kinds, **_numbers(lr, weight_decay))


def _numbers(lr: float, weight_decay: float) -> dict[str, float | bool]:
    """The update's numbers, as both calls (torch.optim's function, the kernel itself) name them."""
    return {
        "lr": lr,
        "beta1": BETAS[0],
        "beta2": BETAS[1],
        "weight_decay": weight_decay,
        "eps": EPS,
        "amsgrad": False,
        "maximize": False,
    }


def _add(steps: list[torch.Tensor], n: int) -> None:
    for step in steps:
        step.numpy()[()] += n  # a float32 0-d CPU tensor, through a view: no dispatch


def adam_update(
    params: list[torch.Tensor],
    grads: list[torch.Tensor],
    exp_avgs: list[torch.Tensor],
    exp_avg_sqs: list[torch.Tensor],
    steps: list[torch.Tensor],
    lr: float,
    weight_decay: float,
    decoupled: bool,
) -> None:
    """One Adam (or, `decoupled`, AdamW) step of CPU float32 tensors in place, as
    `adam(..., fused=True)`: `steps` are float32 0-d CPU tensors, one per parameter tensor."""
    global _direct
    changed = None
    if _direct:
        _add(steps, 1)  # what adam() does with a dispatched _foreach_add_, before the kernel
        try:
            kernel = getattr(torch, OPS[decoupled])
            kernel(params, grads, exp_avgs, exp_avg_sqs, [], steps, **_numbers(lr, weight_decay))
            return
        except (AttributeError, TypeError) as error:  # the op renamed or re-signed: the public path
            changed = error
        except BaseException:  # the kernel's own error (a wrong dtype): the public one would raise it too
            _add(steps, -1)
            raise
        _add(steps, -1)  # the public function adds its own
        _direct = False
    adam_rule(params, grads, exp_avgs, exp_avg_sqs, steps, lr, weight_decay, decoupled, fused=True)
    if changed is not None:  # said once, in the server's log, after the update it didn't stop
        _log.warning(
            "Adam's fused kernel can't be called directly with this torch (%r): updates take "
            "torch.optim's public function from now on.",
            changed,
        )
