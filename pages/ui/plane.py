"""The 2D playground's plane on a canvas: the numbers, the shaded boundary, the points, the axes.

A custom component (components v2), its front-end in pages/ui/components/plane/. The points
become an offscreen layer drawn once per data set; a frame only swaps the small boundary image
and the numbers. The page's script hands it
the frame of the moment; while the visitor plays, the component fetches every next frame itself
from pages/serving/frames.py's route, one after the other, and asks the page to rerun only when the
run ends or the page must say something new (a diverged or dying run).
"""

from collections.abc import Callable
from typing import Any

import streamlit as st

from pages.ui.components import component

PLANE_KEY = "pg_plane"
PARTS = ("layout", "draw", "frames", "input")  # the plane's script, before its entry (plane.js)


def plane(
    stream: Any,
    frame: dict[str, Any],
    points: dict[str, Any],
    presenter: bool,
    debug: bool,
    on_click: Callable[[float, float], None] | None = None,
    touch: dict[str, Any] | None = None,
    on_touch: Callable[[str | None], None] | None = None,
    probe: tuple[float, float] | None = None,
) -> None:
    """The numbers and the plane: `frame` now (Stream.update's), `points` (plane_points'); while
    the `stream` plays (pages/serving/frames.py's Stream: its token, key, path and header, its
    pace), the canvas fetches its own frames. The canvas's data-step is the step of
    the frame it drew last (tests wait on it). A click inside the axes calls `on_click(x, y)`
    with the point in the plane's coordinates, before the page reruns; a `probe` point is marked.
    With `touch` ({"chosen": a class, "erase" or None, "summary": text}) the legend's classes are
    buttons choosing what a click does: pressing one calls `on_touch` with its class ("0", "1",
    …), "erase" or None."""
    data = {
        "points": points,
        "frame": frame,
        "stream": stream.token,
        "key": stream.key,
        "path": stream.path,
        "header": stream.header,
        "interval": stream.frame_seconds,
        "playing": stream.playing,
        "presenter": presenter,
        "debug": debug,
        "clickable": on_click is not None,
        "touch": touch,
        "probe": list(probe) if probe else None,
    }

    def clicked() -> None:
        click = st.session_state[PLANE_KEY].get("click")
        if on_click is not None and click:
            on_click(float(click["x"]), float(click["y"]))

    def chose() -> None:
        tool = st.session_state[PLANE_KEY].get("tool")
        if on_touch is not None and tool:
            on_touch(None if tool.get("tool") is None else str(tool["tool"]))

    component("plane", PARTS)(
        key=PLANE_KEY, data=data, on_ended_change=lambda: None, on_click_change=clicked, on_tool_change=chose
    )
