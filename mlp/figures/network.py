"""The network view as SVG: units as small maps over the plane, weights as edges (colour = sign,
thickness = size, dashed = exactly 0), TensorFlow Playground style; and the hidden-space view
as a plotly figure."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np
import plotly.graph_objects as go

from mlp.figures.plane import boundary_rgba, neuron_mosaic
from mlp.figures.style import CLASS_COLORS, NEGATIVE, POSITIVE, base_layout, png_data_uri

EDGE_POSITIVE = "rgb({},{},{})".format(*POSITIVE)  # the same colours as the unit maps
EDGE_NEGATIVE = "rgb({},{},{})".format(*NEGATIVE)
# A weight that is exactly 0 is no connection: a thin, faint, dashed trace of where one was.
ZERO_EDGE = 'stroke="currentColor" stroke-width="0.8" stroke-opacity="0.3" stroke-dasharray="4 5"'
WIDTH, HEIGHT = 1000, 560  # the drawing's own units; it scales to its column
# The smaller labels (unit names, counts, the legend) against `font`: at the playground's sizes
# and a 1280 px screen they draw at 11.5 px (16.8 in projector mode; tests/test_legibility.py).
SMALL = 0.9


def unit_image(unit: np.ndarray) -> str:
    """One unit's (r, r) map as a PNG data URI, blue < 0 < orange, scaled by its largest |value|."""
    return png_data_uri(neuron_mosaic(unit[None], per_row=1))


def _text(x: float, y: float, s: str, size: float, anchor: str = "middle", **attrs: str) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size:.1f}" text-anchor="{anchor}" '
        f'fill="currentColor"{extra}>{escape(s)}</text>'
    )


def network_svg(
    widths: Sequence[int],
    maps: Sequence[np.ndarray],
    weights: Sequence[np.ndarray],
    dead: Sequence[np.ndarray],
    labels: Sequence[Sequence[str]],
    font: float = 15.0,
    interactive: bool = False,
    selected: tuple[int, int] | None = None,
) -> str:
    """The whole network: one column per layer (inputs, hidden layers, outputs), each shown unit
    a tile of what it outputs over the plane, an edge per weight between shown units.

    Units beyond those shown are counted under their column ("+ 112 more"). Dead ReLU units
    (0 for every training point) are crossed out. `font` is the labels' size in the drawing's
    units (it scales with the drawing: presenter mode passes a larger one).
    """
    columns = len(maps)
    most = max(len(m) for m in maps)
    top, bottom = 2.2 * font, 2.6 * font
    room = HEIGHT - top - bottom
    pitch = room / most  # vertical room per unit
    tile = min(48.0, 0.86 * pitch)
    step_x = (WIDTH - 2 * 60) / max(columns - 1, 1)
    xs = [60 + i * step_x for i in range(columns)]

    def ys(n: int, col: int) -> list[float]:
        # The named columns (inputs, outputs) spread their few units so that their labels don't
        # overlap, however many units a hidden layer shows.
        gap = pitch if 0 < col < columns - 1 else max(pitch, min(1.25 * font * SMALL, room / max(n, 1)))
        first = top + (room - (n - 1) * gap - tile) / 2
        return [first + j * gap for j in range(n)]

    edges, tiles, texts, targets, buttons = [], [], [], [], []
    for i, W in enumerate(weights):  # W: (shown_out, shown_in)
        scale = float(np.abs(W).max()) or 1.0
        y_in, y_out = ys(W.shape[1], i), ys(W.shape[0], i + 1)
        for o in range(W.shape[0]):
            for k in range(W.shape[1]):
                w = float(W[o, k]) / scale
                ends = f'x1="{xs[i] + tile / 2:.1f}" y1="{y_in[k] + tile / 2:.1f}" ' + (
                    f'x2="{xs[i + 1] - tile / 2:.1f}" y2="{y_out[o] + tile / 2:.1f}"'
                )
                targets.append(
                    f'<line {ends} class="edge" data-edge="{i + 1},{o},{k}" stroke="transparent" '
                    f'stroke-width="{max(8.0, 0.3 * pitch):.0f}"><title>weight {float(W[o, k]):.3f}</title>'
                    "</line>"
                )
                if w == 0:  # exactly 0 (L1's proximal step puts weights there): no connection left
                    edges.append(f"<line {ends} {ZERO_EDGE}/>")
                    continue
                colour = EDGE_POSITIVE if w > 0 else EDGE_NEGATIVE
                edges.append(
                    f'<line {ends} stroke="{colour}" stroke-width="{0.4 + 4.0 * abs(w):.2f}" '
                    f'stroke-opacity="{0.15 + 0.75 * abs(w):.2f}"/>'
                )
    for i, (units, names) in enumerate(zip(maps, labels, strict=True)):
        x = xs[i] - tile / 2
        for j, y in enumerate(ys(len(units), i)):
            tiles.append(
                f'<image href="{unit_image(units[j])}" x="{x:.1f}" y="{y:.1f}" width="{tile:.1f}" '
                f'height="{tile:.1f}" style="image-rendering: pixelated"/>'
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{tile:.1f}" height="{tile:.1f}" fill="none" '
                f'stroke="currentColor" stroke-opacity="0.35"/>'
            )
            if i > 0:
                name = f"output: {names[j]}" if i == columns - 1 else f"layer {i}, unit {names[j]}"
                pressed = "true" if selected == (i, j) else "false"
                buttons.append(
                    f'<rect class="unit" role="button" tabindex="0" aria-pressed="{pressed}" '
                    f'aria-label="{escape(name)}" data-layer="{i}" data-unit="{j}" x="{x - 3:.1f}" '
                    f'y="{y - 3:.1f}" width="{tile + 6:.1f}" height="{tile + 6:.1f}" rx="4" '
                    'fill="transparent"/>'
                )
            if dead[i][j]:
                tiles.append(
                    f'<path d="M{x:.1f},{y:.1f} l{tile:.1f},{tile:.1f} M{x + tile:.1f},{y:.1f} '
                    f'l{-tile:.1f},{tile:.1f}" stroke="currentColor" stroke-width="2" stroke-opacity="0.7"/>'
                )
            if i in (0, columns - 1):  # inputs and outputs are named; hidden units are numbered
                side, anchor = (-tile / 2 - 6, "end") if i == 0 else (tile / 2 + 6, "start")
                texts.append(_text(xs[i] + side, y + tile / 2 + font / 3, names[j], font * SMALL, anchor))
        title = "inputs" if i == 0 else "outputs" if i == columns - 1 else f"layer {i}"
        texts.append(_text(xs[i], font * 1.2, title, font, font_weight="600"))
        if widths[i] > len(units):
            texts.append(
                _text(xs[i], HEIGHT - bottom + 1.3 * font, f"+ {widths[i] - len(units)} more", font * SMALL)
            )
        elif 0 < i < columns - 1:
            texts.append(_text(xs[i], HEIGHT - bottom + 1.3 * font, f"{widths[i]} units", font * SMALL))
    # Short enough to fit at a large font: a narrow column shows the drawing small.
    legend = "weights: orange +, blue −, thicker = larger · × = a dead unit"
    texts.append(_text(WIDTH / 2, HEIGHT - 0.4 * font, legend, font * SMALL, fill_opacity="0.85"))
    right = max(WIDTH + 40, xs[-1] + 30 + 3.3 * font)  # room for "class 9" right of the outputs
    box = f'viewBox="-40 0 {right + 40:.0f} {HEIGHT}"'
    picture = (
        f'role="img" aria-label="The network: units as maps over the plane, weights as edges" '
        f'font-family="Source Sans Pro, sans-serif">{"".join(edges)}{"".join(tiles)}{"".join(texts)}</svg>'
    )
    if not interactive:
        return f'<svg {box} width="100%" xmlns="http://www.w3.org/2000/svg" {picture}'
    return (
        f'<svg {box} width="100%" xmlns="http://www.w3.org/2000/svg" role="group" '
        f'aria-label="The network: pick a unit to see it on the plane, an edge to set its weight">'
        f'<svg {box} x="-40" y="0" width="{right + 40:.0f}" height="{HEIGHT}" {picture}'
        f"{''.join(targets)}{''.join(buttons)}</svg>"
    )


def _backdrop(fig: go.Figure, rgba: np.ndarray, extent: Sequence[float]) -> None:
    """An (H, W, 4) image, top row first, stretched over the axes' extent, under the traces."""
    x0, x1, y0, y1 = extent
    fig.add_layout_image(
        source=png_data_uri(rgba),
        xref="x",
        yref="y",
        x=x0,
        y=y1,
        sizex=x1 - x0,
        sizey=y1 - y0,
        sizing="stretch",
        layer="below",
    )
    fig.update_xaxes(range=[x0, x1], showgrid=False, zeroline=False)
    fig.update_yaxes(range=[y0, y1], showgrid=False, zeroline=False)


def unit_figure(unit: np.ndarray, extent: Sequence[float], title: str, height: int = 360) -> go.Figure:
    """One unit's (r, r) map (row 0 at the bottom), large, over the plane: blue < 0 < orange."""
    fig = go.Figure()
    base_layout(fig, height)
    _backdrop(fig, neuron_mosaic(unit[None], per_row=1), extent)
    scale = float(np.abs(unit).max())
    fig.update_layout(
        title=f"{title}: from {float(unit.min()):.2f} to {float(unit.max()):.2f}"
        if scale
        else f"{title}: 0 everywhere",
        xaxis_title="x1",
        yaxis_title="x2",
    )
    fig.update_yaxes(scaleanchor="x", constrain="domain")
    return fig


def hidden_space_figure(
    points: np.ndarray,
    labels: np.ndarray,
    probs: np.ndarray,
    extent: Sequence[float],
    lines: Sequence[np.ndarray],
    height: int = 360,
) -> go.Figure:
    """The plane as the 2-unit last hidden layer sees it: the points moved there, the output
    layer's straight boundaries, and the input plane's grid lines as that layer bends them."""
    fig = go.Figure()
    for line in lines:
        fig.add_scatter(
            x=line[:, 0],
            y=line[:, 1],
            mode="lines",
            line={"color": "grey", "width": 1},
            opacity=0.5,
            hoverinfo="skip",
            showlegend=False,
        )
    for k in np.unique(labels):
        mine = points[labels == k]
        fig.add_scatter(
            x=mine[:, 0],
            y=mine[:, 1],
            mode="markers",
            name=f"class {k}",
            marker={"color": CLASS_COLORS[int(k) % len(CLASS_COLORS)], "size": 6, "line": {"width": 0.5}},
        )
    base_layout(fig, height)
    _backdrop(fig, boundary_rgba(probs)[::-1], extent)
    fig.update_layout(
        title="The output layer's view: 2 hidden units",
        xaxis_title="last hidden layer, unit 1",
        yaxis_title="unit 2",
        legend={"orientation": "h", "y": -0.3},
    )
    return fig
