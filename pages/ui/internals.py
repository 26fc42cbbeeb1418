"""Everything the app takes from Streamlit beyond its public API, in one place.

Each use says what it is for, why the public API can't do it, and what a release that moves it
breaks; tests/test_streamlit_internals.py checks each against the installed Streamlit, so an
upgrade fails there, loudly, before a hosted demo breaks. requirements.txt pins the range the
tests pass on (CI runs the quick loop on both of its ends). Nothing else in the app imports
from inside the `streamlit` package (tests/test_repo.py checks that).

1. Leaving the pages-directory mode (`PagesManager.uses_pages_directory`). A folder named
   pages/ next to app.py makes Streamlit start in its old multipage mode, in which a direct
   link runs that page's file alone, without app.py; only a run that calls st.navigation
   leaves it, and the first run on a fresh server never does. Breaks: the first page a fresh
   server serves (after a restart, on a new replica) shows without the app's sidebar and
   shell until the visitor's next click.
2. Widget values a session never drew (`SessionState._new_widget_state`): how a server tells
   that a browser came back from a session it doesn't have (a replica died). Breaks: the
   "server went away" notice (pages/ui/reconnect.py) is never shown.
3. A fragment's browser timer reset from a fragment run (the `auto_rerun` ForwardMsg, with
   the run's fragment id). Streamlit sends `run_every` on full runs only. Breaks: slow panels
   keep the interval they had at Play, so a class's first players redraw every second.
4. Styles keyed to Streamlit's `data-testid` attributes and classes, where no public key or
   theme option reaches (the main block's padding, metric sizes, buttons' padding, a stale
   element's fade, the running icon; the contrast of chart text, primary buttons' labels and
   code's colours). Breaks: projector mode's layout, the steady look of a playing page, and
   text contrast (tests/test_legibility.py fails); nothing stops working.
5. TCP_NODELAY on the server's connections. Streamlit binds its port with
   `socket.socket(family)`, whose protocol number is 0, and asyncio sets TCP_NODELAY only on
   sockets whose number is IPPROTO_TCP (`asyncio.base_events._set_nodelay`, which every new
   connection's transport calls). Without it, Nagle's algorithm holds an answer's body (sent
   after its headers) until the browser acknowledges the headers, which a browser on a
   keep-alive connection delays by 40 ms: every playground frame, health check and small
   file took 40 ms more than it should (measured: /_stcore/health 44 ms, 1 ms with it; a lone
   visitor's frames 14 a second, 32 with it). Installed before the server accepts anything
   (app.py); a release that binds its socket otherwise makes this a no-op. Breaks, if
   asyncio renames the function: the 40 ms are back (tests/test_server.py fails).
"""

from __future__ import annotations

import asyncio.base_events
import socket

import streamlit as st
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from pages.ui.components import style, text

try:  # without it, panels keep the interval they got at Play (tests/test_streamlit_internals.py fails)
    from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState
except ImportError:  # pragma: no cover - a release that moved it
    ThreadState = None

# 4. The data-testid values the app's styles use (tests/test_streamlit_internals.py finds each
# in the installed Streamlit's frontend).
TEST_IDS = (
    "stMainBlockContainer",
    "stMetricValue",
    "stMetricLabel",
    "stBaseButton",
    "stElementContainer",
    "stStatusWidgetRunningIcon",
    "stPageLink",
    "stCode",
    "stCaptionContainer",
)


def leave_pages_directory_mode() -> None:
    """1. If this run is in the old pages-directory mode, leave it and rerun through app.py (same
    page, same query string, same widget values from the browser)."""
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def browser_brought_unknown_widgets() -> bool:
    """2. Whether the browser sent values for widgets that this session has never drawn:
    "state gotten from a reconnecting browser", in Streamlit's own words (WStates in
    streamlit/runtime/state/session_state.py)."""
    ctx = get_script_run_ctx()
    widgets = ctx.session_state._state._new_widget_state
    return any(widget not in widgets.widget_metadata for widget in widgets.states)


def fragment_run() -> tuple[str, bool] | None:
    """3. Inside a fragment's run: (its id, whether this is a fragment rerun rather than the
    page's full run); None outside one."""
    ctx = get_script_run_ctx()
    if ctx is None or ThreadState is None or (fragment_id := ThreadState.get().fragment_id) is None:
        return None
    return fragment_id, bool(ctx.fragment_ids_this_run)


def set_fragment_timer(fragment_id: str, seconds: float) -> None:
    """3. Tell the browser to rerun this fragment every `seconds` from now on: the message
    Streamlit itself sends on a full run. May end this run for a click."""
    msg = ForwardMsg()
    msg.auto_rerun.interval = seconds
    msg.auto_rerun.fragment_id = fragment_id
    get_script_run_ctx().enqueue(msg)


# --- 4. the styles keyed to test ids -------------------------------------------------------------

# Always, in both themes (each page's sidebar draws these with BASE_CSS or PRESENTER_CSS), text
# at WCAG AA contrast (4.5:1) where no theme option reaches (tests/test_legibility.py measures it):
# - chart text in the page's own ink: Streamlit's plotly theme greys it in the browser (#808495
#   on white: 3.7:1), after the figure is built, and one colour can't pass on both the light and
#   the dark background; the same for a bar's number, drawn above it (textposition "outside");
#   heatmap numbers keep the colour plotly picks against their cell;
# - a primary button's label: Streamlit writes it white on the primary colour, 2.3:1 on the dark
#   theme's light blue (which text needs, in tabs and pills, to read on the dark background);
# - code's syntax colours: Streamlit's fixed palette (grey comments at 3.6:1, blue keywords at
#   3.8:1 in light and 4.4:1 in dark, orange and green lower): Okabe-Ito hues, darker in light.
# light-dark() follows the theme Streamlit gives the app's root (its color-scheme).
LEGIBLE_CSS = text("styles/legible.css")  # (pages/ui/components/styles/)

# Presenter mode scales the app for the back row (Streamlit sizes text in rem) and trims the
# chrome above each page's main visual so that it fits a 1280×720 projector's first screen.
PRESENTER_CSS = f"<style>{LEGIBLE_CSS}{text('styles/presenter.css')}</style>"

# Always: metric values sized so that a loss like 0.0012 or "100.0%" fits its column, never "0.00…".
BASE_CSS = f"<style>{LEGIBLE_CSS}{text('styles/base.css')}</style>"

# While a page plays, its live parts wait their turn in the line, up to seconds when many
# visitors play. Streamlit fades an element whose redraw is pending and animates its "running"
# icon meanwhile: on a busy server the plane would dim between frames, and the fades and the
# icon would keep every visitor's browser repainting (the browsers share the cores too).
STEADY_CSS = style("steady")

# A page link's label stays on one line and ends in "…" when its column is narrower (a
# challenge's goal in projector mode: "…at most 4 hid"); inside a container keyed `*_links`,
# it wraps instead. No public option makes a page link wrap (st.button's `wrap` has none).
WRAPPING_LINKS_CSS = style("wrapping_links")


def no_delay() -> None:
    """5. Every TCP connection the server accepts from now on sends each write at once."""

    def set_nodelay(sock: socket.socket) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    asyncio.base_events._set_nodelay = set_nodelay
