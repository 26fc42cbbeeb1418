"""Derived input features, TensorFlow Playground's: x1², x2², x1·x2, sin x1, sin x2 beside x1, x2.

Each feature is declared once (its link name, its label, its function of the plane's points);
`with_features` turns (N, 2) points into the network's (N, 2 + k) inputs, and the training
points, the test points and the plane's grid all go through it, so they are transformed alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import numpy as np
import torch

from mlp.data.points import Points

BASE = ("x1", "x2")  # the plane's own coordinates: always the first two inputs


@dataclass(frozen=True)
class Feature:
    """One derived input: its name in links, its label on the network's input unit, its value."""

    name: str
    label: str
    of: Callable[[np.ndarray, np.ndarray], np.ndarray]  # (x1, x2), each (N,) -> (N,)
    code: str  # `of` as a notebook writes it (mlp.export), in x1, x2 and np


FEATURES: dict[str, Feature] = {
    f.name: f
    for f in (
        Feature("x1sq", "x1²", lambda x1, x2: x1 * x1, "x1 * x1"),
        Feature("x2sq", "x2²", lambda x1, x2: x2 * x2, "x2 * x2"),
        Feature("x1x2", "x1·x2", lambda x1, x2: x1 * x2, "x1 * x2"),
        Feature("sinx1", "sin x1", lambda x1, x2: np.sin(x1), "np.sin(x1)"),
        Feature("sinx2", "sin x2", lambda x1, x2: np.sin(x2), "np.sin(x2)"),
    )
}
NAMES = tuple(FEATURES)  # in the order the network takes them
LABELS = {name: f.label for name, f in FEATURES.items()}


def ordered(names: Iterable[str]) -> tuple[str, ...]:
    """The chosen features in the network's order, each once (unknown names kept last, for
    validation to refuse)."""
    names = list(dict.fromkeys(names))
    return tuple(sorted(names, key=lambda n: NAMES.index(n) if n in FEATURES else len(NAMES)))


def input_labels(features: Iterable[str]) -> list[str]:
    """The network's inputs as its input units are labelled: x1, x2, then each feature's label."""
    return [*BASE, *(FEATURES[name].label for name in ordered(features))]


def input_width(features: Iterable[str]) -> int:
    """How many inputs the network takes: 2, plus one per feature."""
    return len(BASE) + len(ordered(features))


def with_features(X: np.ndarray | torch.Tensor, features: Iterable[str]) -> np.ndarray | torch.Tensor:
    """(N, 2) points -> (N, 2 + k) inputs: x1, x2, then the features in order; NumPy or torch
    in, the same out (same dtype)."""
    names = ordered(features)
    if not names:
        return X
    if isinstance(X, torch.Tensor):
        return torch.from_numpy(with_features(X.detach().cpu().numpy(), names)).to(X.dtype)
    x1, x2 = X[:, 0], X[:, 1]
    extra = [FEATURES[name].of(x1, x2) for name in names]  # k arrays of (N,)
    return np.column_stack([X, *extra]).astype(X.dtype, copy=False)  # (N, 2 + k)


def network_inputs(points: Points, features: Iterable[str]) -> Points:
    """The points as the network takes them: each row x1, x2 and the features (the labels and
    the split unchanged)."""
    return replace(
        points, X_train=with_features(points.X_train, features), X_test=with_features(points.X_test, features)
    )
