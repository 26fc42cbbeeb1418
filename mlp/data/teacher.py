"""The seed notes' teacher task: labels made by a fixed, random ReLU network.

A student network that is at least as large as the teacher can fit these labels exactly, so
the task separates "can this architecture express it?" from "does training find it?".
"""

from __future__ import annotations

import numpy as np

TEACHER_HIDDEN = 32  # the teacher's one hidden layer
BALANCE_ROUNDS = 200  # small bias corrections so that every class gets about its share of the inputs


def inputs(rng: np.random.Generator, n: int, d_in: int) -> np.ndarray:
    """The teacher's inputs: N(0, 1) rows; in 2D, uniform over the toy sets' square."""
    if d_in == 2:
        return rng.uniform(-1.5, 1.5, size=(n, 2))
    return rng.standard_normal((n, d_in))


def teacher_network(
    d_in: int, classes: int, seed: int = 0, hidden: int = TEACHER_HIDDEN
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(W1, b1, W2, b2) of a random d_in-hidden-classes ReLU network, He-initialised.

    The output biases are then nudged until each class wins for about 1/classes of the
    inputs: a random network left alone gives one class most of the space.
    """
    rng = np.random.default_rng([seed, d_in, classes])
    W1 = rng.normal(0.0, np.sqrt(2.0 / d_in), size=(d_in, hidden))  # (d_in, h)
    b1 = rng.normal(0.0, 0.5, size=hidden)  # (h,): kinks off the origin
    W2 = rng.normal(0.0, np.sqrt(2.0 / hidden), size=(hidden, classes))  # (h, K)
    b2 = np.zeros(classes)
    reference = np.maximum(inputs(rng, 4096, d_in) @ W1 + b1, 0.0) @ W2  # (4096, K)
    for _ in range(BALANCE_ROUNDS):
        share = np.bincount((reference + b2).argmax(axis=1), minlength=classes) / len(reference)
        b2 -= 0.05 * np.log(np.maximum(share, 1e-3) * classes) * reference.std()
    return W1, b1, W2, b2


def teacher_labels(X: np.ndarray, classes: int, seed: int = 0) -> np.ndarray:
    """The teacher's class for each row of X (N, d_in): argmax of its logits, int64 (N,)."""
    W1, b1, W2, b2 = teacher_network(X.shape[1], classes, seed)
    z1 = X.astype(np.float64) @ W1 + b1  # (N, d_in) @ (d_in, h) + (h,) -> (N, h)
    logits = np.maximum(z1, 0.0) @ W2 + b2  # (N, h) @ (h, K) + (K,) -> (N, K)
    return logits.argmax(axis=1).astype(np.int64)


def teacher_task(n: int, d_in: int = 16, classes: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The seed notes' task: X float32 (n, d_in) from N(0, 1) (uniform in 2D), y int64 (n,)."""
    X = inputs(np.random.default_rng(seed), n, d_in).astype(np.float32)
    return X, teacher_labels(X, classes, seed)
