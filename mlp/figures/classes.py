"""Classes: the confusion matrix, a prediction's probabilities, digits side by side."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from mlp.figures.style import CLASS_COLORS, fast_figure, figure, layout_dict


def confusion_figure(matrix: np.ndarray, height: int = 300) -> go.Figure:
    """Counts with the true class down and the prediction across; the diagonal is right.

    Opaque cells, so plotly's automatic text colour (dark on light cells, white on dark ones)
    reads the same in the light and the dark theme; zeros are left blank so that the mistakes
    (the off-diagonal counts) stand out.
    """
    k = len(matrix)
    labels = [str(i) for i in range(k)]
    matrix = np.asarray(matrix)
    heat = {
        "type": "heatmap",
        "z": matrix,
        "x": labels,
        "y": labels,
        "zmin": 0,
        "colorscale": [[0, "#E4ECF3"], [1, "#4292C6"]],  # dark counts read at ≥ 5:1 on every cell
        "xgap": 1,
        "ygap": 1,
        "showscale": False,
        "text": np.where(matrix == 0, "", matrix.astype(str)),
        "texttemplate": "%{text}",
        "textfont": {"size": 16, "color": "#111418"},
        "hovertemplate": "true %{y}, predicted %{x}: %{z}<extra></extra>",
    }
    layout = layout_dict(height)
    layout |= {
        "xaxis": {
            "title": {"text": "predicted class"},
            "side": "bottom",
            "type": "category",
            "constrain": "domain",
        },
        "yaxis": {
            "title": {"text": "true class"},
            "autorange": "reversed",
            "type": "category",
            "scaleanchor": "x",
            "constrain": "domain",
        },
        "title": {"text": "Off the diagonal: mistakes", "x": 0},
        "margin": {"l": 50, "r": 10, "t": 40, "b": 40},
    }
    return fast_figure([heat], layout)


def probability_bars(probs: np.ndarray, height: int = 260) -> go.Figure:
    """P(digit) for 0-9, the winner highlighted."""
    winner = int(np.argmax(probs))
    top = set(np.argsort(probs)[-2:].tolist())  # the two likeliest labelled: more collide when narrow
    colors = [CLASS_COLORS[1] if d == winner else CLASS_COLORS[0] for d in range(10)]
    bars = {
        "type": "bar",
        "x": [str(d) for d in range(10)],
        "y": np.asarray(probs, dtype=np.float32),
        "marker": {"color": colors},
        "text": [f"{p:.0%}" if d in top and p >= 0.01 else "" for d, p in enumerate(probs)],
        "textposition": "outside",
        "textfont": {"size": 16},
        "cliponaxis": False,  # a 100% label above its bar, past the axis
        "hovertemplate": "P(%{x}) = %{y:.3f}<extra></extra>",
    }
    layout = layout_dict(height)
    layout |= {
        "yaxis": {"range": [0, 1.15], "tickformat": ".0%", "title": {"text": "probability"}},
        "xaxis": {  # every digit labelled, the winner included, however narrow the chart
            "title": {"text": "digit"},
            "type": "category",
            "tickmode": "array",
            "tickvals": [str(d) for d in range(10)],
        },
        "title": {"text": "How sure it is (tallest wins)", "x": 0},  # short: the chart can be narrow
        "margin": {"l": 50, "r": 10, "t": 40, "b": 40},
        # Plotly shrinks a bar's text to the bar's width (6 px in a narrow column): keep it legible.
        "uniformtext": {"minsize": 16, "mode": "show"},
    }
    return figure([bars], layout)


def digit_grid(images: np.ndarray, per_row: int = 10, gap: int = 2) -> np.ndarray:
    """Digits (n, 28, 28) uint8 tiled into one grayscale image, gaps in grey."""
    n = len(images)
    rows = -(-n // per_row)
    out = np.full((rows * (28 + gap) - gap, per_row * (28 + gap) - gap), 96, dtype=np.uint8)
    for i, image in enumerate(images):
        top, left = (i // per_row) * (28 + gap), (i % per_row) * (28 + gap)
        out[top : top + 28, left : left + 28] = image
    return out
