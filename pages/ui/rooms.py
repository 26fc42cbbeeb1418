"""A student's side of a class room: joining it from the sidebar, and posting the checker's best.

The instructor puts a join link on the projector (`?room=ABCD-EFGH`, from the Class board
page); it opens the app with the sidebar's "Class room" box open and the code filled in. A
student types a nickname and joins: their session holds the membership's token (never shown,
never in a link; a cookie keeps it for the browser's next session), so a post can only be
theirs. From then on, whenever a challenge's check finds a better result than the last one
posted, the page posts it (pages/ui/lessons.py): the challenge's metric on the visible test
points and on the hidden part (the playground's as its trainer scored it at that epoch's end:
runs.playground.watch_hidden), the epoch, the parameters
and the setup's link.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from mlp.curriculum.challenges import Challenge, Score, hidden_points
from mlp.rooms import Membership, Result, Rooms, Store
from mlp.rooms.rooms import CLOSED, show_code
from mlp.runs.playground import Playground, score_points
from pages.ui.text import say

ROOM = "room"  # ?room=ABCD-EFGH: a join link
MEMBER_KEY = "room_member"  # session state: this visitor's Membership
ERROR_KEY = "room_error"  # session state: why the last join failed
LINKED_KEY = "room_linked"  # session state: the code of the join link the visitor came by
POSTED_KEY = "room_posted"  # session state: {(room, token, challenge): the score last sent, or CLOSED}
CLOSED_SENTENCE = "The instructor closed this challenge: the class board now ranks it on hidden test points."
_log = logging.getLogger(__name__)


@st.cache_resource(show_spinner=False)
def shared_rooms() -> Rooms:
    """The process's rooms (one store, a few connections); a StoreError says why not.
    (A failure isn't cached: the next call tries again.)"""
    return Rooms(Store())


def membership() -> Membership | None:
    return st.session_state.get(MEMBER_KEY)


def room_box() -> None:
    """The sidebar's "Class room": join with a code and a nickname, or see where results go."""
    _from_cookie()
    # A join link's code, kept for the session: a page that rewrites its address bar drops it
    linked = st.session_state[LINKED_KEY] = st.query_params.get(ROOM) or st.session_state.get(LINKED_KEY, "")
    member = membership()
    _remember(member)
    if member is not None:
        with st.sidebar.container(border=True, key="room_member_box"):
            st.markdown(f":material/groups: Class room **{show_code(member.code)}**, as")
            st.text(member.nickname)  # as typed, never Markdown
            st.caption("Your best checked result on each challenge goes to the class board.")
            st.button("Leave the room", key="room_leave", on_click=_leave)
        return
    with st.sidebar.expander("Class room", icon=":material/groups:", expanded=bool(linked)):
        with st.form("room_join", border=False):
            st.text_input(
                "Room code", value=linked[:20], max_chars=20, placeholder="ABCD-EFGH", key="room_code"
            )
            st.text_input(
                "Your nickname", max_chars=24, key="room_nickname",
                help="What the class board shows; nothing else about you is kept.",
            )  # fmt: skip
            st.form_submit_button("Join", type="primary", on_click=_join)
        if error := st.session_state.pop(ERROR_KEY, None):
            st.error(error)  # the app's own sentences: a nickname is never in them


def _leave() -> None:
    st.session_state.pop(MEMBER_KEY, None)
    st.session_state[LEFT_KEY] = True


# The membership outlives a reload: its room and token wait in a cookie of this browser (set by a
# component, since Streamlit sets none), and a new session reads it in its first run
# (st.context.cookies), so coming back costs no extra run of the page.
COOKIE = "mlp_room"
COOKIE_DAYS = 1  # a room lasts 12 hours at most
_REMEMBER_JS = """
export default function (component) {
  const { data } = component;
  const base = `${data.name}=`, tail = "; path=/; SameSite=Strict";
  // room code and token: letters, digits, "-", "_" and one ":", all a cookie's value may hold
  if (data.member) document.cookie = base + data.member + `; max-age=${data.seconds}` + tail;
  else if (data.left && document.cookie.includes(base)) document.cookie = base + "; max-age=0" + tail;
}
"""
_remember_component = None
LEFT_KEY = "room_left"  # session state: the visitor left their room here (the browser forgets it)
CHECKED_KEY = "room_cookie_checked"  # session state: this session has looked at the cookie


def _remember(member: Membership | None) -> None:
    """The cookie follows the membership: set while in a room, removed once left."""
    global _remember_component
    if _remember_component is None:
        _remember_component = st.components.v2.component("mlp_room", html="", js=_REMEMBER_JS)
    data = {
        "name": COOKIE,
        "member": f"{member.code}:{member.token}" if member else None,
        "left": bool(st.session_state.get(LEFT_KEY)),
        "seconds": COOKIE_DAYS * 86_400,
    }
    with st.sidebar:
        _remember_component(key="room_remember", data=data)


def _from_cookie() -> None:
    """A new session of a browser that was in a room: back in it, if the room still has them."""
    if CHECKED_KEY in st.session_state or MEMBER_KEY in st.session_state:
        return
    st.session_state[CHECKED_KEY] = True
    kept = st.context.cookies.get(COOKIE)
    code, _, token = (kept if isinstance(kept, str) else "").partition(":")  # (AppTest's isn't one)
    if not (code and token):
        return
    try:
        member = shared_rooms().member(code, token)
    except Exception:  # the database is down: joining again will say so
        _log.warning("A membership's cookie could not be checked", exc_info=True)
        return
    if member is not None:
        st.session_state[MEMBER_KEY] = member
    else:
        st.session_state[LEFT_KEY] = True  # gone or closed: the browser forgets it


def _join() -> None:
    code, nickname = st.session_state.get("room_code", ""), st.session_state.get("room_nickname", "")
    if not allowed("room_joins"):
        st.session_state[ERROR_KEY] = "Too many tries: wait a minute, then join again."
        return
    try:
        st.session_state[MEMBER_KEY] = shared_rooms().join(code, nickname)
    except Exception as err:
        st.session_state[ERROR_KEY] = say(err)
        return
    st.session_state.pop(LEFT_KEY, None)


# The instructor's link carries its secret after "#" (the address's fragment), which a browser
# never sends: no server's or proxy's log has it. This component reads it from the address bar
# (on opening, or when a link is pasted over a board's address, which changes only the fragment),
# takes it off (a projector shows the bar) and hands it to the page.
_SECRET_JS = """
export default function (component) {
  window.__mlpLinkSecret = component.setTriggerValue;  // the latest render's
  const read = () => {
    const found = window.location.hash.match(/^#key=([A-Za-z0-9_-]{1,100})$/);
    if (!found) return;
    history.replaceState(history.state, "", window.location.pathname + window.location.search);
    window.__mlpLinkSecret("key", found[1]);
  };
  if (!window.__mlpLinkSecretHeard) {
    window.__mlpLinkSecretHeard = true;
    window.addEventListener("hashchange", read);
  }
  read();
}
"""
_secret_component = None


def link_secret(key: str, opened: Callable[[str], None]) -> None:
    """Reads an instructor link's secret from the address bar's fragment (`#key=…`) and calls
    `opened(secret)` before the page's next run."""
    global _secret_component
    if _secret_component is None:  # registered once per process
        _secret_component = st.components.v2.component("mlp_link_secret", html="", js=_SECRET_JS)

    def heard() -> None:
        opened(str((st.session_state.get(key) or {}).get("key") or ""))

    _secret_component(key=key, data={}, on_key_change=heard)


TRIES = 6  # joins (or rooms started) a session may try a minute: room codes aren't for guessing


def allowed(what: str, now: float | None = None) -> bool:
    """Whether this session may try `what` once more this minute (and counts the try)."""
    now = time.monotonic() if now is None else now
    tries = [t for t in st.session_state.get(what, []) if now - t < 60]
    if len(tries) >= TRIES:
        return False
    st.session_state[what] = [*tries, now]
    return True


def post_best(
    challenge: Challenge,
    settings: Any,
    scores: Sequence[Score],
    link: Mapping[str, str],
    hidden: Callable[[int], float | None] | None = None,
    own_data: bool = True,
) -> str | None:
    """Posts the run's best result on `challenge` if this visitor is in a room and it beats the
    last one posted; a sentence for the page about the board, or None outside a room."""
    member = membership()
    if member is None:
        return None
    if challenge.problem(settings) is not None:
        return "Results with these settings don't go to the class board."
    if not own_data:
        return "Results on uploaded points, or points added or erased by hand, don't go to the class board."
    best = challenge.best(scores)
    if best is None:
        return f"Your best result goes to the class board of room {show_code(member.code)} as you train."
    score = getattr(best, challenge.metric)
    posted = st.session_state.setdefault(POSTED_KEY, {})
    key = (member.code, member.token, challenge.key)  # a nickname joined again starts afresh
    if posted.get(key) == CLOSED:
        return CLOSED_SENTENCE
    better = key not in posted or (
        score > posted[key] if challenge.metric == "test_acc" else score < posted[key]
    )
    if better:
        try:
            result = Result(
                challenge.key,
                float(score),
                hidden(best.epoch) if hidden is not None else None,
                best.epoch,
                challenge.parameters(settings),
                f"/{challenge.page}?{urlencode(dict(link))}",
            )
            answer = shared_rooms().post(member, result)
        except Exception as err:  # a room gone, the database down, a fault: a sentence, never a traceback
            return say(err)
        posted[key] = CLOSED if answer == CLOSED else score  # kept, queued, or not to be kept
        if answer == CLOSED:
            return CLOSED_SENTENCE
    return f"On the class board of room {show_code(member.code)}: your best so far is posted."


def hidden_score(run: Playground, challenge: Challenge, epoch: int) -> float:
    """The playground run's score on the challenge's hidden test points at the end of `epoch`,
    as its trainer scored them then (runs.playground.watch_hidden); if it didn't (the epoch ended
    before the page began watching), the network's as it is now."""
    scored = run.trainer.watch.scored.get(epoch)
    loss, accuracy = scored if scored is not None else score_points(run, *hidden_points(run.settings))
    return accuracy if challenge.metric == "test_acc" else loss
