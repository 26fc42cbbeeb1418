"""Shape diagrams as SVG: operands drawn to (log) scale, the matched inner size highlighted."""

from __future__ import annotations

import math
from html import escape
from typing import Protocol

from mlp.manual import shape_text


class Operand(Protocol):
    """A box of the diagram: a named tensor, its shape and the symbols of its sizes."""

    name: str
    shape: tuple[int, ...]
    symbols: tuple[str, ...]


class ShapeStory(Protocol):
    """What the diagram draws (mlp.lessons.shapes builds one per step)."""

    operands: list[Operand]
    operators: list[str]
    result: Operand
    inner: str | None
    broadcast: str | None
    sentence: str


INNER = "#E69F00"  # the size a matmul matches or a sum runs over
RESULT = "#0072B2"
OPERAND = "#7F8C8D"
BROADCAST = "#009E73"
# Text in those accents, per theme: the accents themselves are 2.3-3.4:1 on white, the darker
# shades 5.3-5.9:1; on the dark theme the accents read at 5.4-8:1.
TEXT_INK = {INNER: "light-dark(#8A5A00, #E69F00)", BROADCAST: "light-dark(#007A5A, #009E73)"}


def _side(n: int) -> float:
    """Pixels for a size: logarithmic, so 4 and 784 both fit on a slide."""
    return min(110.0, 18.0 + 18.0 * math.log2(max(n, 1)))


def _box(op: Operand) -> tuple[float, float]:
    if len(op.shape) == 2:
        return _side(op.shape[1]), _side(op.shape[0])
    if len(op.shape) == 1:
        return _side(op.shape[0]), 14.0
    return 18.0, 18.0


def _text(x: float, y: float, s: str, size: int = 16, color: str = "currentColor", **attrs: str) -> str:
    extra = " ".join(f'{k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    ink = f' style="fill: {TEXT_INK[color]}"' if color in TEXT_INK else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" fill="{color}"{ink} '
        f'text-anchor="middle" {extra}>{escape(s)}</text>'
    )


def _width(s: str, size: int) -> float:
    """About how wide a text is drawn: 0.6 em a character (bold sans serif)."""
    return 0.6 * size * len(s)


def _dim_label(symbol: str, size: int) -> str:
    return f"{symbol}={size}" if symbol != str(size) else str(size)


def shape_svg(story: ShapeStory, grow: float = 1.0) -> str:
    """One row: operand, operator, operand, ..., '→', result; sizes labelled on the edges.

    It fills its container's width up to `grow` times its natural size (text 16-20 px at 1, so
    at least 16 px wherever it is drawn at its natural size or larger); the shapes in symbols
    and in numbers follow as two lines of text."""
    pad, gap, top = 16.0, 52.0, 44.0
    items = [*story.operands, story.result]
    boxes = [_box(op) for op in items]
    tallest = max(
        h if op.name != story.broadcast else 4 * (h + 3) + 16 for op, (_, h) in zip(items, boxes, strict=True)
    )
    height = top + tallest + 16
    x = pad + 30  # room for the first row label
    parts: list[str] = []
    for i, (op, (w, h)) in enumerate(zip(items, boxes, strict=True)):
        is_result = i == len(items) - 1
        if is_result or i > 0:
            sign = "→" if is_result else story.operators[i - 1]
            room = max(gap, _width(sign, 20) + 24)  # "with" needs more than "@"
            parts.append(_text(x + room / 2 - 8, top + h / 2 + 6, sign, size=20, font_weight="bold"))
            x += room
        elif story.operators and story.operators[0] not in ("@", "+", "−", "⊙", "with"):
            parts.append(_text(x + 14, top + h / 2 + 5, story.operators[0], size=16, font_style="italic"))
            x += 2 * gap
        overhang = max(0.0, (_width(op.name, 18) - w) / 2)  # a name wider than its box: room on both sides
        x += overhang
        color = RESULT if is_result else BROADCAST if op.name == story.broadcast else OPERAND
        parts.append(
            f'<rect x="{x:.1f}" y="{top:.1f}" width="{w:.1f}" height="{h:.1f}" rx="3" '
            f'fill="{color}" fill-opacity="0.22" stroke="{color}" stroke-width="1.5"/>'
        )
        if op.name == story.broadcast:  # ghost copies: the same row added to every row
            for k in (1, 2, 3):
                parts.append(
                    f'<rect x="{x:.1f}" y="{top + k * (h + 3):.1f}" width="{w:.1f}" height="{h:.1f}" rx="3" '
                    f'fill="none" stroke="{color}" stroke-dasharray="3 3" stroke-opacity="{0.8 - 0.2 * k}"/>'
                )
            parts.append(_text(x + w / 2, top + 4 * (h + 3) + 12, "broadcast ↓", size=16, color=BROADCAST))
        parts.append(_text(x + w / 2, top - 24, op.name, size=18, font_weight="bold"))
        # Sizes: columns above the box, rows to its left; the inner size in orange.
        if len(op.shape) == 2:
            rows_sym, cols_sym = op.symbols
            for sym, size, where in ((cols_sym, op.shape[1], "top"), (rows_sym, op.shape[0], "left")):
                hot = sym == story.inner
                c = INNER if hot else "currentColor"
                weight = "bold" if hot else "normal"
                if where == "top":
                    parts.append(
                        _text(x + w / 2, top - 6, _dim_label(sym, size), size=16, color=c, font_weight=weight)
                    )
                    if hot:
                        parts.append(_edge(x, top, x + w, top))
                else:
                    parts.append(
                        _text(
                            x - 6,
                            top + h / 2,
                            _dim_label(sym, size),
                            size=16,
                            color=c,
                            font_weight=weight,
                            transform=f"rotate(-90 {x - 6:.1f} {top + h / 2:.1f})",
                        )
                    )
                    if hot:
                        parts.append(_edge(x, top, x, top + h))
        elif len(op.shape) == 1:
            hot = op.symbols[0] == story.inner
            parts.append(
                _text(
                    x + w / 2,
                    top - 6,
                    _dim_label(op.symbols[0], op.shape[0]),
                    size=16,
                    color=INNER if hot else "currentColor",
                )
            )
        x += w + overhang
    width = x + pad
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="100%" style="max-width:{width * grow:.0f}px" role="img" '
        f'aria-label="{escape(story.sentence)}">' + "".join(parts) + "</svg>"
    )


def shape_lines(story: ShapeStory) -> str:
    """The step's shapes as two lines of HTML, in symbols then in numbers: text that wraps on a
    phone where a line drawn in an SVG would be cut at the drawing's edge."""
    items = [*story.operands, story.result]
    symbols: list[str] = []
    numbers: list[str] = []
    for i, op in enumerate(items):
        if i:  # a unary operator (softmax, f, Σ rows) is drawn, not written
            symbols.append("→" if i == len(items) - 1 else story.operators[i - 1])
            numbers.append(symbols[-1])
        symbols.append(f"{op.name} {shape_text(op.symbols)}")
        numbers.append(shape_text(op.shape))
    return (
        '<div style="font-family: monospace; font-size: 16px; text-align: center; overflow-wrap: anywhere">'
        f"<div>{escape(' '.join(symbols))}</div>"
        f'<div style="opacity: 0.75">{escape(" ".join(numbers))}</div></div>'
    )


def _edge(x1: float, y1: float, x2: float, y2: float) -> str:
    return (
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{INNER}" stroke-width="4"/>'
    )
