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

_JS = """
const SETTLE_MS = 600;  // a row that just moved, or a click just sent: a second click waits this long
const keyOf = (html, i) => html.match(/^<tr data-key="([^"]*)"/)?.[1] ?? `#${i}`;
const parse = (html) => {
  const made = document.createElement("template");
  made.innerHTML = html;
  return made.content.firstElementChild;
};
// A row drawn before keeps its node (and the focus of a button in it): only its cells whose HTML
// changed are replaced; rows are moved only when their order changed.
const patch = (row, html) => {
  const cells = [...parse(html).cells];  // moved out of their parsed row one by one below
  cells.forEach((cell, j) => {
    const old = row.cells[j];
    if (!old) row.appendChild(cell);
    else if (old.outerHTML !== cell.outerHTML) old.replaceWith(cell);
  });
  while (row.cells.length > cells.length) row.lastElementChild.remove();
};

export default function ({ data, parentElement, setTriggerValue }) {
  let box = parentElement.querySelector(":scope > .live-html");
  if (!box) {
    box = document.createElement("div");
    box.className = "live-html";
    parentElement.appendChild(box);
    box.addEventListener("click", (event) => {  // a row's button: its value to the page
      const button = event.target.closest("button[data-value]");
      if (!button || !box.contains(button)) return;
      const now = performance.now(), row = button.closest("tr");
      // Not a click meant for another row (it moved under the pointer), nor a double click.
      if (now - (row?.__moved ?? -1e9) < SETTLE_MS || now - (box.__sent ?? -1e9) < SETTLE_MS) return;
      box.__sent = now;
      box.__clicked("clicked", button.dataset.value);
    });
  }
  box.__clicked = setTriggerValue;  // the latest render's
  if (box.__frame !== data.frame) {  // a new frame: all of it again
    box.innerHTML = data.frame;
    box.__frame = data.frame;
  }
  const body = box.querySelector("tbody");
  if (!body) return;
  const keys = data.rows.map(keyOf), now = performance.now();
  const wanted = new Set(keys), drawn = new Map();
  for (const row of [...body.rows]) {
    if (wanted.has(row.__key)) drawn.set(row.__key, row);
    else row.remove();
  }
  data.rows.forEach((html, i) => {
    let row = drawn.get(keys[i]);
    if (!row) {
      row = parse(html);
      row.__key = keys[i];
    } else if (row.__html !== html) patch(row, html);
    row.__html = html;
    if (body.rows[i] !== row) body.insertBefore(row, body.rows[i] ?? null);
    if (row.__index !== undefined && row.__index !== i) row.__moved = now;
    row.__index = i;
  });
}
"""
_component = None


def live_html(
    key: str, frame: str, rows: Sequence[str] = (), on_click: Callable[[str], None] | None = None
) -> None:
    """Shows `frame` (trusted HTML) and, if it holds a `<tbody>`, `rows` (each a `<tr>`, best
    with a `data-key`) in it; a redraw with the same `frame` replaces only the cells that
    changed. A click on a button with a `data-value` in it calls `on_click(value)` before the
    page's (or fragment's) next run."""
    global _component
    if _component is None:  # registered once per process
        _component = st.components.v2.component("mlp_live_html", html="", js=_JS, isolate_styles=False)

    def clicked() -> None:
        value = (st.session_state.get(key) or {}).get("clicked")
        if on_click is not None and isinstance(value, str):
            on_click(value)

    _component(key=key, data={"frame": frame, "rows": list(rows)}, on_clicked_change=clicked)
