"""Points a visitor adds to a 2D set or erases from it with clicks, and their link form.

ConvNetJS's classifier demo: a click adds a training point of the chosen class, and the network
goes on training with it. `Edits` is what the clicks did, relative to the set they were made
on: points added (rounded to what a link carries) and the set's own points erased, by index in
the set's order (train, then test: points_csv's). `apply_edits` makes the set the run trains on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mlp.data.points import Points

MAX_ADDED = 200  # added points a set may hold (and a link carry)
MAX_ERASED = 1000  # erased points a set may note (a link lists them as ranges)
DIGITS = 2  # an added point's coordinates are kept to 0.01: a click's aim, and the link's text
MAX_COORD = 100.0  # the largest |coordinate| a link may give (a point is kept inside the plane)
MAX_TEXT = 10_000  # characters of a link's pts= read at all: the caps' worst case (~9,200) fits
ERASE_SHARE = 0.04  # what a click in erase mode reaches: this share of the plane's width


@dataclass(frozen=True)
class Edits:
    """What clicks did to a set: points added for training, and the set's own points erased."""

    added: tuple[tuple[float, float, int], ...] = ()  # (x1, x2, class), rounded to DIGITS
    erased: tuple[int, ...] = ()  # indices into the set, train then test; sorted, distinct

    def __bool__(self) -> bool:
        return bool(self.added or self.erased)


def add_point(edits: Edits, x: float, y: float, label: int, classes: int) -> Edits:
    """`edits` with a training point of class `label` at (x, y); ValueError past MAX_ADDED."""
    if not 0 <= label < classes:
        raise ValueError(f"Class {label} is not one of this set's classes, 0 to {classes - 1}.")
    if len(edits.added) >= MAX_ADDED:
        raise ValueError(f"A set holds at most {MAX_ADDED} added points: erase some to add more.")
    point = (_round(x), _round(y), int(label))
    return Edits((*edits.added, point), edits.erased)


def erase_near(edits: Edits, base: Points, x: float, y: float, radius: float, test: bool = True) -> Edits:
    """`edits` without the points within `radius` of (x, y): added ones dropped, the set's own
    (its test points too, if `test`: those shown) marked erased. ValueError past MAX_ERASED."""
    added = tuple(p for p in edits.added if math.hypot(p[0] - x, p[1] - y) > radius)
    X = base.X_train if not test else np.concatenate([base.X_train, base.X_test])
    near = np.flatnonzero(np.hypot(X[:, 0] - x, X[:, 1] - y) <= radius)
    erased = tuple(sorted(set(edits.erased) | set(near.tolist())))
    if len(erased) > MAX_ERASED:
        raise ValueError(f"At most {MAX_ERASED} of a set's points can be erased; pick New points instead.")
    apply_edits(base, Edits(added, erased))  # the check that some training points are left
    return Edits(added, erased)


def erase_radius(points: Points) -> float:
    """How far from a click erase mode reaches, in the plane's units."""
    x0, x1, _, _ = points.extent
    return ERASE_SHARE * (x1 - x0)


def apply_edits(base: Points, edits: Edits) -> Points:
    """The set the clicks made: `base` without its erased points, with the added ones as training
    points (kept inside the plane). Its plane stays `base`'s, so the run's drawing grid fits it."""
    n_train, n = len(base.y_train), len(base.y_train) + len(base.y_test)
    if edits.erased and not 0 <= min(edits.erased) <= max(edits.erased) < n:
        raise ValueError(f"Erased points must be numbered 0 to {n - 1}.")
    if any(not 0 <= c < base.classes for _, _, c in edits.added):
        raise ValueError(f"Added points' classes must be 0 to {base.classes - 1}.")
    kept = np.ones(n, dtype=bool)
    kept[list(edits.erased)] = False
    if not kept[:n_train].any() and not edits.added:
        raise ValueError("That would erase every training point: a network needs some to learn from.")
    half = base.extent[1]
    added = np.array(edits.added, dtype=np.float64).reshape(-1, 3)
    X_added = np.clip(added[:, :2], -half, half).astype(base.X_train.dtype)
    y_added = added[:, 2].astype(base.y_train.dtype)
    return Points(
        np.concatenate([base.X_train[kept[:n_train]], X_added]),
        np.concatenate([base.y_train[kept[:n_train]], y_added]),
        base.X_test[kept[n_train:]],
        base.y_test[kept[n_train:]],
        base.classes,
        base.name,
        plane=half,
    )


def describe(points: Points, edits: Edits) -> str:
    """The set in a few words: "482 train points (2 added, 1 erased)"."""
    done = [f"{len(edits.added)} added"] if edits.added else []
    done += [f"{len(edits.erased)} erased"] if edits.erased else []
    return f"{len(points.y_train):,} train points" + (f" ({', '.join(done)})" if done else "")


# --- the link's form: "x1_x2_class" per added point, "x" and an index (or a range) per erased run,
# joined by "~" (characters a URL keeps as they are): "0.5_-1.25_1~x17~x40-42".


def edits_text(edits: Edits) -> str:
    """The edits as a link parameter's value ("" for none)."""
    parts = [f"{_number(x)}_{_number(y)}_{c}" for x, y, c in edits.added]
    for first, last in _runs(edits.erased):
        parts.append(f"x{first}" if first == last else f"x{first}-{last}")
    return "~".join(parts)


def read_edits(text: str) -> Edits:
    """Edits from their link form; ValueError with a reason (to follow "Ignored pts=…: ") otherwise."""
    if text in ("", "none"):
        return Edits()
    if len(text) > MAX_TEXT:
        raise ValueError(f"longer than {MAX_TEXT:,} characters")
    added, erased = [], set()
    for part in text.split("~"):
        if part.startswith("x"):
            first, dash, last = part[1:].partition("-")
            last = last if dash else first
            digits = first.isdigit() and last.isdigit() and len(first + last) <= 12
            if not (digits and int(first) <= int(last)):
                raise ValueError(f'"{part[:20]}" is not x and a point\'s number (or a range, x3-7)')
            if int(last) - int(first) >= MAX_ERASED:
                raise ValueError(f"more than {MAX_ERASED} erased points")
            erased.update(range(int(first), int(last) + 1))
            if len(erased) > MAX_ERASED:
                raise ValueError(f"more than {MAX_ERASED} erased points")
            continue
        fields = part.split("_")
        if len(fields) != 3 or not fields[2].isdigit() or len(fields[2]) > 2:
            raise ValueError(f'"{part[:30]}" is not a point written x1_x2_class, e.g. 0.5_-1.25_1')
        try:
            x, y = float(fields[0]), float(fields[1])
        except ValueError:
            raise ValueError(f'"{part[:30]}" has a coordinate that is not a number') from None
        if not (abs(x) <= MAX_COORD and abs(y) <= MAX_COORD):  # also refuses nan and inf
            raise ValueError(f"a coordinate beyond ±{MAX_COORD:g}")
        added.append((_round(x), _round(y), int(fields[2])))
        if len(added) > MAX_ADDED:
            raise ValueError(f"more than {MAX_ADDED} added points")
    return Edits(tuple(added), tuple(sorted(erased)))


def _round(v: float) -> float:
    return round(float(v), DIGITS) + 0.0  # + 0.0: no "-0"


def _number(v: float) -> str:
    return format(_round(v), "g")


def _runs(indices: tuple[int, ...]) -> list[tuple[int, int]]:
    """Sorted indices as (first, last) runs of consecutive ones."""
    runs: list[tuple[int, int]] = []
    for i in indices:
        if runs and runs[-1][1] == i - 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs
