"""Live parts of a page: fragments that redraw on a timer, taking turns with every other visitor.

While a visitor plays, each of a page's live fragments asks for its turn in the process's one
line (mlp.train.turns) before it trains and draws; a click heard while waiting ends the wait.
With many visitors playing, the slow panels also ask less often. (The 2D playground's plane
is not a fragment: its frames come over plain HTTP, in the same line; pages/ui/frames.py.)
"""

import functools
import uuid
from collections.abc import Callable

import streamlit as st

from mlp.train.turns import shared_turns

VISITOR = "visitor"  # session-state key: this visitor's name in the line
PLAYERS_PER_PANEL_SECOND = 0.5  # the slow panels redraw every 2 s per player: they cost the browsers most


# While a page plays, its live parts wait their turn in the line, up to seconds when many
# visitors play. Streamlit fades an element whose redraw is pending and animates its "running"
# icon meanwhile: on a busy server the plane would dim between frames, and the fades and the
# icon would keep every visitor's browser repainting (the browsers share the cores too).
STEADY_CSS = """<style>
[data-testid="stElementContainer"][data-stale="true"] { opacity: 1 !important; transition: none !important; }
[data-testid="stStatusWidgetRunningIcon"] { visibility: hidden; }
</style>"""


def steady(playing: bool) -> None:
    """While `playing`: the page's waiting parts stay as they are, without fades or animation."""
    if playing:
        st.html(STEADY_CSS)


def visitor() -> str:
    return st.session_state.setdefault(VISITOR, uuid.uuid4().hex)


def panel_seconds(seconds: float) -> float:
    """How often a slow panel redraws: `seconds`, stretched as more visitors play."""
    return seconds * max(1.0, shared_turns().players() / PLAYERS_PER_PANEL_SECOND)


Draw = Callable[[], None]


def live(seconds: float, playing: bool, slow: bool = False) -> Callable[[Draw], Draw]:
    """st.fragment redrawn every `seconds` while `playing`, each redraw in its turn.

    `slow` panels (curves, maps) stretch their interval with the number of players.
    """

    def wrap(draw: Draw) -> Draw:
        every = (panel_seconds(seconds) if slow else seconds) if playing else None

        @st.fragment(run_every=every)
        @functools.wraps(draw)
        def fragment() -> None:
            if not playing:
                return draw()
            with shared_turns().turn(visitor(), heed=lambda: VISITOR in st.session_state):
                draw()

        return fragment

    return wrap
