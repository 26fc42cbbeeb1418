"""A class board's picture: how a challenge's scores spread, and where its goal lies."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from mlp.figures.style import CLASS_COLORS, figure, layout_dict


def score_spread_figure(scores: Sequence[float], target: float, metric: str, height: int = 170) -> go.Figure:
    """A histogram of the students' best scores (test accuracy in %, or test loss), with the
    challenge's goal as a dashed line: how many are near it, and how far the rest are."""
    percent = metric == "test_acc"
    values = [100 * s if percent else s for s in scores]
    goal = 100 * target if percent else target
    bars = {
        "type": "histogram",
        "x": values,
        "nbinsx": 12,
        "marker": {"color": CLASS_COLORS[0]},
        "hovertemplate": "%{x}: %{y} students<extra></extra>",
    }
    layout = layout_dict(height)
    layout |= {
        "margin": {"l": 36, "r": 10, "t": 26, "b": 40},
        "bargap": 0.08,
        "xaxis": {"title": {"text": "test accuracy (%)" if percent else "test loss"}},
        "yaxis": {"title": {"text": "students"}, "rangemode": "tozero", "dtick": 1},
        "shapes": [
            {
                "type": "line",
                "x0": goal,
                "x1": goal,
                "y0": 0,
                "y1": 1,
                "yref": "paper",
                "line": {"color": CLASS_COLORS[1], "width": 3, "dash": "dash"},
            }
        ],
        "annotations": [
            {
                "x": goal,
                "y": 1,
                "yref": "paper",
                "text": "goal",
                "showarrow": False,
                "yanchor": "bottom",
                "font": {"color": CLASS_COLORS[1]},
            }
        ],
    }
    return figure([bars], layout)
