"""The seed notes' teacher task trained end to end: a student learns a random network's labels."""

from __future__ import annotations

import numpy as np

from mlp.data import split, teacher_task
from mlp.model import MLP
from mlp.train import TrainConfig, fit


def teacher_curve(
    epochs: int = 30, n: int = 20_000, hidden: int = 64, seed: int = 0
) -> dict[str, np.ndarray]:
    """Train a 16-hidden-5 student on the teacher task; its per-epoch curves (train/test loss, accuracy).

    The seed notes printed this curve: the loss starts near ln 5 ≈ 1.61 (a guess among five
    classes) and falls as the student finds the teacher's regions.
    """
    X, y = teacher_task(n, d_in=16, classes=5, seed=seed)
    train, test = split(X, y, test_fraction=0.2, seed=seed)
    model = MLP(16, [hidden], 5, activation="relu", init="kaiming", seed=seed)
    cfg = TrainConfig(optimizer="adam", lr=3e-3, batch_size=64, epochs=epochs, seed=seed, device="cpu")
    return fit(model, train, test, cfg).epoch_arrays()
