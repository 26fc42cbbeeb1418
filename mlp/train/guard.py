"""The divergence guard: notice a loss that explodes or turns NaN, and put back the last sound weights."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import nn

# A loss this many times chance level (ln K for K classes: what a network that knows nothing
# scores) has exploded. A freshly initialised network starts near ln K and a healthy run only
# goes down from there; too large a step throws the weights far enough to give 10^3-10^4.
EXPLODED_VS_CHANCE = 10.0


Layout = list[tuple[torch.Tensor, list[nn.Parameter]]]  # (flat buffer, the parameters viewing it)


class DivergenceGuard:
    """Two copies of the weights: the last ones known good, and those of the last sync, pending.

    Every loss between two syncs being finite proves the weights of the first sync sound;
    the current weights are only known finite until the next window (or, at an epoch's end,
    the validation loss) confirms them. The copies are laid out as the flat buffers that the
    parameters are views of (mlp.train.optim's groups), so each copy is one memcpy a buffer,
    not a dispatch a parameter: a small network's epoch can end every step.
    """

    def __init__(self, layout: Layout, allowance: float = 0.0) -> None:
        self.flats: list[torch.Tensor] = []
        self.checked: list[torch.Tensor] = []
        self.pending: list[torch.Tensor] = []
        self._params: list[list[nn.Parameter]] = []
        self.follow(layout)
        self.mark = (0.0, 0)  # (sum of losses, examples) at the last look: each look sees a window
        self.checked_step = self.pending_step = 0  # the optimizer step each copy was taken at
        # The L1 and L2 penalties at the run's start: a penalised loss starts that much above
        # chance, and a large rate (λ₁ = 10) is not an explosion (Trainer sets it anew on new settings).
        self.allowance = allowance
        # A cheaper check of the same thing, when the run's path offers one (mlp.train.fastpath.choice).
        self.finite: Callable[[], bool] | None = None

    @torch.no_grad()
    def follow(self, layout: Layout) -> None:
        """Copy these buffers from now on (a new optimizer regroups the parameters); the copies
        so far carry over, parameter by parameter. The first layout's copies are of the weights now."""
        flats = [flat for flat, _ in layout]
        checked, pending = [f.clone() for f in flats], [f.clone() for f in flats]
        if self.flats:
            params = [params for _, params in layout]
            old = _views(self.checked, self._params), _views(self.pending, self._params)
            new = _views(checked, params), _views(pending, params)
            for old_copies, new_copies in zip(old, new, strict=True):
                for key, view in new_copies.items():
                    view.copy_(old_copies[key])
        self.flats, self.checked, self.pending = flats, checked, pending
        self._params = [params for _, params in layout]
        # On the CPU, NumPy views copy a small net's buffers for a fraction of a dispatch each
        self._arrays = (
            {id(t): t.numpy() for t in (*flats, *checked, *pending)}
            if all(f.device.type == "cpu" for f in flats)
            else None
        )

    def _copy(self, targets: list[torch.Tensor], sources: list[torch.Tensor]) -> None:
        arrays = self._arrays
        for target, source in zip(targets, sources, strict=True):
            if arrays is None:
                target.copy_(source)
            else:
                np.copyto(arrays[id(target)], arrays[id(source)])

    def exploded(self, loss_sum: float, seen: int, classes: int) -> str | None:
        """Whether the mean loss since the last look is far above chance level; moves the mark."""
        (last_sum, last_seen), self.mark = self.mark, (loss_sum, seen)
        if seen <= last_seen or classes < 2 or not math.isfinite(loss_sum):
            return None
        mean = (loss_sum - last_sum) / (seen - last_seen)
        chance = math.log(classes)
        if mean > EXPLODED_VS_CHANCE * chance + self.allowance:
            penalty = f" + {self.allowance:.3g} of penalty" if self.allowance else ""
            return (
                f"The loss exploded to {mean:.3g} (a network that knows nothing scores {chance:.2f}{penalty})"
            )
        return None

    def weights_finite(self) -> bool:
        if self.finite is not None:
            return self.finite()
        return all(bool(torch.isfinite(flat).all()) for flat in self.flats)

    def problem(
        self, losses: Sequence[float], weights: bool = True, seen: int = 0, classes: int = 0
    ) -> str | None:
        """What went wrong since the last look, or None. `losses`: the running sum of training
        losses (over `seen` examples of `classes` classes), then any others just read; the
        weights are checked too unless `weights` is False (one reduction over every parameter)."""
        if not all(map(math.isfinite, losses)) or (weights and not self.weights_finite()):
            return "The loss became NaN or infinite"
        return self.exploded(losses[0], seen, classes)

    def confirm(self, validated: bool, step: int = 0) -> None:
        """Every loss since the last sync (now at optimizer step `step`) was finite: move the copies
        along (see the class doc)."""
        self.checked, self.pending = self.pending, self.checked
        self.checked_step, self.pending_step = self.pending_step, step
        self._copy(self.pending, self.flats)
        if validated:
            self._copy(self.checked, self.flats)
            self.checked_step = step

    def restore(self) -> None:
        """Put the last weights known good back into the model (the running totals start again)."""
        self._copy(self.flats, self.checked)
        self._copy(self.pending, self.checked)
        self.pending_step = self.checked_step
        self.mark = (0.0, 0)


def _views(copies: list[torch.Tensor], groups: list[list[nn.Parameter]]) -> dict[int, torch.Tensor]:
    """Each parameter's part of the copies of its group's buffer, by the parameter's id."""
    views = {}
    for copy, params in zip(copies, groups, strict=True):
        offset = 0
        for p in params:
            views[id(p)] = copy[offset : offset + p.numel()]
            offset += p.numel()
    return views


def divergence_message(problem: str, step: int, lr: float) -> str:
    """What the page says when training diverged, and what to try."""
    return (
        f"{problem} by step {step} (learning rate {lr:.3g}): the steps overshoot. Training paused "
        "with the last weights that were sound; try a learning rate 10× smaller, gradient "
        "clipping, or reset."
    )
