"""Class board: the instructor starts a room, puts its join link on the projector, and watches
every student's best checked result per challenge arrive, live (mlp.rooms)."""

import html
import re
import time
from collections.abc import Callable

import streamlit as st

import pages.ui as ui
from mlp.figures.board import TABLE_CSS, ranks_table_parts, score_spread_svg
from mlp.rooms import Board
from mlp.rooms.rooms import MAX_MINUTES, MINUTES, TITLE_CHARS, ChallengeBoard, read_code
from pages.ui.live_html import live_html
from pages.ui.rooms import ROOM, allowed, link_secret, shared_rooms
from pages.ui.text import literal, say

BOARD_KEY = "board_room"  # session state: (code, instructor secret)
SECRET = "key"  # ?key=…: the instructor link's secret, taken off the address bar once read
HIDE, SHOW = "Hide", "Show again"  # a row's buttons (on its nickname)
WAIT = ":material/hourglass_top:"
# Redrawn twice a second: a result shows within about half a second of its write. A redraw of a
# class of 50 on five challenges costs the server ~10 ms of CPU and the instructor's browser only
# what changed (pages/ui/live_html.py; a row's time is to the minute, so an idle board's tables
# and charts stay as drawn). bench/room_load.py measures both.
REFRESH_SECONDS = 0.5

ui.require_shell()
ui.page_header(
    "Class board",
    "Start a room, put its code on the projector, and every student's best result on each "
    "challenge shows up here as the app checks it.",
)
try:
    rooms = shared_rooms()
except Exception as err:  # the app's sentence, or what a fault means: never a traceback
    st.error(f"The class board can't open its database. {say(err)}", icon=":material/error:")
    st.stop()


def open_room(code_text: str, secret: str) -> None:
    """The room an instructor link names, if its secret opens it; else a sentence on the board."""
    code = read_code(code_text) or ""
    try:
        rooms.instructed(code, secret)
        st.session_state[BOARD_KEY] = (code, secret)
    except Exception as err:  # the app's sentence, or what a fault means: never a traceback
        st.session_state.board_error = say(err)


# An instructor link: `…/board?room=CODE#key=SECRET` (pages/ui/rooms.link_secret). A link with
# `?key=` (as the board gave before) still opens its room, and leaves the address bar at once too.
if SECRET in st.query_params:
    open_room(st.query_params.get(ROOM, ""), st.query_params[SECRET])
    del st.query_params[SECRET]
base = re.sub(r"/board$", "", (st.context.url or "").split("?")[0].rstrip("/"))


def act(action: Callable[..., object], *args: object) -> None:
    """A button's action on the room; what went wrong is said on the board, not raised."""
    try:
        action(*args)
    except Exception as err:  # the app's sentence, or what a fault means: never a traceback
        st.session_state.board_error = say(err)


def start_room() -> None:
    if not allowed("board_starts"):
        st.session_state.board_error = "Too many rooms started from this page: wait a minute."
        return
    try:
        room, secret = rooms.create(st.session_state.board_title, int(st.session_state.board_minutes))
    except Exception as err:  # the app's sentence, or what a fault means: never a traceback
        st.session_state.board_error = say(err)
        return
    st.session_state[BOARD_KEY] = (room.code, secret)


if BOARD_KEY not in st.session_state:
    link_secret("board_hash", lambda secret: open_room(st.query_params.get(ROOM, ""), secret))
    with st.form("board_start"):
        st.text_input("Room name", key="board_title", value="Today's class", max_chars=TITLE_CHARS)
        st.number_input(
            "Open for (minutes)", key="board_minutes", min_value=1, max_value=MAX_MINUTES, value=MINUTES,
            help="Then the room, its results and its nicknames are deleted.",
        )  # fmt: skip
        st.form_submit_button("Start a room", type="primary", on_click=start_room)
    if error := st.session_state.pop("board_error", None):
        st.error(error, icon=":material/error:")
    st.caption(
        "Back to a room you started? Open your instructor link. Students need no account: they "
        "join with the room's code and a nickname, and the nickname is all the room keeps about them."
    )
    st.stop()

code, secret = st.session_state[BOARD_KEY]
try:
    room = rooms.instructed(code, secret)
except Exception as err:  # the app's sentence, or what a fault means: never a traceback
    del st.session_state[BOARD_KEY]
    st.error(say(err), icon=":material/error:")
    st.stop()

st.html(
    "<style>.board-code{font-size:3.2rem;font-weight:700;letter-spacing:.12em;line-height:1.1}"
    f".board-title{{font-size:1.25rem;font-weight:600}}{TABLE_CSS}</style>"
    f'<div class="board-title">{html.escape(room.title)}</div>'
    f'<div class="board-code" aria-label="Room code">{room.shown_code}</div>'
)
join, actions = st.columns([3, 2])
with join:
    st.caption("Students open this link, or any page of the app and the sidebar's Class room:")
    st.code(f"{base}/?{ROOM}={room.shown_code}", language=None)
with actions:
    with st.expander("Your instructor link: keep it to yourself", icon=":material/key:"):
        st.code(f"{base}/board?{ROOM}={room.code}#{SECRET}={secret}", language=None, wrap_lines=True)
        st.caption("It is the only way back to this board (a reload starts a new session).")
    left, right = st.columns(2)
    left.download_button(
        "Download CSV", data=lambda: rooms.export_csv(code, secret), file_name=f"room-{room.shown_code}.csv",
        mime="text/csv", icon=":material/download:", on_click="ignore",
    )  # fmt: skip
    if room.open:
        right.button("Close the room", icon=":material/lock:", on_click=act, args=(rooms.close, code, secret))
    else:
        right.caption("Closed: no more joins or results. It is deleted when it expires.")


def ranks(board: ChallengeBoard) -> list[dict[str, object]]:
    """The challenge's entries as a table (text, nicknames included): live, ranked on the visible
    test points; once closed, ranked on the hidden ones, with the live rank beside."""
    now, percent = time.time(), board.challenge.metric == "test_acc"

    def shown(value: float | None) -> str:
        return "none" if value is None else f"{value:.1%}" if percent else f"{value:.3f}"

    if board.closed:
        return [
            {
                "Rank": e.final_rank,
                "Nickname": e.nickname,
                "Hidden points": shown(e.hidden_score),
                "Live": shown(e.score),
                "Live rank": e.rank,
                "Change": _change(e.rank, e.final_rank),
                "Setup": base + e.link,
                HIDE: e.nickname,
            }
            for e in sorted(board.entries, key=lambda e: e.final_rank or 0)
        ]
    return [
        {
            "Rank": e.rank,
            "Nickname": e.nickname,
            "Score": shown(e.score),
            "Met": "yes" if e.met else "",
            "Epoch": e.epoch,
            "Parameters": e.parameters,
            "Posted": _ago(now - e.posted),
            "Setup": base + e.link,
            HIDE: e.nickname,
        }
        for e in board.entries
    ]


def _ago(seconds: float) -> str:
    """When a result came, to the minute: a row that doesn't change isn't redrawn."""
    minutes = int(max(0.0, seconds) // 60)
    return "just now" if minutes == 0 else f"{minutes} min ago"


def hide(nickname: str) -> None:
    act(rooms.hide, code, secret, nickname)
    if "board_error" not in st.session_state:  # the row is gone from every challenge: say where to
        st.toast(f"{literal(nickname)} is off the board. *Hidden from the board* puts them back.")


def _change(rank: int, final: int | None) -> str:
    if final is None or final == rank:
        return "="
    return f"↑{rank - final}" if final < rank else f"↓{final - rank}"


@st.fragment(run_every=REFRESH_SECONDS)
def live_board() -> None:
    try:
        board: Board = rooms.board(code, secret)
    except Exception as err:  # the app's sentence, or what a fault means: never a traceback
        st.error(say(err), icon=":material/error:")
        return
    st.markdown(f"**{board.members}** joined" + (f" · {len(board.hidden)} hidden" if board.hidden else ""))
    if not board.challenges:
        st.info("No results yet: they appear here as students train on a challenge.", icon=WAIT)
    for entry in board.challenges:
        c = entry.challenge
        with st.container(border=True, key=f"board_{c.key}"):
            # The goal, its counts and its button beside the chart; the table under both, full width.
            head, chart = st.columns([3, 2], vertical_alignment="center")
            head.markdown(f"**{c.goal}**  \n{entry.count} in · {entry.met} met the goal")
            if entry.closed:
                head.caption("Closed: ranked again on the hidden test points.")
            else:
                head.button(
                    "Close and rank on hidden points", key=f"board_close_{c.key}",
                    on_click=act, args=(rooms.close_challenge, code, secret, c.key),
                    help="No more posts; the board ranks again on test points no student has seen.",
                )  # fmt: skip
            if entry.entries:
                scores = [e.score for e in entry.entries]
                with chart:
                    live_html(f"board_chart_{c.key}", score_spread_svg(scores, c.target, c.metric))
                table = ranks_table_parts(ranks(entry), "Setup", f"Ranks: {c.goal}", {HIDE: HIDE}, "Nickname")
                live_html(f"board_ranks_{c.key}", *table, on_click=hide)
    if board.hidden:  # put back from here
        with st.expander("Hidden from the board", icon=":material/visibility_off:"):
            rows = [{"Nickname": n, SHOW: n} for n in board.hidden]
            table = ranks_table_parts(rows, None, "Hidden from the board", {SHOW: SHOW}, "Nickname")
            live_html("board_hidden", *table, on_click=lambda who: act(rooms.hide, code, secret, who, False))
    if error := st.session_state.pop("board_error", None):
        st.error(error, icon=":material/error:")


live_board()
