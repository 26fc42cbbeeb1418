"""Plotly figures from plain arrays. No training in here, and no streamlit."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from mlp.data import make_2d

# Okabe-Ito: distinguishable with the common colour-vision deficiencies and on a projector.
CLASS_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442", "#000000")
FONT = {"family": "Source Sans Pro, Inter, sans-serif", "size": 14}


def layout_dict(height: int = 320) -> dict:
    """Shared look: transparent background (light and dark themes), tight margins."""
    return {
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
        "font": FONT,
        "showlegend": False,
        # Streamlit themes the chart in the browser; skipping plotly's default template saves
        # a deep copy of it per figure (about 0.6 ms each).
        "template": "none",
    }


def fast_figure(data: list[dict], layout: dict) -> go.Figure:
    """A figure from plain trace and layout dicts, without plotly's per-property validation.

    Validation costs about 4x the build for a frame of the playground; the dicts here are
    written by this module and tests validate every figure once (`go.Figure(fig.to_dict())`).
    """
    return go.Figure(data=data, layout=layout, _validate=False)


def base_layout(fig: go.Figure, height: int = 320) -> go.Figure:
    """Apply the shared look to a figure built step by step."""
    fig.update_layout(**layout_dict(height))
    return fig


def toy_gallery(
    kinds: Sequence[str] = ("blobs", "moons", "circles", "xor", "spiral"),
    n: int = 300,
    seed: int = 0,
) -> go.Figure:
    """One small scatter per 2D toy set, coloured by class."""
    fig = make_subplots(rows=1, cols=len(kinds), subplot_titles=list(kinds), horizontal_spacing=0.02)
    for col, kind in enumerate(kinds, start=1):
        classes = 3 if kind in ("blobs", "spiral") else 2
        X, y = make_2d(kind, n, noise=0.1, classes=classes, seed=seed)
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


def tensor_heatmap(
    value: np.ndarray,
    name: str,
    symbols: Sequence[str] = (),
    max_rows: int = 96,
    max_cols: int = 160,
    annotate_up_to: int = 120,
) -> go.Figure:
    """A matrix (or vector, as one row) as a heatmap titled with its shape and value range.

    Signed values use a diverging scale centred on 0; values in [0, 1] (probabilities, one-hot)
    a sequential one. Large tensors show every k-th row and column; small ones print each value.
    """
    full = np.asarray(value, dtype=np.float64)
    matrix = np.atleast_2d(full)
    row_step = -(-matrix.shape[0] // max_rows)
    col_step = -(-matrix.shape[1] // max_cols)
    shown = matrix[::row_step, ::col_step]
    lo, hi = float(full.min()), float(full.max())
    unit_interval = lo >= 0 and hi <= 1
    heat: dict = {
        "z": shown,
        "colorscale": [[0, "#f7fbff"], [1, "#08519c"]] if unit_interval else "RdBu_r",
        "showscale": True,
        "colorbar": {"thickness": 10, "len": 0.9},
        "hovertemplate": f"{name}[%{{y}}, %{{x}}] = %{{z:.4g}}<extra></extra>",
        "x": np.arange(0, matrix.shape[1], col_step),
        "y": np.arange(0, matrix.shape[0], row_step),
    }
    if unit_interval:
        heat |= {"zmin": 0.0, "zmax": 1.0}
    else:
        heat |= {"zmid": 0.0}
    if shown.size <= annotate_up_to:
        text = np.vectorize(lambda v: f"{v:.2f}")(shown)
        heat |= {
            "text": text,
            "texttemplate": "%{text}",
            "textfont": {"size": 10 if shown.shape[1] > 4 else 12},
        }
    shape = "×".join(str(s) for s in full.shape) or "scalar"
    sampled = " · sampled" if row_step > 1 or col_step > 1 else ""  # the hover shows the true indices
    layout = layout_dict(height=int(min(360, max(150, 70 + 26 * shown.shape[0]))))
    layout |= {
        "title": {"text": f"<b>{name}</b> {shape} · [{lo:.3g}, {hi:.3g}]{sampled}", "font": {"size": 13}},
        "margin": {"l": 40, "r": 10, "t": 36, "b": 30},
        "yaxis": {
            "autorange": "reversed",
            "title": {"text": symbols[0] if len(symbols) == 2 else ""},
            "showgrid": False,
            "showticklabels": full.ndim == 2,
        },
        "xaxis": {"title": {"text": symbols[-1] if symbols else ""}, "showgrid": False},
    }
    # One constructor call: plotly validates each update_* call separately, which costs ms.
    return go.Figure(data=[go.Heatmap(**heat)], layout=layout)


def spread_figure(spread: dict[str, Sequence[float]], activation: str) -> go.Figure:
    """Std of the activations per layer, one line per init scheme, log scale."""
    labels = {"kaiming": "He / Kaiming", "xavier": "Xavier / Glorot", "normal": "N(0, 0.02)"}
    fig = go.Figure()
    for i, (init, stds) in enumerate(spread.items()):
        fig.add_trace(
            go.Scatter(
                x=np.arange(1, len(stds) + 1),
                y=np.maximum(np.asarray(stds), 1e-12),
                mode="lines+markers",
                name=labels.get(init, init),
                line={"color": CLASS_COLORS[i], "width": 3},
            )
        )
    fig.update_yaxes(type="log", title=f"std of {activation}(z) at the layer", exponentformat="power")
    fig.update_xaxes(title="hidden layer", dtick=1)
    base_layout(fig, height=380)
    fig.update_layout(showlegend=True, legend={"orientation": "h", "y": 1.12})
    return fig
