"""A class board's picture: how a challenge's scores spread, and where its goal lies.

An SVG drawn here, not a plotly chart: the board redraws twice a second, and a plotly chart
redrawn with new numbers costs the instructor's browser ~0.1 s of its main thread; five of
them (one a challenge) held a board's updates back by up to 3 s (bench/room_load.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from html import escape

from mlp.figures.style import CLASS_COLORS

WIDTH, HEIGHT = 320, 184  # the drawing's own units
LEFT, RIGHT, TOP, BOTTOM = 8, 8, 46, 48  # room for the counts above the bars and the axis below
BINS = 8
TEXT = 18  # drawn from ~300 px wide: ≥ 16 px on screen, projector mode's least


def spread_bins(values: Sequence[float], goal: float, bins: int = BINS) -> tuple[float, float, list[int]]:
    """The histogram: its range (the scores and the goal, padded when they are all one number)
    and how many scores fall in each of `bins` equal parts of it."""
    low, high = min([*values, goal]), max([*values, goal])
    if high - low < 1e-9:
        pad = max(abs(high), 1.0) * 0.05
        low, high = low - pad, high + pad
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - low) / (high - low) * bins))] += 1
    return low, high, counts


def score_spread_svg(scores: Sequence[float], target: float, metric: str) -> str:
    """A histogram of the students' best scores (test accuracy in %, or test loss), its count
    above each bar, and the challenge's goal as a dashed line: how many are near it, and how far
    the rest are. Its text takes the page's colour (light or dark theme)."""
    percent = metric == "test_acc"
    values = [100 * s if percent else s for s in scores]
    goal = 100 * target if percent else target
    low, high, counts = spread_bins(values, goal)

    def x(value: float) -> float:
        return LEFT + (value - low) / (high - low) * (WIDTH - LEFT - RIGHT)

    def shown(value: float) -> str:
        return f"{value:.1f}%" if percent else f"{value:.3f}"

    floor, tallest, step = HEIGHT - BOTTOM, max(counts) or 1, (WIDTH - LEFT - RIGHT) / len(counts)
    g = x(goal)
    parts = [  # the goal first: the bars and their counts are drawn over it
        f'<line x1="{g:.1f}" y1="{TOP - 20}" x2="{g:.1f}" y2="{floor}" stroke="{CLASS_COLORS[1]}" '
        'stroke-width="3" stroke-dasharray="6 4"/>'
    ]
    parts.append(f'<line x1="{LEFT}" y1="{floor}" x2="{WIDTH - RIGHT}" y2="{floor}" stroke="currentColor"/>')
    for i, count in enumerate(counts):
        if count:
            h = count / tallest * (floor - TOP)
            left = LEFT + i * step
            parts.append(
                f'<rect x="{left + 1:.1f}" y="{floor - h:.1f}" width="{step - 2:.1f}" height="{h:.1f}" '
                f'fill="{CLASS_COLORS[0]}"/>'
            )
            parts.append(_text(left + step / 2, floor - h - 5, str(count), "middle"))
    anchor = "end" if g > WIDTH / 2 else "start"
    parts.append(_text(g + (-6 if anchor == "end" else 6), TOP - 28, f"goal {shown(goal)}", anchor))
    parts.append(_text(LEFT, floor + 20, shown(low), "start"))
    parts.append(_text(WIDTH - RIGHT, floor + 20, shown(high), "end"))
    parts.append(_text(WIDTH / 2, floor + 40, "test accuracy" if percent else "test loss", "middle"))
    n, met = len(values), sum(v >= goal if percent else v < goal for v in values)
    label = (
        f"Best scores of {n} student{'s' if n != 1 else ''}, from {shown(min(values))} to "
        f"{shown(max(values))}; {met} met the goal of {shown(goal)}."
        if values
        else f"No scores yet; the goal is {shown(goal)}."
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" '
        f'style="max-width:{int(WIDTH * 1.6)}px" role="img" aria-label="{escape(label)}" '
        f'font-family="Source Sans Pro, sans-serif">{"".join(parts)}</svg>'
    )


def _text(x: float, y: float, text: str, anchor: str) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{TEXT}" text-anchor="{anchor}" '
        f'fill="currentColor">{escape(text)}</text>'
    )


# The ranks, as HTML: a table redrawn twice a second costs a browser far less as text than as a
# data grid (five grids of 50 rows took ~0.2 of a core), and its text grows in projector mode.
# Its style: pages/ui/components/styles/board.css.
# A setup's link: a web address, or a path inside the app (not "//host" or "/\\host", which a
# browser reads as another site), with nothing a browser would drop from it first.
_SAFE_LINK = re.compile(r"(https?://|/(?![/\\]))[^\s\x00-\x1f\x7f]*\Z")


def ranks_table_parts(
    rows: Sequence[dict[str, object]],
    link: str | None,
    label: str,
    buttons: Mapping[str, str] | None = None,
    key: str | None = None,
) -> tuple[str, list[str]]:
    """`rows` (one dict a row, the same keys) as an HTML table in parts: the table with an empty
    body, and each row's `<tr>` (the board's browser replaces only what changed in a row:
    pages/ui/live_html.py). Every cell is text (a nickname's markup shown as typed); the `link`
    column's cells are links ("Open", in a new tab), unless one isn't the app's own (a path) or
    a web address: then it is text; numbers align right. `label` names the table for a screen
    reader. A column in `buttons` holds a button a row, named by its label there, carrying the
    cell's text (`data-value`): what pages/ui/live_html.py hands the page when it is clicked.
    The `key` column's text names each row (`data-key`: a redraw keeps the row's node)."""
    buttons = buttons or {}
    if not rows:
        return "", []
    columns = list(rows[0])
    numbers = {c for c in columns if all(_is_number(row[c]) for row in rows)}
    number = ' class="number"'
    head = "".join(f'<th scope="col"{number if c in numbers else ""}>{escape(c)}</th>' for c in columns)
    body = []
    for row in rows:
        cells = []
        for c in columns:
            value = row[c]
            if c == link and _SAFE_LINK.match(str(value)):
                cells.append(
                    f'<td><a href="{escape(str(value))}" target="_blank" rel="noopener">Open</a></td>'
                )
            elif c in buttons:
                text, name = escape(str(value)), escape(buttons[c])
                cells.append(
                    f'<td><button type="button" class="board-action" data-value="{text}" '
                    f'aria-label="{name} {text}">{name}</button></td>'
                )
            elif c in numbers:
                cells.append(f"<td{number}>{value:,}</td>")
            else:
                cells.append(f"<td>{escape(str(value))}</td>")
        named = f' data-key="{escape(str(row[key]))}"' if key else ""
        body.append(f"<tr{named}>{''.join(cells)}</tr>")
    frame = (
        f'<div class="board-table" role="region" aria-label="{escape(label)}" tabindex="0">'
        f"<table><thead><tr>{head}</tr></thead><tbody></tbody></table></div>"
    )
    return frame, body


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
