"""L1 and L2 penalties: λ₁·Σ|w| and λ₂·Σw² added to the loss, over the weights, never the biases.

How they differ from `weight_decay` (mlp.train.optim): that one lives in the optimizer — AdamW's
decoupled decay, or λ·w added to the gradient by torch's SGD and Adam — and never shows in the
loss. These penalties are terms of the loss itself, the same for every optimizer and both engines:

- L2: λ₂·Σw² joins the loss, and its gradient 2λ₂·w joins backprop's (autograd derives it,
  mlp.manual adds it by hand), so momentum and Adam see it like any other gradient.
- L1: λ₁·Σ|w| joins the loss shown, but a subgradient λ₁·sign(w) only makes a weight jitter
  around 0, never land on it. So it is applied as a proximal step after each update, the same
  for both engines: w ← sign(w)·max(|w| − t, 0), a shrink by t that stops at exactly 0.
  SGD: t = lr·λ₁, exactly proximal gradient descent (ISTA) on loss + λ₁·Σ|w|. Momentum and
  Nesterov: the same t, decoupled from the velocity (as AdamW's decay is from Adam's moments).
  Adam and AdamW: t = lr·λ₁ / (√v̂ + ε), per weight, the proximal step in the metric Adam steps
  in (as a gradient λ₁ would be scaled), so a weight the data barely moves (small v̂) is pulled
  to 0 as fast as Adam moves anything; a uniform lr·λ₁ would be lost in Adam's steps of ~lr.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def penalised(model: nn.Module) -> list[nn.Parameter]:
    """The parameters the penalties cover: the weights (2-D and up), never the biases."""
    return [p for p in model.parameters() if p.ndim >= 2]


def l1_term(weights: list[torch.Tensor], l1: float) -> torch.Tensor:
    """λ₁·Σ|w|, a scalar (summed in float32 or the weights' dtype)."""
    return l1 * torch.stack([w.abs().sum() for w in weights]).sum()


def l2_term(weights: list[torch.Tensor], l2: float) -> torch.Tensor:
    """λ₂·Σw², a scalar, differentiable: its gradient is 2λ₂·w."""
    return l2 * torch.stack([(w * w).sum() for w in weights]).sum()


@torch.no_grad()
def soft_threshold_(flat: torch.Tensor, threshold: float | torch.Tensor) -> None:
    """L1's proximal step, in place: each value moves its threshold (one, or one each) toward 0
    and stops at exactly 0."""
    if isinstance(threshold, float):
        flat.copy_(F.softshrink(flat, threshold))
    else:
        flat.copy_(torch.where(flat.abs() > threshold, flat - torch.sign(flat) * threshold, 0.0))


def zero_count(weights: list[torch.Tensor]) -> tuple[int, int]:
    """(how many weights are exactly 0, how many weights there are)."""
    return sum(int((w == 0).sum()) for w in weights), sum(w.numel() for w in weights)


@torch.no_grad()
def penalty_of(model: nn.Module, l1: float, l2: float) -> float:
    """λ₁·Σ|w| + λ₂·Σw² at the model's current weights (one sync)."""
    if not (l1 or l2):
        return 0.0
    weights = penalised(model)
    return float(l1_term(weights, l1) + l2_term(weights, l2))
