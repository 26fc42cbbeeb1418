"""A visitor whose session the server lost is told so: a replica went down, a server restarted.

When the server a page is connected to goes away, the page reconnects by itself (behind a load
balancer, to another replica); the next time it runs the page (at once if a run was under way
or a part of the page redraws on a timer, else at the visitor's next click) the browser sends
along the values its widgets show. That
server has no session of that id, so it starts a fresh one: the page's settings come back, from
the address bar and those widget values, but nothing else that lived in the session does (the
training, uploaded files, results). A session whose first run brings values for widgets it has
never drawn is that case and only that one: a new tab, a reload and a shared link bring none,
so they never show the message.
"""

import streamlit as st

from pages.ui.internals import browser_brought_unknown_widgets

CHECKED = "app_reconnect_checked"  # session-state key: this session's first run has looked
MESSAGE = (  # short enough for a toast's three lines
    "**The server that held your session went away.** Your settings came back; your training and "
    "uploads didn't."
)


def reconnect_notice() -> None:
    """On a session's first run, at the top of its page: if the browser came back from a session
    this server doesn't have, say what came back (a toast, until it is closed).

    Home shows nothing: its one widget, app.py's projector switch, is drawn before this runs.
    """
    if CHECKED in st.session_state:
        return
    if browser_brought_unknown_widgets():
        st.toast(MESSAGE, icon=":material/sync_problem:", duration="infinite")
    # Checked only once said: a newer run (a click, a frame's rerun) stops this one at its next
    # st.* call, before that call's message goes out; the newer run, which brings the browser's
    # values again, then looks again.
    st.session_state[CHECKED] = True
