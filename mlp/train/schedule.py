"""Learning-rate schedules: one closed form, used by the optimizer and by every plot of it."""

from __future__ import annotations

import bisect
import math

from mlp.train.config import STEP_MILESTONES, TrainConfig


def lr_factor(step: int, cfg: TrainConfig, steps_per_epoch: int) -> float:
    """The multiplier on cfg.lr before optimizer step `step` (0-based).

    Warmup composes with either schedule, and the factor stays at its floor past the horizon
    (CosineAnnealingLR would climb back up). "step" drops by gamma every `step_epochs`, or,
    by default, at 1/2 and 3/4 of the run, the usual MultiStep recipe: whatever the run's
    length, it trains at the full rate for half of it.
    """
    warmup = round(cfg.warmup_epochs * steps_per_epoch)
    if step < warmup:
        return (step + 1) / (warmup + 1)
    if cfg.scheduler == "step":
        if cfg.step_epochs > 0:
            drops = math.floor(step / max(1, round(cfg.step_epochs * steps_per_epoch)))
        else:
            total = cfg.epochs * steps_per_epoch
            drops = bisect.bisect_right([round(f * total) for f in STEP_MILESTONES], step)
        return cfg.gamma**drops
    if cfg.scheduler == "cosine":
        horizon = max(1, cfg.epochs * steps_per_epoch - warmup)
        progress = min(1.0, (step - warmup) / horizon)
        return cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))
    return 1.0


def horizon_matters(cfg: TrainConfig) -> bool:
    """Whether the schedule's steps depend on how many epochs the run has (cosine's horizon, a
    step schedule's default milestones at 1/2 and 3/4): then a run's length is part of its past."""
    return cfg.scheduler == "cosine" or (cfg.scheduler == "step" and cfg.step_epochs <= 0)


def describe_schedule(cfg: TrainConfig) -> str:
    """The schedule in one sentence, for the page beside its controls."""
    plural = "s" * (cfg.warmup_epochs != 1)
    warmup = (
        f"rises linearly to {cfg.lr:g} over {cfg.warmup_epochs:g} epoch{plural}, then "
        if cfg.warmup_epochs
        else ""
    )
    if cfg.scheduler == "step":
        if cfg.step_epochs > 0:
            rest = f"is multiplied by {cfg.gamma:g} every {cfg.step_epochs:g} epochs"
        else:
            at = " and ".join(f"epoch {f * cfg.epochs:g}" for f in STEP_MILESTONES)
            rest = f"is multiplied by {cfg.gamma:g} at {at} (1/2 and 3/4 of the run)"
    elif cfg.scheduler == "cosine":
        floor = f"{cfg.min_lr_ratio * cfg.lr:g}" if cfg.min_lr_ratio else "0"
        rest = f"follows a half cosine from {cfg.lr:g} down to {floor} at epoch {cfg.epochs}"
    else:
        rest = f"stays at {cfg.lr:g}"
    return f"The learning rate {warmup}{rest}."
