"""The plane: a decision boundary (or a regression's values), what each hidden unit outputs over
it, and the toy sets.

The boundary and the neuron maps travel as small PNG images (a few KB) rather than as arrays
of numbers, and many points as WebGL scatters, so a frame stays light on the wire.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from mlp.figures.style import (
    CLASS_COLORS,
    NEGATIVE,
    POSITIVE,
    RGB,
    palette_png_uri,
    png_data_uri,
)

MAX_SHADE = 0.55  # the most opaque a region gets: points must stay visible on top
VALUE_RANGE = 1.0  # a regression's colour scale runs from -this (blue) through 0 (clear, grey) to +this
VALUE_STOPS = 21  # the points' colours along that scale: -1, -0.9, ..., 1
NEUTRAL = np.array([150.0, 150.0, 150.0])  # a point of value 0: grey, legible on light and dark
RGB8 = RGB.astype(np.uint8)  # the class colours as pixels
VALUE_LEVELS = 32  # shades on each side of 0: the canvas smooths them; a 100² frame's PNG halves (~8 KB)
SHADE_LEVELS = 32  # opacities of a class's region in a frame: 8 classes × 32 fill a PNG palette's 256


class LabelledPoints(Protocol):
    """What the boundary figure draws: train and test points with labels, on a square plane."""

    X_train: np.ndarray  # (n, 2)
    y_train: np.ndarray  # (n,)
    X_test: np.ndarray
    y_test: np.ndarray
    classes: int
    extent: tuple[float, float, float, float]


def boundary_rgba(probs: np.ndarray, discrete: bool = False) -> np.ndarray:
    """Each cell in its winning class's colour, more opaque the surer the model is; `discrete`
    (TensorFlow Playground's "Discretize output"): every cell as opaque as a sure one, so the
    regions and their edges show, not the confidence."""
    k = probs.shape[-1]
    # The winner and its probability a class at a time (as argmax: the first of a tie): K is
    # small, and a reduction along the short last axis costs ~10x more.
    top, winner = probs[..., 0].copy(), np.zeros(probs.shape[:-1], dtype=np.intp)
    for c in range(1, k):
        winner[probs[..., c] > top] = c
        np.maximum(top, probs[..., c], out=top)
    rgba = np.empty((*winner.shape, 4), dtype=np.uint8)
    rgba[..., :3] = RGB8.take(winner % len(RGB8), axis=0)
    if discrete:
        rgba[..., 3] = round(255 * MAX_SHADE)
    else:
        confidence = (top - 1 / k) / (1 - 1 / k)  # 0 at a coin toss, 1 when certain
        rgba[..., 3] = (255 * MAX_SHADE * np.clip(confidence, 0, 1) ** 0.7).astype(np.uint8)
    return rgba


def value_rgba(values: np.ndarray, discrete: bool = False) -> np.ndarray:
    """A regression's output over the plane, (..., 1) values: blue below 0, orange above, clear at
    0, more opaque the further from 0 (full shade at ±VALUE_RANGE, beyond it clipped); `discrete`:
    the sign alone, every cell fully shaded (TensorFlow Playground's "Discretize output")."""
    v = np.round(np.clip(values[..., 0] / VALUE_RANGE, -1, 1) * VALUE_LEVELS) / VALUE_LEVELS
    if discrete:
        v = np.sign(values[..., 0])
    rgba = np.empty((*v.shape, 4), dtype=np.uint8)
    rgba[..., :3] = np.where(v[..., None] < 0, NEGATIVE, POSITIVE)
    rgba[..., 3] = (255 * MAX_SHADE * np.abs(v) ** 0.7).astype(np.uint8)
    return rgba


@dataclass(frozen=True)
class Shade:
    """What a frame of the plane shades, cell by cell over a res × res lattice (row-major from
    the bottom): each cell's winning class and its probability, or a regression's value."""

    res: int
    winner: np.ndarray | None = None  # (res², ) uint8: the class a cell is coloured by
    top: np.ndarray | None = None  # (res², ) float32: that class's probability
    values: np.ndarray | None = None  # (res², ) float32: a regression's output, instead


def _class_palette() -> np.ndarray:
    """Entry 32·c + l: class c's colour at the l-th of SHADE_LEVELS opacities, up to MAX_SHADE."""
    alpha = np.round(255 * MAX_SHADE * np.arange(SHADE_LEVELS) / (SHADE_LEVELS - 1))
    return np.array([[*RGB8[c], a] for c in range(len(RGB8)) for a in alpha], dtype=np.uint8)


def _value_palette() -> np.ndarray:
    """Entry i: the value (i - VALUE_LEVELS) / VALUE_LEVELS of the scale, as value_rgba shades it."""
    values = (np.arange(2 * VALUE_LEVELS + 1) - VALUE_LEVELS) / VALUE_LEVELS
    return value_rgba(values[:, None, None]).reshape(-1, 4)


# A confidence in 256 steps -> its opacity level: (confidence ** 0.7) as boundary_rgba shades it
_LEVEL_OF = np.round((np.arange(256) / 255) ** 0.7 * (SHADE_LEVELS - 1)).astype(np.uint8)


def shade_png(shade: Shade, classes: int, discrete: bool = False) -> str:
    """A frame's shading as a palette PNG data URI (a byte a cell: ~4x faster to encode than
    boundary_image's RGBA, and lighter): the colours of boundary_rgba (its opacities in
    SHADE_LEVELS steps) or value_rgba. `discrete` as theirs."""
    if shade.values is not None:
        t = np.clip(shade.values / VALUE_RANGE, -1, 1)
        level = np.sign(t) * VALUE_LEVELS if discrete else np.round(t * VALUE_LEVELS)  # -32 ... 32
        index = (level + VALUE_LEVELS).astype(np.uint8)
        palette = _VALUE_PALETTE
    else:
        assert shade.winner is not None and shade.top is not None
        if discrete:
            level = np.uint8(SHADE_LEVELS - 1)
        else:  # confidence (top - 1/K) / (1 - 1/K): 0 at a coin toss, 1 when certain; in 256 steps
            scale = 255 / (1 - 1 / classes)
            steps = np.clip(shade.top * F32(scale) + F32(0.5 - scale / classes), 0, 255).astype(np.uint8)
            level = _LEVEL_OF.take(steps)
        index = shade.winner % len(RGB8) * np.uint8(SHADE_LEVELS) + level
        palette = _CLASS_PALETTE
    return palette_png_uri(index.reshape(shade.res, shade.res)[::-1], palette)  # PNG rows run top first


def value_colors(stops: int = VALUE_STOPS) -> list[str]:
    """The points' colours for values from -VALUE_RANGE to +VALUE_RANGE in `stops` even steps:
    blue, through grey at 0, to orange (the plane's shading, opaque)."""
    t = np.linspace(-1, 1, stops)[:, None]
    rgb = np.where(t < 0, NEGATIVE, POSITIVE) * np.abs(t) + NEUTRAL * (1 - np.abs(t))
    return ["#{:02x}{:02x}{:02x}".format(*c) for c in rgb.round().astype(int)]


def value_stop(y: np.ndarray, stops: int = VALUE_STOPS) -> np.ndarray:
    """Each value's index into value_colors (values beyond ±VALUE_RANGE take the end colours)."""
    t = np.clip(np.asarray(y, dtype=np.float64) / VALUE_RANGE, -1, 1)
    return np.rint((t + 1) / 2 * (stops - 1)).astype(np.int64)


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round numbers between lo and hi, about `target` of them: -1, 0, 1 for ±1.5."""
    raw = (hi - lo) / target
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 10) for i in range(int((hi - first) / step + 1e-9) + 1)]


_CLASS_PALETTE, _VALUE_PALETTE = _class_palette(), _value_palette()
F32 = np.float32


def boundary_image(probs: np.ndarray, discrete: bool = False) -> str:
    """The shaded boundary over the plane (res, res, K probabilities) as a small PNG data URI; one
    output (K = 1) is a regression's value, shaded on its colour scale (value_rgba)."""
    rgba = value_rgba(probs, discrete) if probs.shape[-1] == 1 else boundary_rgba(probs, discrete)
    return png_data_uri(rgba[::-1])  # PNG rows run top first; the grid's bottom first


def plane_points(points: LabelledPoints, show_test: bool = True) -> dict:
    """What stays put while a run trains: the points, the axes and the class colours, as plain data.
    A regression's points (float labels) are coloured by value: each row's third number indexes
    `colors`, the colour scale's stops, and `scale` says what the colours mean."""
    x0, x1, y0, y1 = points.extent
    regress = np.issubdtype(points.y_train.dtype, np.floating)
    colour = value_stop if regress else np.asarray

    def rows(X: np.ndarray, y: np.ndarray) -> list[list[float]]:
        return np.column_stack([X.astype(np.float64).round(4), colour(y)]).tolist()

    view = {
        "extent": [x0, x1, y0, y1],
        "xticks": nice_ticks(x0, x1),
        "yticks": nice_ticks(y0, y1),
        "train": rows(points.X_train, points.y_train),
        "test": rows(points.X_test, points.y_test) if show_test else [],
        "colors": [CLASS_COLORS[c % len(CLASS_COLORS)] for c in range(points.classes)],
    }
    if regress:
        view["colors"] = value_colors()
        view["scale"] = {"low": -VALUE_RANGE, "high": VALUE_RANGE, "label": "value (output and label)"}
    return view


def plane_view(probs: np.ndarray, points: LabelledPoints, show_test: bool = True) -> dict:
    """The plane as plain data for a canvas: the shaded boundary as a small PNG, the points, the axes.

    Drawn in the browser (pages/ui/plane.py) rather than as a plotly figure: redrawing 600
    SVG markers every frame kept the browser's main thread busy 80% of the time, while an
    image and a cached layer of points cost it next to nothing. While a run plays, only the
    image changes (boundary_image); the points travel once (plane_points).
    """
    return {"image": boundary_image(probs), **plane_points(points, show_test)}


def neuron_mosaic(units: np.ndarray, per_row: int = 16, gap: int = 3, bottom_up: bool = True) -> np.ndarray:
    """Maps (units, r, r) as an RGBA image of tiles: blue < 0 < orange, clear at 0.

    Each tile is scaled by its own largest |value|: the pattern matters here, not the size.
    `bottom_up`: row 0 of each map is the bottom (a grid over the plane), not the top (an image).
    """
    n, r, _ = units.shape
    cols = min(n, per_row)
    rows = -(-n // per_row)
    mosaic = np.zeros((rows * (r + gap) - gap, cols * (r + gap) - gap, 4), dtype=np.uint8)
    scale = np.abs(units).reshape(n, -1).max(axis=1)
    v = np.clip(units / np.where(scale > 0, scale, 1)[:, None, None], -1, 1)
    if bottom_up:
        v = v[:, ::-1]  # PNG rows run top first
    tiles = np.empty((n, r, r, 4), dtype=np.uint8)
    tiles[..., :3] = np.where(v[..., None] < 0, NEGATIVE, POSITIVE)
    tiles[..., 3] = (255 * np.abs(v) ** 0.8).astype(np.uint8)
    padded = np.zeros((rows * per_row, r + gap, r + gap, 4), dtype=np.uint8)
    padded[:n, :r, :r] = tiles
    # (rows, per_row, r+gap, r+gap, 4) -> rows of tiles side by side, gaps included
    grid = padded.reshape(rows, per_row, r + gap, r + gap, 4).transpose(0, 2, 1, 3, 4)
    grid = grid.reshape(rows * (r + gap), per_row * (r + gap), 4)
    mosaic[:] = grid[: mosaic.shape[0], : mosaic.shape[1]]
    return mosaic


def neurons_image(
    units: np.ndarray, per_row: int = 16, pixels: int = 3, bottom_up: bool = True
) -> np.ndarray:
    """What each unit of one layer computes, as one RGBA image of tiles, each pixel `pixels` wide.

    A plain image (st.image) rather than a plotly figure: nothing to lay out, nothing to hover,
    and the browser draws it in no time, which matters for maps redrawn while training plays.
    """
    mosaic = neuron_mosaic(units, per_row, bottom_up=bottom_up)
    return mosaic.repeat(pixels, axis=0).repeat(pixels, axis=1)


GALLERY_RANGE = 1.8  # each panel shows [-this, this]² of its data set


def toy_gallery(sets: Mapping[str, tuple[np.ndarray, np.ndarray]], presenting: bool = False) -> str:
    """One small picture per named 2D data set (X, y), its points coloured by class, its name
    under it: inline SVG panels side by side that wrap on a narrow screen (three a row on a
    phone), their names in the page's text colour (light or dark theme). Not a plotly chart:
    the home page, where a class arrives, would load plotly's script for a picture nobody can
    interact with (1.2 of the 4 s of main-thread script a first load took in this project's
    headless Chromium on 2 cores)."""
    width = 130 if presenting else 104  # px on screen: names at 18 and 15 px (16 and 11 at least)
    panels = []
    for kind, (X, y) in sets.items():
        points = (np.clip(X, -GALLERY_RANGE, GALLERY_RANGE) / GALLERY_RANGE + 1) * 48 + 2  # in [2, 98]
        classes = np.unique(y)
        dots = [
            f'<path d="{"".join(f"M{a:.1f} {100 - b:.1f}h0" for a, b in points[y == c])}" '
            f'stroke="{CLASS_COLORS[c % len(CLASS_COLORS)]}"/>'
            for c in classes
        ]
        label = f"{kind}: {len(y)} points in {len(classes)} classes"
        panels.append(
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 122" width="{width}" role="img" '
            f'aria-label="{label}"><g stroke-width="3" stroke-linecap="round">{"".join(dots)}</g>'
            f'<text x="50" y="117" font-size="14" text-anchor="middle" fill="currentColor">{kind}</text>'
            "</svg>"
        )
    return f'<div style="display:flex;flex-wrap:wrap;gap:4px 12px;margin-bottom:12px">{"".join(panels)}</div>'
