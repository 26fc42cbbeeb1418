"""Class board: the instructor starts a room, puts its join link on the projector, and watches
every student's best checked result per challenge arrive, live (mlp.rooms; its parts:
pages/ui/board.py)."""

import html
import re

import streamlit as st

import pages.ui as ui
from mlp.figures.board import ranks_table_parts
from mlp.rooms import Board, Instructor
from mlp.rooms.limits import MAX_MEMBERS, MEMBERS
from mlp.rooms.rooms import MAX_MINUTES, MINUTES, TITLE_CHARS, read_code
from pages.ui import board as parts
from pages.ui.components import style
from pages.ui.live_html import live_html
from pages.ui.rooms import ROOM, allowed, link_secret, shared_rooms, visitor
from pages.ui.text import say

BOARD_KEY = "board_room"  # session state: (code, instructor secret)
SECRET = "key"  # …#key=…: the instructor link's secret, after the "#" (never sent to a server)
# Redrawn twice a second: a result shows within about half a second of its write. A redraw of a
# class of 50 on five challenges costs the server ~10 ms of CPU and the instructor's browser only
# what changed (pages/ui/live_html.py; a row's time is to the minute, so an idle board's tables
# and charts stay as drawn); a challenge draws its top TOP_ROWS (mlp/rooms/limits.py), however
# many post. bench/room_load.py measures both.
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
    if parts.act(Instructor, rooms, code, secret):
        st.session_state[BOARD_KEY] = (code, secret)


# An instructor link: `…/board?room=CODE#key=SECRET` (pages/ui/rooms.link_secret). A link with the
# key in its query (`?key=`, as the board gave long ago) opens nothing: a server or proxy logs
# queries. It leaves the address bar at once, and the board says why.
if SECRET in st.query_params:
    del st.query_params[SECRET]
    st.session_state[parts.ERROR_KEY] = (
        "Instructor links with the key in the address (?key=) no longer open a board: servers log "
        "addresses. Use the link your board shows now, whose key comes after a #."
    )
base = re.sub(r"/board$", "", (st.context.url or "").split("?")[0].rstrip("/"))


def start_room() -> None:
    if not allowed("board_starts"):
        st.session_state[parts.ERROR_KEY] = "Too many rooms started from this page: wait a minute."
        return
    try:
        room, secret = rooms.create(
            st.session_state.board_title,
            int(st.session_state.board_minutes),
            int(st.session_state.board_members),
            visitor(),
        )
    except Exception as err:  # the app's sentence, or what a fault means: never a traceback
        st.session_state[parts.ERROR_KEY] = say(err)
        return
    st.session_state[BOARD_KEY] = (room.code, secret)


if BOARD_KEY not in st.session_state:
    link_secret("board_hash", lambda secret: open_room(st.query_params.get(ROOM, ""), secret))
    with st.form("board_start"):
        st.text_input("Room name", key="board_title", value="Today's class", max_chars=TITLE_CHARS)
        minutes, members = st.columns(2)
        minutes.number_input(
            "Open for (minutes)",
            key="board_minutes",
            min_value=1,
            max_value=MAX_MINUTES,
            value=MINUTES,
            help="Then the room, its results and its nicknames are deleted.",
        )
        members.number_input(
            "Students at most",
            key="board_members",
            min_value=2,
            max_value=MAX_MEMBERS,
            value=MEMBERS,
            help="Joins past this many are refused; you can raise it on the board.",
        )
        st.form_submit_button("Start a room", type="primary", on_click=start_room)
    if error := st.session_state.pop(parts.ERROR_KEY, None):
        st.error(error, icon=":material/error:")
    st.caption(
        "Back to a room you started? Open your instructor link. Students need no account: they "
        "join with the room's code and a nickname, and the nickname is all the room keeps about them."
    )
    st.stop()

code, secret = st.session_state[BOARD_KEY]
try:
    teacher = Instructor(rooms, code, secret)
    room = teacher.room()
except Exception as err:  # the app's sentence, or what a fault means: never a traceback
    del st.session_state[BOARD_KEY]
    st.error(say(err), icon=":material/error:")
    st.stop()

st.html(
    style("board")  # pages/ui/components/styles/board.css
    + f'<div class="board-title">{html.escape(room.title)}</div>'
    + f'<div class="board-code" aria-label="Room code">{room.shown_code}</div>'
)
join, actions = st.columns([3, 2])
with join:
    st.caption("Students open this link, or any page of the app and the sidebar's Class room:")
    st.code(f"{base}/?{ROOM}={room.shown_code}", language=None)
with actions:
    with st.expander("Your instructor link: keep it to yourself", icon=":material/key:"):
        st.code(f"{base}/board?{ROOM}={room.code}#{SECRET}={teacher.secret}", language=None, wrap_lines=True)
        st.caption("It is the only way back to this board (a reload starts a new session).")
        st.button(
            "Replace this link",
            key="board_new_secret",
            icon=":material/key_off:",
            on_click=parts.replace_secret,
            args=(teacher, BOARD_KEY),
            help="If it leaked: a new link opens this board, and the old one nothing.",
        )
    left, right = st.columns(2)
    left.download_button(
        "Download CSV",
        data=teacher.export_csv,
        file_name=f"room-{room.shown_code}.csv",
        mime="text/csv",
        icon=":material/download:",
        on_click="ignore",
    )
    if room.open:
        right.button("Close the room", icon=":material/lock:", on_click=parts.act, args=(teacher.close,))
    else:
        right.caption("Closed: no more joins or results. It is deleted when it expires.")
    parts.room_controls(teacher, room.open, room.locked, room.member_cap)


def live_board() -> None:
    try:
        board: Board = teacher.board()
    except Exception as err:  # the app's sentence, or what a fault means: never a traceback
        st.error(say(err), icon=":material/error:")
        return
    others = ((board.left, "left"), (len(board.hidden), "hidden"), (len(board.removed), "removed"))
    counts = [f"**{board.members}** joined", *(f"{n} {what}" for n, what in others if n)]
    st.markdown(" · ".join(counts) + (" · :material/lock: locked" if board.room.locked else ""))
    if not board.challenges:
        st.info("No results yet: they appear here as students train on a challenge.", icon=parts.WAIT)
    for entry in board.challenges:
        parts.challenge_panel(teacher, entry, base)
    parts.keep_rechecking(teacher, board)
    if board.hidden:  # put back from here
        with st.expander("Hidden from the board", icon=":material/visibility_off:"):
            rows = [{"Nickname": n, parts.SHOW: n} for n in board.hidden]
            table = ranks_table_parts(
                rows, None, "Hidden from the board", {parts.SHOW: parts.SHOW}, "Nickname"
            )
            live_html("board_hidden", *table, on_click=lambda who: parts.act(teacher.hide, [who], False))
    if error := st.session_state.pop(parts.ERROR_KEY, None):
        st.error(error, icon=":material/error:")


# While the instructor chooses students (the panel is open), the board holds still: a redraw
# twice a second would close the list under the pointer and wipe what was typed. The panel comes
# before the board: what a full run draws after a fragment whose timer is running can vanish
# when the timer's rerun lands just behind that run (Streamlit 1.67's page: opening the panel
# lost it, the whole expander, in 3 of 4 runs of 15-60 openings under load; 0 of 100 with the
# panel first). tests/test_board.py holds the order.
choosing = bool(st.session_state.get(parts.STUDENTS_KEY))
parts.students_panel(teacher)
st.fragment(run_every=None if choosing else REFRESH_SECONDS)(live_board)()
