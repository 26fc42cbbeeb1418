"""Live parts of a page: fragments that redraw on a timer, taking turns with every other visitor.

While a visitor plays, each of a page's live fragments asks for its turn in the process's one
line (pages.serving.turns) before it trains and draws; a click heard while waiting ends the wait.
With many visitors playing, the slow panels also ask less often. (The 2D playground's plane
is not a fragment: its frames come over its own socket (or HTTP), in the same line; pages/serving/frames.py.)
"""

import functools
import uuid
from collections.abc import Callable

import streamlit as st

from pages.serving.turns import shared_turns
from pages.ui.internals import STEADY_CSS, fragment_run, set_fragment_timer

VISITOR = "visitor"  # session-state key: this visitor's name in the line
PLAYERS_PER_PANEL_SECOND = 0.5  # the slow panels redraw every 2 s per player: they cost the browsers most
MAX_PANEL_SECONDS = 60.0  # ...and at least this often (a redraw costs a browser ~0.4 s of CPU, measured)
HEARTBEAT_SECONDS = 30.0  # a playing page tells the server it is open this often (frames' lease); a beat
# costs a browser ~0.13 s of CPU (a script run and its garbage): every 10 s, 32 tabs spent 0.4 of a core on it
HELD_HEARTBEAT_SECONDS = 600.0  # ...and this often while the tab's frame socket keeps the lease itself
RETIME_RATIO = 1.5  # a slow panel's timer is reset when its interval should change by more than this factor
TIMERS = "live_timers"  # session-state key: {fragment id: the interval its browser timer runs at}


def steady(playing: bool) -> None:
    """While `playing`: the page's waiting parts stay as they are, without fades or animation."""
    if playing:
        st.html(STEADY_CSS)


def visitor() -> str:
    return st.session_state.setdefault(VISITOR, uuid.uuid4().hex)


def panel_seconds(seconds: float) -> float:
    """How often a slow panel redraws: `seconds`, stretched as more visitors play, up to
    MAX_PANEL_SECONDS."""
    stretched = seconds * max(1.0, shared_turns().players() / PLAYERS_PER_PANEL_SECOND)
    return min(stretched, max(seconds, MAX_PANEL_SECONDS))


def retime(seconds: float) -> None:
    """Inside a fragment's run: its browser timer fires every `seconds` from now on (on a
    fragment rerun, only if the timer it has differs by more than RETIME_RATIO).

    Streamlit sends a fragment's `run_every` to the browser on the page's full runs only; the
    panels' redraws are fragment runs, so without this a panel keeps the interval it got when
    Play was pressed: the first visitor to press it (nobody else playing yet) would redraw
    every second for as long as they play, whoever joins later. The browser replaces a
    fragment's timer when told a new interval for it (pages/ui/internals.py, 3).
    """
    if (run := fragment_run()) is None:
        return
    fragment_id, fragment_rerun = run
    timers = st.session_state.setdefault(TIMERS, {})
    running = timers.get(fragment_id)
    # On a full run the browser has dropped every timer and Streamlit has just set this one to
    # run_every, so the record is stale: always send. On a fragment rerun, only past the ratio.
    if fragment_rerun and running is not None and 1 / RETIME_RATIO <= seconds / running <= RETIME_RATIO:
        return
    set_fragment_timer(fragment_id, seconds)  # may end this run for a click: then nothing is recorded
    timers[fragment_id] = seconds


Draw = Callable[[], None]


def heartbeat(playing: bool, beat: Callable[[], bool]) -> None:
    """While `playing`: `beat()` every HEARTBEAT_SECONDS, from a fragment that draws nothing;
    every HELD_HEARTBEAT_SECONDS once `beat()` says the tab's frames keep it alive themselves.
    The page's frames play on a lease that its runs renew, and so does the tab's frame socket
    (pages/serving/frames.py). A beat is an empty script run, cheap for the server but ~0.13 s of a
    browser's CPU (Streamlit's page handling the run, then collecting its garbage): hence one
    every HEARTBEAT_SECONDS at most, and rarely while the socket keeps the lease (over HTTP it
    beats every HEARTBEAT_SECONDS). A socket that reconnects holds nothing until the page next
    draws the plane, and the beat may still be HELD_HEARTBEAT_SECONDS away: the slow panels
    (at most MAX_PANEL_SECONDS apart) renew the lease meanwhile, and if it lapses (panels
    waiting long for their turns), the canvas hears that its stream stopped, the page runs,
    and the run renews the lease and plays on."""

    @st.fragment(run_every=HEARTBEAT_SECONDS if playing else None)
    def beating() -> None:
        if playing:
            retime(HELD_HEARTBEAT_SECONDS if beat() else HEARTBEAT_SECONDS)

    beating()


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
            if slow:
                retime(panel_seconds(seconds))
            with shared_turns().turn(visitor(), heed=lambda: VISITOR in st.session_state):
                draw()

        return fragment

    return wrap
