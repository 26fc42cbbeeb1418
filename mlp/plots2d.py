"""Figures of the 2D playground, built from NumPy arrays in one constructor call each.

The decision boundary and the neuron maps travel as small PNG images (a few KB) rather than
as arrays of numbers, and the points as WebGL scatters, so a frame stays light on the wire.
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from mlp.playground import Points
from mlp.plots import CLASS_COLORS, fast_figure, layout_dict

RGB = np.array([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in CLASS_COLORS], dtype=np.float64)
NEGATIVE, POSITIVE = RGB[0], RGB[1]  # blue for < 0, orange for > 0 in the neuron maps
MAX_SHADE = 0.55  # the most opaque a region gets: points must stay visible on top


def png_data_uri(rgba: np.ndarray) -> str:
    """An (H, W, 4) uint8 image as a data: URI holding a PNG (written here: zlib, no extra deps)."""
    height, width, _ = rgba.shape
    raw = b"".join(b"\x00" + row.tobytes() for row in np.ascontiguousarray(rgba, dtype=np.uint8))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 1))
        + chunk(b"IEND", b"")
    )
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


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


WEBGL_ABOVE = 1000  # points; below this an SVG scatter draws faster than starting WebGL


def boundary_figure(
    probs: np.ndarray, points: Points, show_test: bool = True, height: int = 520
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


def curves_figure(
    curves: dict[str, np.ndarray], twin: dict[str, np.ndarray] | None = None, height: int = 300
):
    """Loss (log scale) and accuracy per epoch, train solid and test dotted; the twin dashed."""
    lines = [
        ("train_loss", "train loss", "x", "y", CLASS_COLORS[0], "solid"),
        ("test_loss", "test loss", "x", "y", CLASS_COLORS[1], "dot"),
        ("train_acc", "train accuracy", "x2", "y2", CLASS_COLORS[0], "solid"),
        ("test_acc", "test accuracy", "x2", "y2", CLASS_COLORS[1], "dot"),
    ]
    traces = [
        {
            "type": "scatter",
            "x": curves["epoch"].astype(np.float32),
            "y": curves[key].astype(np.float32),
            "name": name,
            "xaxis": xa,
            "yaxis": ya,
            "mode": "lines",
            "line": {"color": color, "dash": dash, "width": 2.5},
        }
        for key, name, xa, ya, color, dash in lines
    ]
    if twin is not None:
        traces.append(
            {
                "type": "scatter",
                "x": twin["epoch"].astype(np.float32),
                "y": twin["train_loss"].astype(np.float32),
                "name": "train loss, other engine",
                "xaxis": "x",
                "yaxis": "y",
                "mode": "lines",
                "line": {"color": CLASS_COLORS[2], "dash": "dash", "width": 2},
            }
        )
    layout = layout_dict(height)
    layout |= {
        "xaxis": {"domain": [0, 0.46], "title": {"text": "epoch"}},
        "xaxis2": {"domain": [0.56, 1], "title": {"text": "epoch"}, "anchor": "y2"},
        "yaxis": {"type": "log", "title": {"text": "loss"}, "exponentformat": "power", "dtick": "D2"},
        "yaxis2": {"range": [0, 1.02], "title": {"text": "accuracy"}, "anchor": "x2", "tickformat": ".0%"},
        "showlegend": True,
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom", "font": {"size": 12}},
        "margin": {"l": 50, "r": 10, "t": 60, "b": 40},
        "uirevision": "keep",
    }
    return fast_figure(traces, layout)


def confusion_figure(matrix: np.ndarray, height: int = 300) -> go.Figure:
    """Counts with the true class down and the prediction across; the diagonal is right."""
    k = len(matrix)
    labels = [str(i) for i in range(k)]
    heat = {
        "type": "heatmap",
        "z": matrix,
        "x": labels,
        "y": labels,
        "colorscale": [[0, "rgba(0,114,178,0.04)"], [1, "rgba(0,114,178,0.85)"]],
        "showscale": False,
        "text": matrix,
        "texttemplate": "%{text}",
        "textfont": {"size": 14},
        "hovertemplate": "true %{y}, predicted %{x}: %{z}<extra></extra>",
    }
    layout = layout_dict(height)
    layout |= {
        "xaxis": {"title": {"text": "predicted"}, "side": "bottom", "type": "category"},
        "yaxis": {"title": {"text": "true"}, "autorange": "reversed", "type": "category", "scaleanchor": "x"},
        "margin": {"l": 50, "r": 10, "t": 10, "b": 40},
    }
    return fast_figure([heat], layout)


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
