"""HTML that changes in place: a part of a page redrawn twice a second (the class board) whose
browser touches only what changed.

`st.html` and `st.markdown` parse, sanitize and replace all their HTML at every redraw, even when
it is the same. On a board of five challenges and 50 students redrawn every second, its charts
and tables took ~0.13 s of the instructor's browser's main thread a second, and under a class's
load a redraw every half second held results back longer than one every second did
(bench/room_load.py, docs/performance.md). This component keeps what it drew: the same HTML
again costs nothing; of a table, only the rows that changed are parsed and swapped.

The HTML must be the app's own, every outside text in it escaped (mlp/figures/board.py): the
component writes it into the page as it is, unsanitized.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

_JS = """
export default function ({ data, parentElement, setTriggerValue }) {
  let box = parentElement.querySelector(":scope > .live-html");
  if (!box) {
    box = document.createElement("div");
    box.className = "live-html";
    parentElement.appendChild(box);
    box.addEventListener("click", (event) => {  // a row's button: its value to the page
      const button = event.target.closest("button[data-value]");
      if (button && box.contains(button)) box.__clicked("clicked", button.dataset.value);
    });
  }
  box.__clicked = setTriggerValue;  // the latest render's
  if (box.__frame !== data.frame) {  // a new frame: all of it again
    box.innerHTML = data.frame;
    box.__frame = data.frame;
    box.__rows = [];
  }
  const body = box.querySelector("tbody");
  if (!body) return;
  const rows = data.rows, drawn = box.__rows;
  for (let i = 0; i < rows.length; i++) {
    if (rows[i] === drawn[i]) continue;
    const parsed = document.createElement("template");
    parsed.innerHTML = rows[i];
    const row = parsed.content.firstElementChild;
    if (i < body.rows.length) body.rows[i].replaceWith(row);
    else body.appendChild(row);
  }
  while (body.rows.length > rows.length) body.lastElementChild.remove();
  box.__rows = rows.slice();
}
"""
_component = None


def live_html(
    key: str, frame: str, rows: Sequence[str] = (), on_click: Callable[[str], None] | None = None
) -> None:
    """Shows `frame` (trusted HTML) and, if it holds a `<tbody>`, `rows` (each a `<tr>`) in it;
    a redraw with the same `frame` replaces only the rows that changed. A click on a button with
    a `data-value` in it calls `on_click(value)` before the page's (or fragment's) next run."""
    global _component
    if _component is None:  # registered once per process
        _component = st.components.v2.component("mlp_live_html", html="", js=_JS, isolate_styles=False)

    def clicked() -> None:
        value = (st.session_state.get(key) or {}).get("clicked")
        if on_click is not None and isinstance(value, str):
            on_click(value)

    _component(key=key, data={"frame": frame, "rows": list(rows)}, on_clicked_change=clicked)
