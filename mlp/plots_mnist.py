"""Figures of the MNIST page: live curves, the learning-rate schedule, probability bars."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from mlp.plots import CLASS_COLORS, fast_figure, layout_dict


def _line(x, y, name, axis: str, color: str, dash: str = "solid", mode: str = "lines") -> dict:
    return {
        "type": "scatter",
        "x": np.asarray(x, dtype=np.float32),
        "y": np.asarray(y, dtype=np.float32),
        "name": name,
        "xaxis": "x" if axis == "1" else "x2",
        "yaxis": "y" if axis == "1" else "y2",
        "mode": mode,
        "line": {"color": color, "dash": dash, "width": 2.5},
        "marker": {"size": 7},
    }


def live_curves_figure(curves: dict[str, np.ndarray], height: int = 320) -> go.Figure:
    """Loss and accuracy by (fractional) epoch: train as reported within epochs, validation per epoch."""
    traces = [
        _line(curves["report_epoch"], curves["train_loss"], "train loss", "1", CLASS_COLORS[0]),
        _line(
            curves["val_epoch"],
            curves["val_loss"],
            "validation loss",
            "1",
            CLASS_COLORS[1],
            "dot",
            "lines+markers",
        ),
        _line(curves["report_epoch"], curves["train_acc"], "train accuracy", "2", CLASS_COLORS[0]),
        _line(
            curves["val_epoch"],
            curves["val_acc"],
            "validation accuracy",
            "2",
            CLASS_COLORS[1],
            "dot",
            "lines+markers",
        ),
    ]
    layout = layout_dict(height)
    layout |= {
        "xaxis": {"domain": [0, 0.46], "title": {"text": "epoch"}, "rangemode": "tozero"},
        "xaxis2": {"domain": [0.56, 1], "title": {"text": "epoch"}, "anchor": "y2", "rangemode": "tozero"},
        "yaxis": {"type": "log", "title": {"text": "loss"}, "exponentformat": "power", "dtick": "D2"},
        "yaxis2": {"title": {"text": "accuracy"}, "anchor": "x2", "tickformat": ".0%"},
        "showlegend": True,
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
        "margin": {"l": 50, "r": 10, "t": 60, "b": 40},
        "uirevision": "keep",
    }
    return fast_figure(traces, layout)


def lr_figure(epochs: np.ndarray, lrs: np.ndarray, now: float, height: int = 220) -> go.Figure:
    """The learning rate over the run, with the current position marked."""
    current = float(np.interp(now, epochs, lrs)) if len(epochs) else 0.0
    traces = [
        _line(epochs, lrs, "learning rate", "1", CLASS_COLORS[0]),
        _line([now], [current], "now", "1", CLASS_COLORS[1], mode="markers"),
    ]
    layout = layout_dict(height)
    layout |= {
        "xaxis": {"title": {"text": "epoch"}, "rangemode": "tozero"},
        "yaxis": {"title": {"text": "learning rate"}, "exponentformat": "e", "rangemode": "tozero"},
        "margin": {"l": 60, "r": 10, "t": 10, "b": 40},
    }
    return fast_figure(traces, layout)


def probability_bars(probs: np.ndarray, height: int = 260) -> go.Figure:
    """P(digit) for 0-9, the winner highlighted."""
    winner = int(np.argmax(probs))
    colors = [CLASS_COLORS[1] if d == winner else CLASS_COLORS[0] for d in range(10)]
    bars = {
        "type": "bar",
        "x": [str(d) for d in range(10)],
        "y": np.asarray(probs, dtype=np.float32),
        "marker": {"color": colors},
        "text": [f"{p:.0%}" if p >= 0.01 else "" for p in probs],
        "textposition": "outside",
        "hovertemplate": "P(%{x}) = %{y:.3f}<extra></extra>",
    }
    layout = layout_dict(height)
    layout |= {
        "yaxis": {"range": [0, 1.15], "tickformat": ".0%", "title": {"text": "probability"}},
        "xaxis": {"title": {"text": "digit"}, "type": "category"},
        "margin": {"l": 50, "r": 10, "t": 10, "b": 40},
    }
    return fast_figure([bars], layout)


def digit_grid(images: np.ndarray, per_row: int = 10, gap: int = 2) -> np.ndarray:
    """Digits (n, 28, 28) uint8 tiled into one grayscale image, gaps in grey."""
    n = len(images)
    rows = -(-n // per_row)
    out = np.full((rows * (28 + gap) - gap, per_row * (28 + gap) - gap), 96, dtype=np.uint8)
    for i, image in enumerate(images):
        top, left = (i // per_row) * (28 + gap), (i % per_row) * (28 + gap)
        out[top : top + 28, left : left + 28] = image
    return out


def compare_figure(runs, height: int = 320) -> go.Figure:
    """Validation accuracy by epoch, one line per run of the session."""
    traces = [
        {
            "type": "scatter",
            "x": run.curve[0],
            "y": run.curve[1],
            "name": run.name,
            "mode": "lines+markers",
            "line": {"color": CLASS_COLORS[i % len(CLASS_COLORS)], "width": 2.5},
        }
        for i, run in enumerate(runs)
    ]
    layout = layout_dict(height)
    layout |= {
        "xaxis": {"title": {"text": "epoch"}},
        "yaxis": {"title": {"text": "validation accuracy"}, "tickformat": ".1%"},
        "showlegend": True,
        "margin": {"l": 60, "r": 10, "t": 10, "b": 40},
    }
    return fast_figure(traces, layout)
