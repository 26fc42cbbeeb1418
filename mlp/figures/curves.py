"""Curves over training: loss and accuracy (a regression's: MSE and R²) side by side, the learning
rate, runs compared."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from mlp.figures.style import CLASS_COLORS, fast_figure, figure, layout_dict


@dataclass(frozen=True)
class Curve:
    """One line on both panels: its loss and its accuracy over the same x."""

    name: str  # "train", "test", "validation", ...
    x: np.ndarray  # epochs (fractional within epochs)
    loss: np.ndarray
    acc: np.ndarray  # or a regression's R²
    color: str
    dash: str = "solid"
    markers: bool = False


def _line(x, y, name: str, panel: int, color: str, dash: str = "solid", markers: bool = False) -> dict:
    return {
        "type": "scatter",
        "x": np.asarray(x, dtype=np.float32),
        "y": np.asarray(y, dtype=np.float32),
        "name": name,
        "xaxis": "x" if panel == 1 else "x2",
        "yaxis": "y" if panel == 1 else "y2",
        "mode": "lines+markers" if markers else "lines",
        "line": {"color": color, "dash": dash, "width": 2.5},
        "marker": {"size": 7},
        "legendgroup": name,
        "showlegend": panel == 1,
    }


def log_ticks(values: Sequence[np.ndarray], most: int = 6) -> dict:
    """A log axis labelled at whole decades only, as plain numbers (0.01, 0.1, 1, 10, 1e+03):
    no minor labels to misread, and a readable range when there is no data (0.01 to 10)."""
    finite = np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in values] or [np.empty(0)])
    finite = finite[np.isfinite(finite) & (finite > 0)]
    low, high = (np.log10(finite.min()), np.log10(finite.max())) if finite.size else (-2.0, 1.0)
    first, last = int(np.floor(low)), int(np.ceil(high))
    last = max(last, first + 1)
    every = int(np.ceil((last - first + 1) / most))
    decades = range(first, last + 1, every)
    return {
        "type": "log",
        "range": [first - 0.05, last + 0.05],
        "tickvals": [10.0**k for k in decades],
        "ticktext": [f"{10.0**k:g}" for k in decades],
    }


def loss_accuracy_figure(curves: Sequence[Curve], height: int = 320, regress: bool = False) -> go.Figure:
    """Loss (log scale) on the left, accuracy on the right, one legend entry per curve. `regress`:
    the loss is the MSE and the right panel R² (1 at a perfect fit, 0 for predicting the mean).

    Each panel says above it what it shows and which way is good (the loss's unit on its outer
    axis, the accuracy's in its % ticks); the legend sits below, so no title lands on the other
    panel.
    """
    traces = [_line(c.x, c.loss, c.name, 1, c.color, c.dash, c.markers) for c in curves]
    loss_title = ("MSE" if regress else "cross-entropy") + " (log scale)" if height >= 280 else "log scale"
    traces += [_line(c.x, c.acc, c.name, 2, c.color, c.dash, c.markers) for c in curves]
    panel = {"xref": "paper", "yref": "paper", "y": 1.0, "yanchor": "bottom", "showarrow": False}
    # Few, upright epoch ticks: in a narrow panel at presenter size, plotly would turn many
    # labels on their side, and they would push the axis title into the legend below; upright,
    # four labels of three digits ran into each other in the playground's panel at 1280 px.
    epoch_axis = {"title": {"text": "epoch"}, "rangemode": "tozero", "nticks": 3, "tickangle": 0}
    layout = layout_dict(height)
    layout |= {
        "xaxis": epoch_axis | {"domain": [0, 0.46]},
        "xaxis2": epoch_axis | {"domain": [0.54, 1], "anchor": "y2"},
        # A short panel (the playground's, beside the plane) has room for a short title only.
        "yaxis": log_ticks([c.loss for c in curves], most=6 if height >= 280 else 4)
        | {"title": {"text": loss_title}},
        # The accuracy's ticks on its right: at any font size they stay clear of the loss panel.
        "yaxis2": {"range": [0, 1.02], "anchor": "x2", "tickformat": ".0%", "side": "right"},
        "annotations": [
            panel | {"x": 0, "xanchor": "left", "text": "<b>Loss</b> ↓"},
            panel | {"x": 0.54, "xanchor": "left", "text": "<b>R²</b> ↑" if regress else "<b>Accuracy</b> ↑"},
        ],
        "showlegend": True,
        # Below the axis titles, the same 90 px under the axes at any height (paper units scale with it).
        "legend": {"orientation": "h", "x": 0, "y": -90 / (height - 40), "yanchor": "top"},
        "margin": {"l": 50, "r": 50, "t": 30, "b": 10},
        "uirevision": "keep",
    }
    if regress:  # R² may start below 0: the panel shows down to -1 at most
        scores = np.concatenate([np.asarray(c.acc, dtype=np.float64) for c in curves] or [np.empty(0)])
        low = max(-1.0, min(0.0, float(np.nanmin(scores)) if np.isfinite(scores).any() else 0.0))
        layout["yaxis2"] |= {"range": [low - 0.02, 1.02], "tickformat": ".1f"}
    return fast_figure(traces, layout)


def epoch_curves_figure(
    curves: Mapping[str, np.ndarray],
    twin: Mapping[str, np.ndarray] | None = None,
    held_out: str = "test",
    height: int = 300,
    train: str = "train",
    regress: bool = False,
) -> go.Figure:
    """Per-epoch train and held-out curves (a History's epoch_arrays); a twin's train loss dashed.
    `train` names the train curves (say, that its loss includes a penalty); `regress`: MSE and R²."""
    lines = [
        Curve(train, curves["epoch"], curves["train_loss"], curves["train_acc"], CLASS_COLORS[0]),
        Curve(held_out, curves["epoch"], curves["val_loss"], curves["val_acc"], CLASS_COLORS[1], "dot"),
    ]
    if twin is not None:
        lines.append(
            Curve(
                "train, other engine",
                twin["epoch"],
                twin["train_loss"],
                twin["train_acc"],
                CLASS_COLORS[2],
                "dash",
            )
        )
    return loss_accuracy_figure(lines, height=height, regress=regress)


def live_curves_figure(train: Mapping[str, np.ndarray], val: Mapping[str, np.ndarray]) -> go.Figure:
    """Train curves as reported within epochs, validation once per epoch (with markers)."""
    lines = [
        Curve("train", train["epoch"], train["train_loss"], train["train_acc"], CLASS_COLORS[0]),
        Curve(
            "validation", val["epoch"], val["val_loss"], val["val_acc"], CLASS_COLORS[1], "dot", markers=True
        ),
    ]
    return loss_accuracy_figure(lines, height=320)


def lr_figure(epochs: np.ndarray, lrs: np.ndarray, now: float, height: int = 220) -> go.Figure:
    """The learning rate over the run, with the current position marked."""
    current = float(np.interp(now, epochs, lrs)) if len(epochs) else 0.0
    traces = [
        _line(epochs, lrs, "learning rate", 1, CLASS_COLORS[0]),
        _line([now], [current], "now", 1, CLASS_COLORS[1], markers=True),
    ]
    layout = layout_dict(height)
    layout |= {
        "xaxis": {"title": {"text": "epoch"}, "rangemode": "tozero"},
        "yaxis": {"title": {"text": "learning rate"}, "exponentformat": "e", "rangemode": "tozero"},
        "title": {"text": "The learning rate over the run; the dot is where training is now", "x": 0},
        "margin": {"l": 60, "r": 10, "t": 40, "b": 40},
    }
    return fast_figure(traces, layout)


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
        "yaxis": {"title": {"text": "validation accuracy (%)"}, "tickformat": ".1%"},
        "title": {"text": "Validation accuracy of each run of this session: higher is better", "x": 0},
        "showlegend": True,
        "margin": {"l": 60, "r": 10, "t": 40, "b": 40},
    }
    return figure(traces, layout)
