"""How initialisation sets the activations' scale across a deep stack: He, Xavier, N(0, 0.02)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from mlp.activations import ACTIVATIONS
from mlp.model import MLP


def activation_spread(
    inits: Sequence[str] = ("kaiming", "xavier", "normal"),
    activation: str = "relu",
    depth: int = 10,
    width: int = 256,
    n: int = 1000,
    seed: int = 0,
) -> dict[str, list[float]]:
    """Std of each hidden layer's activations in a deep stack, per init scheme, on N(0, 1) input."""
    X = torch.randn(n, width, generator=torch.Generator().manual_seed(seed))
    spread = {}
    with torch.no_grad():
        for init in inits:
            model = MLP(width, [width] * depth, 10, activation=activation, init=init, seed=seed)
            spread[init] = [float(a.std()) for a in model.activations(X)[:-1]]
    return spread


def spread_summary(spread: dict[str, list[float]], activation: str) -> str:
    """What the init plot shows, in two sentences that follow the numbers."""
    labels = {"kaiming": "He", "xavier": "Xavier", "normal": "N(0, 0.02)"}
    change = {init: stds[-1] / stds[0] for init, stds in spread.items()}
    parts = ", ".join(f"×{ratio:.2g} with {labels.get(init, init)}" for init, ratio in change.items())
    stable = [labels.get(i, i) for i, ratio in change.items() if 0.5 <= ratio <= 2]
    depth = len(next(iter(spread.values())))
    why = (
        "He's Var(W) = 2 / fan_in makes up for ReLU-like units zeroing about half their inputs."
        if ACTIVATIONS[activation].relu_like
        else "Xavier's Var(W) = 2 / (fan_in + fan_out) suits units that are linear near 0, like tanh."
    )
    verdict = (
        f"{' and '.join(stable)} keep{'s' if len(stable) == 1 else ''} the scale stable, so signals and "
        "gradients neither vanish nor explode on their way through the stack."
        if stable
        else "No scheme keeps the scale within ×2 here."
    )
    return f"Across {depth} {activation} layers the activations' std changes {parts}. {verdict} {why}"
