"""The figures' shared look: colours, fonts, layout, and figures built without re-validation."""

from __future__ import annotations

import base64
import struct
import zlib

import numpy as np
import plotly.graph_objects as go

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

    For the figures a page redraws every frame (the playground's plane, curves, confusion and
    unit maps; MNIST's live curves and schedule): validation costs about 4x the build there.
    The dicts are written by this package, and tests/test_figures.py validates every figure
    once (`go.Figure(fig.to_dict())`). Everything else uses `figure`.
    """
    return go.Figure(data=data, layout=layout, _validate=False)


def figure(data: list[dict], layout: dict) -> go.Figure:
    """A figure from plain trace and layout dicts, validated by plotly as it is built."""
    return go.Figure(data=data, layout=layout)


def base_layout(fig: go.Figure, height: int = 320) -> go.Figure:
    """Apply the shared look to a figure built step by step."""
    fig.update_layout(**layout_dict(height))
    return fig


RGB = np.array([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in CLASS_COLORS], dtype=np.float64)
NEGATIVE, POSITIVE = RGB[0], RGB[1]  # blue for < 0, orange for > 0 in the neuron maps


PRESENTER_FONT_PX = 18  # chart text in presenter mode: legible from the back of a lecture hall


def for_presenter(fig: go.Figure, size: int = PRESENTER_FONT_PX) -> go.Figure:
    """Every text of `fig` at least `size` px (titles larger), in place: axes, ticks, legend,
    annotations, colour bars and text on the traces. The height stays: a page is laid out for it."""
    fig.update_layout(font={"size": size}, title_font={"size": size + 2}, legend_font={"size": size})
    fig.update_xaxes(tickfont={"size": size}, title_font={"size": size})
    fig.update_yaxes(tickfont={"size": size}, title_font={"size": size})
    fig.update_annotations(font_size=size)
    for trace in fig.data:
        if "textfont" in trace:
            trace.textfont.size = max(size, trace.textfont.size or 0)
        if "colorbar" in trace and trace.showscale is not False:  # touching it would draw one
            trace.colorbar.tickfont.size = size
    return fig


def png_data_uri(rgba: np.ndarray) -> str:
    """An (H, W, 4) uint8 image as a data: URI holding a PNG (written here: zlib, no extra deps)."""
    height, width, _ = rgba.shape
    rows = np.zeros((height, 1 + 4 * width), dtype=np.uint8)  # each row: filter type 0, then its pixels
    rows[:, 1:] = np.ascontiguousarray(rgba, dtype=np.uint8).reshape(height, -1)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return _png_uri([(b"IHDR", header), (b"IDAT", zlib.compress(rows.tobytes(), 1))])


def palette_png_uri(indices: np.ndarray, palette: np.ndarray) -> str:
    """An (H, W) uint8 image of indices into `palette` (n, 4) RGBA colours, n ≤ 256, as a PNG
    data: URI: a byte a pixel instead of four, so a plane's frame encodes ~4x faster and
    weighs less than an RGBA PNG of the same pixels."""
    height, width = indices.shape
    rows = np.zeros((height, 1 + width), dtype=np.uint8)  # each row: filter type 0, then its pixels
    rows[:, 1:] = indices
    header = struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)  # 8-bit indices into a palette
    colours = np.ascontiguousarray(palette, dtype=np.uint8)
    return _png_uri(
        [
            (b"IHDR", header),
            (b"PLTE", colours[:, :3].tobytes()),
            (b"tRNS", colours[:, 3].tobytes()),  # each palette entry's alpha
            (b"IDAT", zlib.compress(rows.tobytes(), 1)),
        ]
    )


def _png_uri(chunks: list[tuple[bytes, bytes]]) -> str:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    png = b"\x89PNG\r\n\x1a\n" + b"".join(chunk(k, d) for k, d in [*chunks, (b"IEND", b"")])
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
