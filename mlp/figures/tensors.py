"""A tensor's values as a heatmap, and the activations' spread per layer."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from mlp.figures.style import CLASS_COLORS, base_layout, layout_dict

ONE_HOT_COLORS = ("#c8c8c8", CLASS_COLORS[0])  # 0 grey, 1 blue: dark text on one, light on the other


def number_text(value: float, spec: str = ".2f") -> str:
    """A number as the page prints it, never "-0.00": a value that rounds to zero has no sign."""
    text = format(float(value), spec)
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def is_discrete(value: np.ndarray) -> bool:
    """Labels (whole numbers) or a 0/1 matrix (one-hot, a ReLU mask): drawn as categories."""
    value = np.asarray(value)
    if value.dtype.kind in "iub":
        return True
    return value.size > 0 and bool(np.isin(value, (0.0, 1.0)).all()) and np.unique(value).size == 2


def _categories(matrix: np.ndarray) -> dict:
    """A categorical colour scale: one band per whole number, each printed as an integer."""
    top = int(matrix.max()) if matrix.size else 0
    binary = top <= 1 and matrix.dtype.kind == "f"  # one-hot or a mask: 0 and 1
    colors = ONE_HOT_COLORS if binary else [CLASS_COLORS[i % len(CLASS_COLORS)] for i in range(top + 1)]
    scale = []
    for i, color in enumerate(colors):  # hard edges at the half-way points: no blend between classes
        scale += [[i / len(colors), color], [(i + 1) / len(colors), color]]
    return {"colorscale": scale, "zmin": -0.5, "zmax": len(colors) - 0.5, "showscale": False}


# RdBu's and Blues' lighter tints only: dark numbers read at ≥ 5:1 on every cell, in either theme.
DIVERGING = [[0.0, "#4393C3"], [0.25, "#92C5DE"], [0.5, "#F7F7F7"], [0.75, "#F4A582"], [1.0, "#D6604D"]]
SEQUENTIAL = [[0.0, "#F7FBFF"], [1.0, "#4292C6"]]
NUMBER_INK = "#111418"


def tensor_heatmap(
    value: np.ndarray,
    name: str,
    symbols: Sequence[str] = (),
    max_rows: int = 96,
    max_cols: int = 160,
    annotate_up_to: int = 120,
    annotate_cols: int = 12,
    scale_with_numbers: bool = True,
    text_px: int | None = None,
    max_height: int = 360,
) -> go.Figure:
    """A matrix (or vector, as one row) as a heatmap titled with its shape and value range.

    Signed values use a diverging scale centred on 0; values in [0, 1] (probabilities) a
    sequential one; labels and 0/1 matrices (one-hot) one colour per category, printed as
    integers. Large tensors show every k-th row and column; small ones print each value (up to
    `annotate_up_to` values and `annotate_cols` columns: each number needs room to be read);
    without `scale_with_numbers`, printed numbers leave out the colour bar and take its room.
    `text_px` sizes the printed numbers (and leaves out those whose rows are too thin for it),
    `max_height` caps the figure's height.
    """
    full = np.asarray(value)
    discrete = is_discrete(full)
    matrix = np.atleast_2d(full.astype(np.float64)) + 0.0  # + 0.0 turns -0.0 into 0.0
    row_step = -(-matrix.shape[0] // max_rows)
    col_step = -(-matrix.shape[1] // max_cols)
    shown = matrix[::row_step, ::col_step]
    lo, hi = float(matrix.min()), float(matrix.max())
    unit_interval = lo >= 0 and hi <= 1
    heat: dict = {
        "z": shown,
        "colorscale": SEQUENTIAL if unit_interval else DIVERGING,
        "showscale": True,
        "colorbar": {"thickness": 12, "len": 0.9, "nticks": 4},  # a few labels that never overlap
        "hovertemplate": f"{name}[%{{y}}, %{{x}}] = %{{text}}<extra></extra>",
        "x": np.arange(0, matrix.shape[1], col_step),
        "y": np.arange(0, matrix.shape[0], row_step),
    }
    if discrete:
        heat |= _categories(shown)
    elif unit_interval:
        heat |= {"zmin": 0.0, "zmax": 1.0}
    else:
        heat |= {"zmid": 0.0}
    heat["text"] = np.vectorize(lambda v: number_text(v, ".0f" if discrete else ".4g"))(shown)
    height = int(min(max_height, max(150, 70 + 26 * shown.shape[0])))
    size = text_px or (14 if discrete or shown.shape[1] <= 4 else 12)
    rows_fit = (height - 66) / shown.shape[0] >= 1.2 * size  # 66 px: the title and the index axis
    if shown.size <= annotate_up_to and shown.shape[1] <= annotate_cols and rows_fit:
        heat |= {
            "customdata": heat["text"],  # the hover keeps 4 digits; the cells print 2
            "hovertemplate": f"{name}[%{{y}}, %{{x}}] = %{{customdata}}<extra></extra>",
            "text": np.vectorize(lambda v: number_text(v, ".0f" if discrete else ".2f"))(shown),
            "texttemplate": "%{text}",
            "textfont": {"size": size, "color": NUMBER_INK},
        }
        heat["showscale"] = heat["showscale"] and scale_with_numbers
    shape = "×".join(str(s) for s in full.shape) or "scalar"
    if discrete:
        what = "0/1" if hi <= 1 and full.dtype.kind == "f" else f"labels {int(lo)}..{int(hi)}"
    else:
        what = f"[{number_text(lo, '.3g')}, {number_text(hi, '.3g')}]"

    def index_axis(count: int, step: int, most: int = 8) -> dict:  # whole-number indices, `most` at most
        return {"tickformat": "d", "tick0": 0, "dtick": step * max(1, -(-count // (most * step)))}

    tall = max(2, min(8, int((height - 66) / (1.5 * (text_px or 12)))))  # row indices that don't overlap

    sampled = " · sampled" if row_step > 1 or col_step > 1 else ""  # the hover shows the true indices
    layout = layout_dict(height=height)
    layout |= {
        "title": {"text": f"<b>{name}</b> {shape} · {what}{sampled}", "font": {"size": 14}},
        "margin": {"l": 40, "r": 10, "t": 36, "b": 30},
        "yaxis": {
            "autorange": "reversed",
            "title": {"text": symbols[0] if len(symbols) == 2 else ""},
            "showgrid": False,
            "showticklabels": full.ndim == 2,
        }
        | index_axis(matrix.shape[0], row_step, tall),
        "xaxis": {"title": {"text": symbols[-1] if symbols else ""}, "showgrid": False}
        | index_axis(matrix.shape[1], col_step),
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
    fig.update_layout(
        showlegend=True,
        legend={"orientation": "h", "y": -0.25, "yanchor": "top"},  # the title has the top
        title={"text": "Activation spread per layer: flat is healthy, a slope vanishes or explodes", "x": 0},
    )
    return fig
