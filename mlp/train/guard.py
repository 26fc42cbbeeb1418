"""The divergence guard: notice a NaN or infinite loss and put back the last weights that were sound."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn


def _copy_all(dst: list[torch.Tensor], src: list[torch.Tensor]) -> None:
    for d, s in zip(dst, src, strict=True):
        d.copy_(s)


class DivergenceGuard:
    """Two copies of the weights: the last ones known good, and those of the last sync, pending.

    Every loss between two syncs being finite proves the weights of the first sync sound;
    the current weights are only known finite until the next window (or, at an epoch's end,
    the validation loss) confirms them.
    """

    def __init__(self, params: list[nn.Parameter]) -> None:
        self.params = params
        self.checked = [p.detach().clone() for p in params]
        self.pending = [p.detach().clone() for p in params]

    def weights_finite(self) -> bool:
        # One reduction: a NaN or inf anywhere makes the total norm non-finite.
        return bool(torch.isfinite(nn.utils.get_total_norm(self.params, foreach=True)))

    def problem(self, losses: Sequence[float], weights: bool = True) -> str | None:
        """What went wrong since the last look (the losses just read; the weights too, unless
        `weights` is False: one reduction over every parameter), or None."""
        if not all(map(math.isfinite, losses)) or (weights and not self.weights_finite()):
            return "The loss became NaN or infinite"
        return None

    @torch.no_grad()
    def confirm(self, validated: bool) -> None:
        """Every loss since the last sync was finite: move the copies along (see the class doc)."""
        self.checked, self.pending = self.pending, self.checked
        _copy_all(self.pending, self.params)
        if validated:
            _copy_all(self.checked, self.params)

    @torch.no_grad()
    def restore(self) -> None:
        """Put the last weights known good back into the model."""
        _copy_all(self.params, self.checked)
        _copy_all(self.pending, self.checked)


def divergence_message(problem: str, step: int, lr: float) -> str:
    """What the page says when training diverged, and what to try."""
    return (
        f"{problem} by step {step} (lr = {lr:.3g}). Training paused with the last weights that gave "
        "a finite loss; try a lower learning rate, gradient clipping, or reset."
    )
