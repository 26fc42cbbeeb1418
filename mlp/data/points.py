"""Labelled 2D points: a data set split for training and testing, and points from a CSV file.

A CSV's header says its task: x1, x2, label for classes (whole numbers), x1, x2, value for a
regression (real numbers).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mlp.data.toy import split, task_of_labels
from mlp.errors import InputError

MAX_CSV_ROWS = 5_000
MAX_CSV_BYTES = 2_000_000  # also the uploader's limit (2 MB), pages/playground.py
MAX_CSV_CLASSES = 8
PLANE = 1.5  # uploaded points are centred and scaled into [-PLANE, PLANE]^2
MAX_VALUE = 1.5  # a regression's values beyond ±this are scaled into [-1, 1] (the colour scale's range)
HEADERS = {"label": "classify", "value": "regress"}  # the third column's name says the task


@dataclass
class Points:
    """A labelled 2D data set, split for training and testing."""

    X_train: np.ndarray  # (n_train, 2) float32
    y_train: np.ndarray  # (n_train,) int64 classes, or float32 values for a regression
    X_test: np.ndarray
    y_test: np.ndarray
    classes: int  # the network's outputs: K classes, 1 for a regression (one real-valued output)
    name: str  # "spiral (3 arms)" or "points.csv"
    plane: float | None = None  # half the plane's width, if fixed (a set edited by clicks keeps its own)

    @property
    def task(self) -> str:
        """ "classify" or "regress", as the labels say (mlp.data.toy.task_of_labels)."""
        return task_of_labels(self.y_train)

    @property
    def extent(self) -> tuple[float, float, float, float]:
        """x and y ranges of the plane shown: every point plus a margin, square, at least ±1.5."""
        if self.plane is not None:
            return (-self.plane, self.plane, -self.plane, self.plane)
        both = np.concatenate([self.X_train, self.X_test])
        half = max(PLANE, float(np.abs(both).max()) * 1.1)
        return (-half, half, -half, half)


@dataclass
class UploadedPoints:
    """Points read from a CSV file, before the train/test split."""

    X: np.ndarray  # (n, 2) float32, centred and scaled into the plane
    y: np.ndarray  # (n,) int64 in 0..K-1, or float32 values for a regression
    classes: int  # 1 for a regression
    note: str  # what was done to the file, in a sentence
    name: str = "points.csv"  # the file's name (the uploader's text: show it as plain text)


def read_points_csv(data: bytes, name: str = "points.csv") -> UploadedPoints:
    """Points from a CSV with the columns x1, x2, label (classes) or x1, x2, value (a regression);
    ValueError saying what is wrong otherwise."""
    if len(data) > MAX_CSV_BYTES:
        raise ValueError(f"The file is {len(data) / 1e6:.1f} MB; the limit is {MAX_CSV_BYTES / 1e6:.0f} MB.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(
            "This is not a text file: upload a UTF-8 CSV with columns x1, x2, label (or value)."
        ) from None
    try:
        frame = pd.read_csv(io.StringIO(text), skipinitialspace=True, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        detail = (str(err).splitlines() or ["empty"])[0]
        raise InputError("This is not a readable CSV ({}).", detail[:80]) from None
    columns = [str(c).strip().lower() for c in frame.columns]
    if columns[:2] != ["x1", "x2"] or len(columns) != 3 or columns[2] not in HEADERS:
        found = ", ".join(str(c) for c in frame.columns) or "nothing"
        raise InputError(
            "Expected the header x1, x2, label (classes) or x1, x2, value (a regression), in that "
            "order; found {}.",
            found[:80],
        )
    if len(frame) < 10:
        raise ValueError(f"The file has {len(frame)} rows; a playground needs at least 10 points.")
    if len(frame) > MAX_CSV_ROWS:
        raise ValueError(f"The file has {len(frame):,} rows; at most {MAX_CSV_ROWS:,} are allowed.")
    numbers = {}
    for column in frame.columns:
        cells = frame[column].str.strip()
        values = pd.to_numeric(cells, errors="coerce")
        bad = values.isna() | ~np.isfinite(values.fillna(0))
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            cell = cells.iloc[row]
            where = f"Row {row + 2} (counting the header), column {column.strip().lower()}"
            if cell == "":
                raise ValueError(f"{where}, is empty.")
            raise InputError(f"{where}, has {{}}, which is not a finite number.", cell[:40])
        numbers[column.strip().lower()] = values.to_numpy(dtype=np.float64)
    X = _into_plane(np.column_stack([numbers["x1"], numbers["x2"]]))
    if "value" in numbers:
        return _regression_points(X, numbers["value"], name)
    labels = numbers["label"]
    if not np.all(labels == np.round(labels)):
        row = int(np.flatnonzero(labels != np.round(labels))[0])
        raise ValueError(
            f"Labels must be whole numbers; row {row + 2} has {labels[row]:g}. "
            "For real-valued labels (a regression), name the column value: x1, x2, value."
        )
    values = np.unique(labels)
    if len(values) < 2:
        raise ValueError(f"Every point has label {values[0]:g}: a classifier needs at least two classes.")
    if len(values) > MAX_CSV_CLASSES:
        raise ValueError(f"{len(values)} different labels; at most {MAX_CSV_CLASSES} classes are allowed.")
    y = np.searchsorted(values, labels).astype(np.int64)
    note = f"{len(y):,} points, {len(values)} classes, centred and scaled to fit [-{PLANE}, {PLANE}]²"
    if not np.array_equal(values, np.arange(len(values))):
        note += f"; labels {', '.join(f'{v:g}' for v in values)} became 0 to {len(values) - 1}"
    return UploadedPoints(X, y, len(values), note + ".", name)


def _into_plane(X: np.ndarray) -> np.ndarray:
    """(n, 2) float64 centred and scaled into [-PLANE, PLANE]^2, as float32."""
    # Centred and scaled in halves, so values near float64's limit (±1.7e308) can't overflow.
    half = X / 2
    offset = half - (half.max(axis=0) / 2 + half.min(axis=0) / 2)  # (X - centre) / 2
    return (offset * (PLANE / max(float(np.abs(offset).max()), 1e-300))).astype(np.float32)


def _regression_points(X: np.ndarray, values: np.ndarray, name: str) -> UploadedPoints:
    """A regression's points: the values as float32, scaled into [-1, 1] if any is beyond ±MAX_VALUE."""
    if np.all(values == values[0]):
        raise ValueError(f"Every point has value {values[0]:g}: there is nothing to fit.")
    note = f"{len(values):,} points with real values (a regression), centred and scaled to fit "
    note += f"[-{PLANE}, {PLANE}]²"
    top = float(np.abs(values).max())
    if top > MAX_VALUE:
        values = values / top
        note += f"; values divided by {top:g} to fit [-1, 1]"
    return UploadedPoints(X, values.astype(np.float32), 1, note + ".", name)


def uploaded_points(upload: UploadedPoints, test_fraction: float, seed: int) -> Points:
    """The uploaded points split for training and testing (stratified, for classes)."""
    (X_train, y_train), (X_test, y_test) = split(upload.X, upload.y, test_fraction, seed=seed)
    return Points(X_train, y_train, X_test, y_test, upload.classes, upload.name)


def points_csv(points: Points) -> str:
    """The data set as a CSV that read_points_csv takes back: x1, x2, label (or value, for a
    regression), train then test."""
    X = np.concatenate([points.X_train, points.X_test])
    y = np.concatenate([points.y_train, points.y_test])
    header = "value" if points.task == "regress" else "label"
    return pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], header: y}).to_csv(index=False, float_format="%.6g")
