"""The 2D toy sets (blobs, moons, circles, XOR, spirals, a teacher network's; TensorFlow Playground's
two regression sets, a plane and signed Gaussians) and a train/test split."""

from __future__ import annotations

import numpy as np

from mlp.data.teacher import teacher_task

KINDS = ("blobs", "moons", "circles", "xor", "spiral", "teacher")  # classification: labels are classes
REGRESSION_KINDS = ("reg-plane", "reg-gauss")  # regression: labels are real values, about [-1, 1]
PLANE_KINDS = KINDS + REGRESSION_KINDS  # everything the 2D playground offers
TASKS = ("classify", "regress")
MULTICLASS_KINDS = ("blobs", "spiral", "teacher")  # the kinds whose class count can change
MAX_CLASSES = 5
MAX_POINTS = 100_000
MAX_NOISE = 2.0


def class_count(kind: str, asked: int) -> int:
    """How many classes `kind` has when `asked` for some: that many for the kinds whose count can
    change (MULTICLASS_KINDS), else 2. The rule's one home."""
    return asked if kind in MULTICLASS_KINDS else 2


def task_of(kind: str) -> str:
    """ "regress" for the regression kinds (real-valued labels), else "classify". The rule's one home
    for a kind; points carry it in their labels' dtype (`task_of_labels`)."""
    return "regress" if kind in REGRESSION_KINDS else "classify"


def task_of_labels(y: np.ndarray) -> str:
    """ "regress" for real-valued (float) labels, "classify" for class indices (integers)."""
    return "regress" if np.issubdtype(np.asarray(y).dtype, np.floating) else "classify"


def make_2d(
    kind: str, n: int, noise: float = 0.1, classes: int = 2, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Points X float32 (n, 2) in roughly [-1.5, 1.5]^2 and labels y int64 (n,), shuffled; for the
    REGRESSION_KINDS, y float32 (n,), real values (reg-gauss in [-1, 1], reg-plane's ramp in
    [-1.2, 1.2], as TensorFlow Playground's) (`classes` must be 2, as for any
    2-class kind).

    `noise` is the standard deviation of the Gaussian jitter (for blobs, added to a base
    spread of 0.25; for spirals, applied to the angle; for the regression sets, TensorFlow
    Playground's: the label is read at a point shifted by up to ±noise of the plane's half-width).
    Same arguments, same points.
    """
    if kind not in PLANE_KINDS:
        raise ValueError(f"Unknown data set {kind!r}; choose one of {', '.join(PLANE_KINDS)}.")
    if classes != 2 and kind not in MULTICLASS_KINDS:
        raise ValueError(
            f"{kind!r} always has 2 classes (got classes={classes}); "
            f"use {' or '.join(MULTICLASS_KINDS)} for 2 to {MAX_CLASSES} classes."
        )
    if not 2 <= classes <= MAX_CLASSES:
        raise ValueError(f"classes must be between 2 and {MAX_CLASSES}; got {classes}.")
    if not 2 * classes <= n <= MAX_POINTS:
        raise ValueError(f"n must be between {2 * classes} and {MAX_POINTS:,} points; got {n}.")
    if not 0.0 <= noise <= MAX_NOISE or not np.isfinite(noise):
        raise ValueError(f"noise must be between 0 and {MAX_NOISE}; got {noise}.")

    rng = np.random.default_rng(seed)
    if kind in REGRESSION_KINDS:
        return _regression(kind, n, noise, rng)
    y = np.arange(n) % classes  # balanced: class sizes differ by at most one
    u = rng.uniform(size=n)  # one uniform draw per point, used by the kinds that need it
    X, y = GENERATORS[kind](y, u, noise, classes, seed, rng)
    order = rng.permutation(n)
    return X[order].astype(np.float32), y[order].astype(np.int64)


# Each classification kind from (labels y, one uniform draw u per point, noise, classes, the seed,
# the generator after those draws) to its points (X, y) before the shuffle: make_2d's, and what a
# notebook of the run embeds of them (mlp.export).


def blobs(y, u, noise, classes, seed, rng):
    angle = 2 * np.pi * y / classes + np.pi / 4
    centres = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    return centres + rng.normal(scale=0.25 + noise, size=(len(y), 2)), y


def moons(y, u, noise, classes, seed, rng):
    t = np.pi * u
    upper = np.stack([np.cos(t), np.sin(t)], axis=1)
    lower = np.stack([1 - np.cos(t), 0.5 - np.sin(t)], axis=1)
    X = np.where(y[:, None] == 0, upper, lower) - [0.5, 0.25]
    return X + rng.normal(scale=noise, size=(len(y), 2)), y


def circles(y, u, noise, classes, seed, rng):
    t = 2 * np.pi * u
    radius = np.where(y == 0, 1.0, 0.5)
    X = radius[:, None] * np.stack([np.cos(t), np.sin(t)], axis=1)
    return X + rng.normal(scale=noise, size=(len(y), 2)), y


def xor(y, u, noise, classes, seed, rng):
    X = rng.uniform(-1, 1, size=(len(y), 2))
    X += np.sign(X) * 0.05  # a small margin around the axes, as TF Playground has
    y = (X[:, 0] * X[:, 1] < 0).astype(np.int64)
    return X + rng.normal(scale=noise, size=(len(y), 2)), y


def teacher(y, u, noise, classes, seed, rng):
    """The seed notes' task in 2D: regions a random ReLU network draws."""
    X, y = teacher_task(len(y), 2, classes, seed)
    return X + rng.normal(scale=noise, size=(len(y), 2)), y


def spiral(y, u, noise, classes, seed, rng):
    """Arm k starts at angle 2πk/K and winds 4 radians as the radius grows."""
    r = u
    t = 2 * np.pi * y / classes + 4 * r + rng.normal(scale=2 * noise, size=len(y))
    return 1.4 * r[:, None] * np.stack([np.sin(t), np.cos(t)], axis=1), y


GENERATORS = {f.__name__: f for f in (blobs, moons, circles, xor, spiral, teacher)}


# TensorFlow Playground's regressGaussian (src/dataset.ts): centres in its ±6 plane and signs.
GAUSSIANS = ((-4, 2.5, 1), (0, 2.5, -1), (4, 2.5, 1), (-4, -2.5, -1), (0, -2.5, 1), (4, -2.5, -1))
TF_RADIUS = 6.0  # TensorFlow Playground's points lie in [-6, 6]^2; ours in [-1.5, 1.5]^2


def _regression(kind: str, n: int, noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """TensorFlow Playground's regressPlane and regressGaussian, in its units, then scaled to our plane."""
    r = TF_RADIUS
    X = rng.uniform(-r, r, size=(n, 2))
    shifted = X + rng.uniform(-r, r, size=(n, 2)) * noise  # the label is read at a noisy position
    if kind == "reg-plane":  # a linear ramp, (x + y) / 10: ±1 at x + y = ±10, ±1.2 in the corners
        y = (shifted[:, 0] + shifted[:, 1]) / 10
    else:  # reg-gauss: the bump of largest |value|, each falling linearly from ±1 at its centre to 0 at 2
        bumps = [
            sign * np.clip(1 - np.hypot(shifted[:, 0] - cx, shifted[:, 1] - cy) / 2, 0, 1)
            for cx, cy, sign in GAUSSIANS
        ]
        stacked = np.stack(bumps)  # (6, n)
        y = np.take_along_axis(stacked, np.abs(stacked).argmax(0)[None], 0)[0]
    scale = 1.5 / r
    return (X * scale).astype(np.float32), y.astype(np.float32)


# A challenge's hidden part (mlp.curriculum.challenges.hidden_points, MnistData.challenge_part):
# drawn or split with this seed, added to the data's own where it has one
HIDDEN_SEED = 104_729


def split(
    X: np.ndarray, y: np.ndarray, test_fraction: float = 0.2, seed: int = 0
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Stratified train/test split: each class keeps its share in both parts. Real-valued labels
    (a regression's) have no classes: a plain random split."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be strictly between 0 and 1; got {test_fraction}.")
    rng = np.random.default_rng(seed)
    if task_of_labels(y) == "regress":
        is_test = np.zeros(len(y), dtype=bool)
        is_test[rng.permutation(len(y))[: round(len(y) * test_fraction)]] = True
        return (X[~is_test], y[~is_test]), (X[is_test], y[is_test])
    test_idx = []
    for label in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == label))
        test_idx.append(members[: round(len(members) * test_fraction)])
    is_test = np.zeros(len(y), dtype=bool)
    is_test[np.concatenate(test_idx)] = True
    return (X[~is_test], y[~is_test]), (X[is_test], y[is_test])


def gallery(
    kinds: tuple[str, ...] = KINDS, n: int = 300, seed: int = 0
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """One small sample of each toy set (3 classes where a set can have more than 2)."""
    return {kind: make_2d(kind, n, noise=0.1, classes=class_count(kind, 3), seed=seed) for kind in kinds}
