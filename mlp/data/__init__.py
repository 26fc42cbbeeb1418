"""Data: the 2D toy sets, labelled points from CSV files, MNIST, and digits people draw.

toy      make_2d (blobs, moons, circles, XOR, spirals, teacher; the regression plane and Gaussians),
         a split (stratified for classes), and the rule that says a set's task
teacher  the seed notes' task: labels from a fixed random ReLU network (16 inputs, or 2)
points   a 2D data set split for training and testing; points from a CSV file
edits    points added and erased by clicks on a 2D set, and their link form
features derived inputs (x1², x2², x1·x2, sin x1, sin x2): points to the network's inputs
download files into a cache folder, bounded in time and size, checked, atomic, one at a time
mnist    the mirrors and checksums, the IDX parser, the cache, the bundled sample
digits   a drawn or photographed digit made MNIST-like (28×28, centred)
"""

from typing import Any

from mlp.data.points import Points, UploadedPoints, points_csv, read_points_csv, uploaded_points
from mlp.data.teacher import teacher_task
from mlp.data.toy import (
    KINDS,
    MAX_CLASSES,
    MULTICLASS_KINDS,
    PLANE_KINDS,
    REGRESSION_KINDS,
    class_count,
    gallery,
    make_2d,
    split,
    task_of,
)

# MNIST's names load on first use, not with the package: `python -m mlp.data.mnist` imports this
# package first, and runpy warns when the module it is about to run as __main__ is already
# loaded (two copies of one module "may result in unpredictable behaviour").
_MNIST_NAMES = ("MnistData", "load_mnist", "load_sample")


def __getattr__(name: str) -> Any:
    if name in _MNIST_NAMES:
        from mlp.data import mnist

        return getattr(mnist, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "KINDS",
    "MAX_CLASSES",
    "MULTICLASS_KINDS",
    "PLANE_KINDS",
    "REGRESSION_KINDS",
    "MnistData",
    "Points",
    "UploadedPoints",
    "class_count",
    "gallery",
    "load_mnist",
    "load_sample",
    "make_2d",
    "points_csv",
    "read_points_csv",
    "split",
    "task_of",
    "teacher_task",
    "uploaded_points",
]
