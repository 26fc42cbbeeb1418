"""A student's side of a class room: joining it from the sidebar, and posting the checker's best.

The instructor puts a join link on the projector (`?room=ABCD-EFGH`, from the Class board
page); it opens the app with the sidebar's "Class room" box open and the code filled in. A
student types a nickname and joins: their session holds the membership's token (never shown,
never in a link; an HttpOnly cookie keeps it for the browser's next session until the room
expires, pages/ui/cookies.py, and a session it brings back asks "Not you?"). From then on,
whenever a challenge's check finds a better result than the last one on the board, the page
posts it (pages/ui/lessons.py): the challenge's metric on the visible test points and on the
room's hidden part (from a secret the room keeps: room_seed), the epoch, the parameters and the
setup's link — only for a run that link reproduces. A result stays pending, and the page says
so, until the board has it.

Who the visitor is, as far as the server can tell (visitor()): the client's address, read by
the server (mlp/rooms/limits.py), and this browser's id, a random cookie of the app's.
"""

from __future__ import annotations

import logging
import math
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from mlp.curriculum.challenges import Challenge, Score
from mlp.rooms import Membership, Result, Rooms, Store, Visitor
from mlp.rooms.posts import CLOSED, NOT_BETTER, POSTED, QUEUED, WAITING
from mlp.rooms.ranks import show_code
from mlp.runs.playground import Playground
from pages.ui.components import component
from pages.ui.cookies import Cookie, deliver, hand_over
from pages.ui.text import say

ROOM = "room"  # ?room=ABCD-EFGH: a join link
MEMBER_KEY = "room_member"  # session state: this visitor's Membership
ERROR_KEY = "room_error"  # session state: why the last join failed
LINKED_KEY = "room_linked"  # session state: the code of the join link the visitor came by
POSTED_KEY = "room_posted"  # session state: {(room, token, challenge): (the score last sent, the answer)}
RETURNED_KEY = "room_returned"  # session state: the membership came back from this browser's cookie
BROWSER_KEY = "room_browser"  # session state: this browser's id (its cookie's, or a new one)
COOKIES_KEY = "room_cookies"  # session state: the cookies last handed to the browser
TICKET_KEY = "room_ticket"  # session state: the ticket for them (pages/ui/cookies.py)
CHECKED_KEY = "room_cookie_checked"  # session state: this session has looked at the cookies
SEEDS_KEY = "room_seeds"  # session state: {(room, token, challenge): its hidden part's seed}
STANDING_KEY = "room_standing"  # session state: when the membership was last looked at
GONE_KEY = "room_gone"  # session state: why the membership ended, if the room ended it
CLOSED_SENTENCE = "The instructor closed this challenge: the class board now ranks it on hidden test points."
WAITING_SENTENCE = (
    "Waiting for the class board: its database is busy. Your best is kept here and posted as soon "
    "as it answers."
)
ROOM_COOKIE, BROWSER_COOKIE = "mlp_room", "mlp_browser"
BROWSER_DAYS = 180  # a browser's id outlives any room: a removed student's browser stays refused
_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")
_log = logging.getLogger(__name__)


@st.cache_resource(show_spinner=False)
def shared_rooms() -> Rooms:
    """The process's rooms (one store, a few connections); a StoreError says why not.
    (A failure isn't cached: the next call tries again.)"""
    return Rooms(Store())


def membership() -> Membership | None:
    return st.session_state.get(MEMBER_KEY)


def visitor() -> Visitor:
    """This visitor's address (None on this machine) and browser id."""
    address = st.context.ip_address
    return Visitor(address if isinstance(address, str) else None, browser_id())


def browser_id() -> str:
    """This browser's id: its cookie's, or a new one (which _remember hands the browser)."""
    if BROWSER_KEY not in st.session_state:
        kept = st.context.cookies.get(BROWSER_COOKIE) if isinstance(st.context.cookies, Mapping) else None
        fresh = secrets.token_urlsafe(24)
        st.session_state[BROWSER_KEY] = kept if isinstance(kept, str) and _ID.fullmatch(kept) else fresh
    return st.session_state[BROWSER_KEY]


def room_seed(challenge: Challenge) -> int | None:
    """The seed of `challenge`'s hidden part in this visitor's room, or None outside one (the
    public part: no board ranks on it). Asked of the database once a membership and challenge
    (a live panel asks at every check, in its turn: pages.serving.turns)."""
    member = membership()
    if member is None:
        return None
    seeds = st.session_state.setdefault(SEEDS_KEY, {})
    key = (member.code, member.token, challenge.key)
    if key not in seeds:
        try:
            seeds[key] = shared_rooms().hidden_seed(member, challenge.key)
        except (
            Exception
        ):  # the database is away: the public part until it answers (nothing is posted meanwhile)
            _log.warning("A room's hidden part could not be read", exc_info=True)
            return None
    return seeds[key]


def room_box() -> None:
    """The sidebar's "Class room": join with a code and a nickname, or see where results go."""
    _from_cookie()
    # A join link's code, kept for the session: a page that rewrites its address bar drops it
    linked = st.session_state[LINKED_KEY] = st.query_params.get(ROOM) or st.session_state.get(LINKED_KEY, "")
    member = _still_in(membership())
    _remember(member)
    if member is not None:
        with st.sidebar.container(border=True, key="room_member_box"):
            st.markdown(f":material/groups: Class room **{show_code(member.code)}**, as")
            st.text(member.nickname)  # as typed, never Markdown
            if st.session_state.get(RETURNED_KEY):  # a shared computer: the last student's name?
                st.caption("This browser was in the room under this name. **Not you?** Leave, then join.")
            else:
                st.caption("Your best checked result on each challenge goes to the class board.")
            st.button("Leave the room", key="room_leave", on_click=_leave)
        return
    gone = st.session_state.get(GONE_KEY)  # the room ended the membership: open, saying why
    with st.sidebar.expander("Class room", icon=":material/groups:", expanded=bool(linked or gone)):
        with st.form("room_join", border=False):
            st.text_input(
                "Room code", value=linked[:20], max_chars=20, placeholder="ABCD-EFGH", key="room_code"
            )
            st.text_input(
                "Your nickname",
                max_chars=24,
                key="room_nickname",
                help="What the class board shows; nothing else about you is kept.",
            )
            st.form_submit_button("Join", type="primary", on_click=_join)
        if error := st.session_state.pop(ERROR_KEY, None):
            st.error(error)  # the app's own sentences: a nickname is never in them
        if gone:
            st.info(gone, icon=":material/info:")


STANDING_SECONDS = 10.0  # a membership is looked at again (removed? room closed?) at most this often


def _still_in(member: Membership | None) -> Membership | None:
    """The membership, unless the room says it no longer holds (then the sidebar says why)."""
    now = time.monotonic()
    if member is None or now - st.session_state.get(STANDING_KEY, -math.inf) < STANDING_SECONDS:
        return member
    st.session_state[STANDING_KEY] = now
    try:
        gone = shared_rooms().standing(member)
    except Exception:  # the database is away: the membership stands until it answers
        return member
    if gone is None:
        return member
    st.session_state.pop(MEMBER_KEY, None)
    st.session_state[GONE_KEY] = gone
    return None


def _leave() -> None:
    member = st.session_state.pop(MEMBER_KEY, None)
    st.session_state.pop(RETURNED_KEY, None)
    if member is not None:
        try:
            shared_rooms().leave(member)  # its token posts nothing more, wherever it was copied
        except Exception:  # the database is away: the session forgets it all the same
            _log.warning("Leaving a room could not be recorded", exc_info=True)


def _remember(member: Membership | None) -> None:
    """The browser's cookies follow the session: its id always, its membership while in a room
    (until the room expires), none once it left. Handed over only when they change."""
    browser = browser_id()
    room = f"{member.code}:{member.token}" if member else ""
    seconds = max(0, int(member.expires - time.time())) if member else 0
    wanted = (Cookie(BROWSER_COOKIE, browser, BROWSER_DAYS * 86_400), Cookie(ROOM_COOKIE, room, seconds))
    known = st.context.cookies if isinstance(st.context.cookies, Mapping) else {}
    handed = st.session_state.get(COOKIES_KEY) or (
        tuple(Cookie(c.name, known.get(c.name, ""), c.seconds) for c in wanted)  # as the browser came
    )
    if [(c.name, c.value) for c in handed] != [(c.name, c.value) for c in wanted]:
        st.session_state[TICKET_KEY] = hand_over(wanted)
    st.session_state[COOKIES_KEY] = wanted
    if ticket := st.session_state.get(TICKET_KEY):
        with st.sidebar:
            deliver(ticket, key="room_cookies")


def _from_cookie() -> None:
    """A new session of a browser that was in a room: back in it, if the room still has them."""
    if CHECKED_KEY in st.session_state or MEMBER_KEY in st.session_state:
        return
    st.session_state[CHECKED_KEY] = True
    kept = st.context.cookies.get(ROOM_COOKIE) if isinstance(st.context.cookies, Mapping) else None
    code, _, token = (kept if isinstance(kept, str) else "").partition(":")
    if not (code and token):
        return
    try:
        member = shared_rooms().member(code, token)
    except Exception:  # the database is down: joining again will say so
        _log.warning("A membership's cookie could not be checked", exc_info=True)
        return
    if member is not None:
        st.session_state[MEMBER_KEY] = member
        st.session_state[RETURNED_KEY] = True


def _join() -> None:
    code, nickname = st.session_state.get("room_code", ""), st.session_state.get("room_nickname", "")
    if not allowed("room_joins"):
        st.session_state[ERROR_KEY] = "Too many tries: wait a minute, then join again."
        return
    try:
        st.session_state[MEMBER_KEY] = shared_rooms().join(code, nickname, visitor())
    except Exception as err:
        st.session_state[ERROR_KEY] = say(err)
        return
    st.session_state.pop(RETURNED_KEY, None)
    st.session_state.pop(GONE_KEY, None)


# The instructor's link carries its secret after "#" (the address's fragment), which a browser
# never sends: no server's or proxy's log has it. A component (pages/ui/components/link_secret/)
# reads it from the address bar, takes it off (a projector shows the bar) and hands it to the page.


def link_secret(key: str, opened: Callable[[str], None]) -> None:
    """Reads an instructor link's secret from the address bar's fragment (`#key=…`) and calls
    `opened(secret)` before the page's next run."""

    def heard() -> None:
        opened(str((st.session_state.get(key) or {}).get("key") or ""))

    component("link_secret")(key=key, data={}, on_key_change=heard)


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
    altered: str | None = None,
) -> str | None:
    """Posts the run's best result on `challenge` if this visitor is in a room and the board
    doesn't have it yet; a sentence for the page about the board, or None outside a room.
    A run its link can't reproduce stays off the board: points of its own (`own_data` False:
    uploaded, added or erased by hand), or what `altered` says (a weight set by hand...)."""
    member = membership()
    if member is None:
        return None
    room = show_code(member.code)
    if challenge.problem(settings) is not None:
        return "Results with these settings don't go to the class board."
    if not own_data:
        return "Results on uploaded points, or points added or erased by hand, don't go to the class board."
    if altered:
        return (
            f"This run doesn't go to the class board: its link can't reproduce {altered}. "
            "Reset trains it again from the start."
        )
    best = challenge.best(scores)
    if best is None:
        return f"Your best result goes to the class board of room {room} as you train."
    if (member.code, member.token, challenge.key) not in st.session_state.get(SEEDS_KEY, {}):
        room_seed(challenge)  # the room's hidden part isn't known yet (the database was away): ask again
        if (member.code, member.token, challenge.key) not in st.session_state.get(SEEDS_KEY, {}):
            return WAITING_SENTENCE  # its hidden score would be another part's: nothing posted yet
    score = float(getattr(best, challenge.metric))
    sent = st.session_state.setdefault(POSTED_KEY, {})
    key = (member.code, member.token, challenge.key)  # a nickname joined again starts afresh
    last = sent.get(key)  # (score, answer)
    if last is not None and last[1] == CLOSED:
        return CLOSED_SENTENCE
    on_board = last is not None and last[1] in (POSTED, NOT_BETTER)
    better = last is None or (score > last[0] if challenge.metric == "test_acc" else score < last[0])
    if better or not on_board:  # a new best, or one the board doesn't have yet: (again)
        try:
            result = Result(
                challenge.key,
                score,
                hidden(best.epoch) if hidden is not None else None,
                best.epoch,
                challenge.parameters(settings),
                f"/{challenge.page}?{urlencode(dict(link))}",
            )
            # never waiting for the database here: a live panel draws in its turn (pages.serving.turns)
            sent[key] = (score, shared_rooms().post(member, result, inline=False))
        except Exception as err:  # a room gone, the database down, a fault: a sentence, never a traceback
            return say(err)
    answer = sent[key][1]
    if answer == CLOSED:
        return CLOSED_SENTENCE
    if answer == QUEUED:  # written by the rooms' own thread in a moment: the next check says so
        return f"Posting your best to the class board of room {room}…"
    if answer == WAITING:
        return WAITING_SENTENCE
    return f"On the class board of room {room}: your best so far is posted."


def hidden_score(run: Playground, challenge: Challenge, epoch: int) -> float | None:
    """The playground run's score on the hidden test points it watches (Playground.watch_hidden)
    at the end of `epoch`, as its trainer scored them then; if it didn't (the epoch ended before
    the page began watching), the network's as it is now."""
    scored = run.trainer.watch.scored.get(epoch)
    if scored is None:
        if run.hidden is None:
            return None
        scored = run.view.score(run.hidden[2], run.hidden[1])
    loss, accuracy = scored
    return accuracy if challenge.metric == "test_acc" else loss
