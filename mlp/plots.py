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


def base_layout(fig: go.Figure, height: int = 320) -> go.Figure:
    """Shared look: transparent background (light and dark themes), tight margins."""
    fig.update_layout(
        height=height,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        font=FONT,
        showlegend=False,
    )
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
