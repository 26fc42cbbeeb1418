"""The plane's touch tool (ConvNetJS's): a click adds a training point of the chosen class, or
erases the points near it, and the run trains on (mlp.data.edits, Playground.edit).
The choice is made on the plane's legend, whose classes are buttons (pages/ui/plane.py)."""

import streamlit as st

from mlp.data.edits import Edits, add_point, describe, erase_near, erase_radius
from mlp.lessons.playground import link_edits
from mlp.runs.playground import Playground
from pages.ui.shell import link_query
from pages.ui.text import say

TOOL_KEY = "pg_touch"  # what a click does: a class (add a point of it), ERASE, or None (nothing)
EDITS_KEY = "pg_edits"  # the clicks' edits the run should have (the run's own, once it has run)
PROBLEM_KEY = "pg_touch_problem"  # what the last click could not do, said on the next run
ERASE = "erase"


def edits() -> Edits:
    """The edits the run should have: on a visitor's first view, the link's (for its settings)."""
    if EDITS_KEY not in st.session_state:
        st.session_state[EDITS_KEY] = link_edits(link_query(), st.session_state.pg_settings)
    return st.session_state[EDITS_KEY]


def click(x: float, y: float) -> None:
    """A click on the plane at (x, y): the chosen class's point added, or the points near it erased."""
    tool, run = st.session_state.get(TOOL_KEY), st.session_state.get("pg_run")
    if tool is None or run is None:
        return
    try:
        if tool == ERASE:
            shown = st.session_state.get("pg_show_test", True)  # only what the visitor can see
            done = erase_near(run.edits, run.base, x, y, erase_radius(run.points), test=shown)
        else:
            done = add_point(run.edits, x, y, int(tool), run.points.classes)
    except ValueError as err:
        st.session_state[PROBLEM_KEY] = say(err)
        return
    st.session_state[EDITS_KEY] = done


def choose(tool: str | None) -> None:
    """The legend's choice (pages/ui/plane.py): a class ("0", "1", …), "erase", or None (off)."""
    st.session_state[TOOL_KEY] = tool if tool in (None, ERASE) else int(tool)


def touch_state(run: Playground, uploaded: bool) -> dict:
    """What the plane's legend shows of the tool: the choice, and the set in a few words once
    clicks have edited it. A warning if the last click could not be done."""
    classes = range(run.points.classes) if run.points.task == "classify" else ()  # a regression: Erase
    if (chosen := st.session_state.get(TOOL_KEY)) not in (*classes, ERASE):
        chosen = st.session_state[TOOL_KEY] = None  # fewer classes since, or a regression now
    summary = describe(run.points, run.edits) if run.edits else ""
    if summary and uploaded:
        summary += "; the CSV export keeps them, a link can't"
    if problem := st.session_state.pop(PROBLEM_KEY, None):
        st.toast(problem, icon=":material/touch_app:")
    return {"chosen": chosen, "summary": summary}
