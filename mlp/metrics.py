"""Classification metrics from labels and probabilities, regression metrics from values, as plain NumPy."""

from __future__ import annotations

import numpy as np


def confusion_matrix(y_true: np.ndarray, y_pred: np.ndarray, k: int) -> np.ndarray:
    """Counts (k, k): row = true class, column = predicted class."""
    y_true, y_pred = np.asarray(y_true, dtype=np.int64), np.asarray(y_pred, dtype=np.int64)
    return np.bincount(y_true * k + y_pred, minlength=k * k).reshape(k, k)


def mse(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean squared error, (1/N) Σ (ŷ - y)² (no ½): the regression loss every engine uses."""
    y_true, y_pred = np.asarray(y_true, dtype=np.float64), np.asarray(y_pred, dtype=np.float64)
    return float(np.mean((y_pred - y_true) ** 2)) if len(y_true) else float("nan")


def r2_score(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """R² = 1 - SS_res / SS_tot: 1 for a perfect fit, 0 for predicting the mean, negative for worse.
    NaN when the values don't vary (SS_tot = 0) or there are none."""
    y_true, y_pred = np.asarray(y_true, dtype=np.float64), np.asarray(y_pred, dtype=np.float64)
    ss_tot = float(np.sum((y_true - y_true.mean()) ** 2)) if len(y_true) else 0.0
    if ss_tot == 0:
        return float("nan")
    return 1.0 - float(np.sum((y_true - y_pred) ** 2)) / ss_tot


def per_class(confusion: np.ndarray) -> list[dict]:
    """Precision, recall and F1 for each class, with its support (true examples)."""
    rows = []
    for c in range(len(confusion)):
        tp = confusion[c, c]
        predicted, actual = confusion[:, c].sum(), confusion[c].sum()
        precision = tp / predicted if predicted else float("nan")
        recall = tp / actual if actual else float("nan")
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else float("nan")
        rows.append({"class": c, "precision": precision, "recall": recall, "f1": f1, "support": int(actual)})
    return rows


def top_k(probs: np.ndarray, k: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """The k most likely classes of each row and their probabilities, most likely first."""
    classes = np.argsort(-probs, axis=1, kind="stable")[:, :k]
    return classes, np.take_along_axis(probs, classes, axis=1)


def neighbour_correlation(images: np.ndarray) -> float:
    """How much each pixel agrees with its neighbours, averaged over images (n, h, w): the
    correlation of every pixel with the one to its right and the one below. About 0 for random
    static; near 1 for smooth strokes. Measures whether weight images show structure."""
    t = np.asarray(images, dtype=np.float64)

    def corr(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a = a.reshape(len(a), -1) - a.reshape(len(a), -1).mean(axis=1, keepdims=True)
        b = b.reshape(len(b), -1) - b.reshape(len(b), -1).mean(axis=1, keepdims=True)
        norm = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
        return np.where(norm > 0, (a * b).sum(axis=1) / np.where(norm > 0, norm, 1.0), 0.0)

    return float(np.mean((corr(t[:, :, :-1], t[:, :, 1:]) + corr(t[:, :-1, :], t[:, 1:, :])) / 2))
