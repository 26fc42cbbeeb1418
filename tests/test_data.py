"""mlp.data: the 2D toy sets and the stratified split."""

import numpy as np
import pytest

from mlp.data import KINDS, make_2d, split, teacher_task


@pytest.mark.parametrize("kind", KINDS)
def test_shapes_dtypes_and_balance(kind):
    X, y = make_2d(kind, 301, noise=0.1, seed=0)
    assert X.shape == (301, 2) and X.dtype == np.float32
    assert y.shape == (301,) and y.dtype == np.int64
    assert set(np.unique(y)) == {0, 1}
    assert np.abs(X).max() < 3
    counts = np.bincount(y)
    assert counts.min() >= 0.4 * len(y)  # roughly balanced (xor's labels come from the points)


@pytest.mark.parametrize("kind", KINDS)
def test_same_seed_same_points_other_seed_other_points(kind):
    X1, y1 = make_2d(kind, 200, seed=7)
    X2, y2 = make_2d(kind, 200, seed=7)
    X3, _ = make_2d(kind, 200, seed=8)
    assert np.array_equal(X1, X2) and np.array_equal(y1, y2)
    assert not np.array_equal(X1, X3)


@pytest.mark.parametrize("kind", ["blobs", "spiral"])
@pytest.mark.parametrize("classes", [2, 3, 4, 5])
def test_blobs_and_spirals_take_2_to_5_classes(kind, classes):
    _, y = make_2d(kind, 60 * classes, classes=classes)
    assert np.array_equal(np.bincount(y), np.full(classes, 60))


@pytest.mark.parametrize("kind", ["moons", "circles", "xor"])
def test_classes_is_rejected_where_it_cannot_apply(kind):
    with pytest.raises(ValueError, match=f"'{kind}' always has 2 classes.*blobs or spiral"):
        make_2d(kind, 100, classes=3)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"kind": "swirl"}, "Unknown data set 'swirl'; choose one of blobs"),
        ({"classes": 6, "kind": "blobs"}, "classes must be between 2 and 5"),
        ({"n": 3}, "n must be between 4 and 100,000"),
        ({"noise": -0.1}, "noise must be between 0 and 2"),
        ({"noise": float("nan")}, "noise must be between 0 and 2"),
    ],
)
def test_bad_arguments_get_clear_messages(args, message):
    with pytest.raises(ValueError, match=message):
        make_2d(**({"kind": "moons", "n": 100} | args))


def test_noise_zero_gives_exact_shapes():
    X, y = make_2d("circles", 200, noise=0.0)
    radius = np.linalg.norm(X, axis=1)
    assert np.allclose(radius[y == 0], 1.0, atol=1e-6) and np.allclose(radius[y == 1], 0.5, atol=1e-6)


def test_split_is_stratified_disjoint_and_deterministic():
    X, y = make_2d("blobs", 500, classes=5, seed=1)
    X = np.column_stack([X, np.arange(500)])  # tag rows to check disjointness
    (Xa, ya), (Xb, yb) = split(X, y, 0.2, seed=3)
    assert len(ya) == 400 and len(yb) == 100
    assert np.array_equal(np.bincount(yb), np.full(5, 20))
    assert not set(Xa[:, 2]) & set(Xb[:, 2])
    (Xc, _), _ = split(X, y, 0.2, seed=3)
    assert np.array_equal(Xa, Xc)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        split(X, y, 1.0)


def test_the_teacher_task_is_the_seed_notes_one_balanced_and_reproducible():
    X, y = teacher_task(5000, d_in=16, classes=5, seed=0)
    assert X.shape == (5000, 16) and X.dtype == np.float32 and y.dtype == np.int64
    counts = np.bincount(y, minlength=5)
    assert counts.min() > 0.6 * 1000 and counts.max() < 1.4 * 1000  # each class near its fifth
    again = teacher_task(5000, d_in=16, classes=5, seed=0)
    assert np.array_equal(X, again[0]) and np.array_equal(y, again[1])
    assert not np.array_equal(y, teacher_task(5000, d_in=16, classes=5, seed=1)[1])


def test_the_2d_teacher_set_draws_regions_with_every_class():
    for classes in (2, 3, 5):
        X, y = make_2d("teacher", 2000, noise=0.0, classes=classes, seed=3)
        counts = np.bincount(y, minlength=classes)
        assert counts.min() > 0.5 * 2000 / classes
        assert np.abs(X).max() <= 1.5
