"""The plane: a decision boundary, what each hidden unit outputs over it, and the toy sets.

The boundary and the neuron maps travel as small PNG images (a few KB) rather than as arrays
of numbers, and many points as WebGL scatters, so a frame stays light on the wire.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from mlp.figures.style import (
    CLASS_COLORS,
    NEGATIVE,
    POSITIVE,
    RGB,
    base_layout,
    fast_figure,
    layout_dict,
    png_data_uri,
)

MAX_SHADE = 0.55  # the most opaque a region gets: points must stay visible on top
WEBGL_ABOVE = 1000  # points; below this an SVG scatter draws faster than starting WebGL


class LabelledPoints(Protocol):
    """What the boundary figure draws: train and test points with labels, on a square plane."""

    X_train: np.ndarray  # (n, 2)
    y_train: np.ndarray  # (n,)
    X_test: np.ndarray
    y_test: np.ndarray
    classes: int
    extent: tuple[float, float, float, float]


def boundary_rgba(probs: np.ndarray) -> np.ndarray:
    """Each cell in its winning class's colour, more opaque the surer the model is."""
    k = probs.shape[-1]
    winner = probs.argmax(-1)
    confidence = (probs.max(-1) - 1 / k) / (1 - 1 / k)  # 0 at a coin toss, 1 when certain
    rgba = np.empty((*winner.shape, 4), dtype=np.uint8)
    rgba[..., :3] = RGB[winner % len(RGB)]
    rgba[..., 3] = (255 * MAX_SHADE * np.clip(confidence, 0, 1) ** 0.7).astype(np.uint8)
    return rgba


def _image(rgba: np.ndarray, extent: Sequence[float]) -> dict:
    """An image trace whose pixel centres sit on the grid: row 0 at the bottom, as the grid's."""
    x0, x1, y0, y1 = extent
    h, w = rgba.shape[:2]
    dx, dy = (x1 - x0) / (w - 1), (y1 - y0) / (h - 1)
    return {
        "type": "image",
        "source": png_data_uri(rgba),
        "x0": x0,
        "dx": dx,
        "y0": y0,
        "dy": dy,
        "hoverinfo": "skip",
    }


def boundary_figure(
    probs: np.ndarray, points: LabelledPoints, show_test: bool = True, height: int = 520
) -> go.Figure:
    """The plane shaded by the predicted class, train points filled, test points hollow."""
    traces: list = [_image(boundary_rgba(probs), points.extent)]
    n = len(points.y_train) + (len(points.y_test) if show_test else 0)
    scatter = "scattergl" if n > WEBGL_ABOVE else "scatter"
    sets = [("train", points.X_train, points.y_train, "circle", 7)]
    if show_test:
        sets.append(("test", points.X_test, points.y_test, "circle-open", 8))
    for label, X, y, symbol, size in sets:
        for c in range(points.classes):
            mask = y == c
            traces.append(
                {
                    "type": scatter,
                    "x": X[mask, 0],
                    "y": X[mask, 1],
                    "mode": "markers",
                    "name": f"{label} · class {c}",
                    "legendgroup": label,
                    "marker": {
                        "color": CLASS_COLORS[c % len(CLASS_COLORS)],
                        "symbol": symbol,
                        "size": size,
                        "line": {"width": 1 if symbol == "circle" else 2, "color": "white"},
                    },
                    "hovertemplate": f"{label}, class {c}<br>(%{{x:.2f}}, %{{y:.2f}})<extra></extra>",
                }
            )
    x0, x1, y0, y1 = points.extent
    layout = layout_dict(height)
    layout |= {
        "xaxis": {"range": [x0, x1], "showgrid": False, "zeroline": False, "title": {"text": "x1"}},
        "yaxis": {
            "range": [y0, y1],
            "autorange": False,
            "showgrid": False,
            "zeroline": False,
            "scaleanchor": "x",
            "title": {"text": "x2"},
        },
        "margin": {"l": 40, "r": 10, "t": 10, "b": 40},
        "showlegend": True,
        "legend": {"orientation": "h", "y": -0.12, "font": {"size": 12}},
        "uirevision": "keep",  # zoom and legend clicks survive the frames
    }
    return fast_figure(traces, layout)


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


def neurons_figure(
    units: np.ndarray, per_row: int = 16, pixels: int = 3, bottom_up: bool = True
) -> go.Figure:
    """What each unit of one hidden layer outputs over the plane, as TF Playground shows it."""
    mosaic = neuron_mosaic(units, per_row, bottom_up=bottom_up)
    h, w = mosaic.shape[:2]
    layout = layout_dict(height=h * pixels + 10)
    layout |= {
        "xaxis": {"visible": False, "range": [-0.5, w - 0.5]},
        "yaxis": {"visible": False, "range": [h - 0.5, -0.5]},
        "margin": {"l": 0, "r": 0, "t": 5, "b": 5},
        "width": w * pixels,
    }
    image = {
        "type": "image",
        "source": png_data_uri(mosaic),
        "x0": 0,
        "dx": 1,
        "y0": 0,
        "dy": 1,
        "hoverinfo": "skip",
    }
    return fast_figure([image], layout)


def toy_gallery(sets: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> go.Figure:
    """One small scatter per named 2D data set (X, y), coloured by class."""
    kinds = list(sets)
    fig = make_subplots(rows=1, cols=len(kinds), subplot_titles=kinds, horizontal_spacing=0.02)
    for col, (X, y) in enumerate(sets.values(), start=1):
        fig.add_trace(
            go.Scatter(
                x=X[:, 0],
                y=X[:, 1],
                mode="markers",
                marker={"size": 5, "color": np.asarray(CLASS_COLORS)[y], "line": {"width": 0}},
                hoverinfo="skip",
            ),
            row=1,
            col=col,
        )
    fig.update_xaxes(visible=False, range=[-1.8, 1.8])
    fig.update_yaxes(visible=False, range=[-1.8, 1.8], scaleanchor="x", scaleratio=1)
    for col in range(2, len(kinds) + 1):
        fig.update_yaxes(scaleanchor=f"x{col}", row=1, col=col)
    return base_layout(fig, height=240)
