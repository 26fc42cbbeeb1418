"""HTML that changes in place: a part of a page redrawn twice a second (the class board) whose
browser touches only what changed.

`st.html` and `st.markdown` parse, sanitize and replace all their HTML at every redraw, even when
it is the same. On a board of five challenges and 50 students redrawn every second, its charts
and tables took ~0.13 s of the instructor's browser's main thread a second, and under a class's
load a redraw every half second held results back longer than one every second did
(bench/room_load.py, docs/performance.md). This component keeps what it drew: the same HTML
again costs nothing; of a table, a row keeps its node (a `data-key` names it), and only its cells
that changed are replaced. A button in a row hands its `data-value` to the page, unless its row
has just moved under the pointer or a click was just sent (a double click hides one student).

The HTML must be the app's own, every outside text in it escaped (mlp/figures/board.py): the
component writes it into the page as it is, unsanitized.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from pages.ui.components import component


def live_html(
    key: str, frame: str, rows: Sequence[str] = (), on_click: Callable[[str], None] | None = None
) -> None:
    """Shows `frame` (trusted HTML) and, if it holds a `<tbody>`, `rows` (each a `<tr>`, best
    with a `data-key`) in it; a redraw with the same `frame` replaces only the cells that
    changed. A click on a button with a `data-value` in it calls `on_click(value)` before the
    page's (or fragment's) next run."""

    def clicked() -> None:
        value = (st.session_state.get(key) or {}).get("clicked")
        if on_click is not None and isinstance(value, str):
            on_click(value)

    component("live_html", ("rows",), isolate_styles=False)(
        key=key, data={"frame": frame, "rows": list(rows)}, on_clicked_change=clicked
    )
