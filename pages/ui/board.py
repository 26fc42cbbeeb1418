"""The class board's parts: the room's controls, a challenge's ranks, the students panel, and the
re-runs at Close (pages/board.py puts them together).

Every action goes through `act`: what went wrong is said on the board (a sentence, never a
traceback), and the instructor's secret is checked again by each (mlp/rooms/instructor.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import streamlit as st

from mlp.figures.board import ranks_table_parts, score_spread_svg
from mlp.rooms import Board, Instructor
from mlp.rooms.limits import MAX_MEMBERS
from mlp.rooms.ranks import RERUN_FAILED, RERUN_MISSED, RERUN_OK, RERUN_QUEUED, ChallengeBoard, Entry
from mlp.rooms.recheck import Recheck
from pages.serving.jobs import Job, shared_executor
from pages.ui.live_html import live_html
from pages.ui.mnist import dataset
from pages.ui.rooms import shared_rooms
from pages.ui.text import literal, say

ERROR_KEY = "board_error"  # session state: what the last action couldn't do, in a sentence
RECHECKS_KEY = "board_rechecks"  # session state: {challenge: the job re-running its entries}
STUDENTS_KEY = "board_students"  # session state: the students panel is open (the board holds still)
HIDE, SHOW = "Hide", "Show again"  # a row's buttons (on its nickname)
WAIT = ":material/hourglass_top:"


def act(action: Callable[..., object], *args: object) -> bool:
    """A button's action on the room; what went wrong is said on the board, not raised."""
    try:
        action(*args)
    except Exception as err:  # the app's sentence, or what a fault means: never a traceback
        st.session_state[ERROR_KEY] = say(err)
        return False
    return True


def room_controls(teacher: Instructor, room_open: bool, locked: bool, cap: int) -> None:
    """Lock the room to new joins, and its member cap (folded away: the board comes first)."""
    if not room_open:
        return
    with st.expander("Who may join", icon=":material/how_to_reg:"):
        _join_controls(teacher, locked, cap)


def _join_controls(teacher: Instructor, locked: bool, cap: int) -> None:
    st.toggle(
        "Lock the room",
        value=locked,
        key="board_locked",
        on_change=lambda: act(teacher.lock, bool(st.session_state.board_locked)),
        help="No new joins; everyone in the room keeps posting. Turn it off to let latecomers in.",
    )
    st.number_input(
        "Students at most",
        min_value=2,
        max_value=MAX_MEMBERS,
        value=cap,
        key="board_cap",
        on_change=lambda: act(teacher.set_member_cap, int(st.session_state.board_cap)),
        help="Joins past this many are refused with a sentence; those in the room stay.",
    )


def replace_secret(teacher: Instructor, key: str) -> None:
    """A new instructor link; the old one (on another screen, in a leaked message) opens nothing."""
    if act(teacher.new_secret):
        st.session_state[key] = (teacher.code, teacher.secret)
        st.toast("A new instructor link: the old one no longer opens this board.")


def ranks(board: ChallengeBoard, base: str) -> list[dict[str, object]]:
    """The challenge's entries as a table (text, nicknames included): live, ranked on the visible
    test points; once closed, ranked on the hidden ones, with the live rank and what each entry's
    re-run found beside."""
    now, percent = time.time(), board.challenge.metric == "test_acc"

    def shown(value: float | None) -> str:
        return "none" if value is None else f"{value:.1%}" if percent else f"{value:.3f}"

    def rerun(e: Entry) -> str:
        found = {RERUN_QUEUED: "re-running…", RERUN_FAILED: "couldn't re-run", None: "not yet"}
        mark = {RERUN_OK: "✓ reproduced", RERUN_MISSED: "✗ missed"}
        return f"{mark[e.rerun]} {shown(e.rerun_score)}" if e.rerun in mark else found.get(e.rerun, "")

    def name(e: Entry) -> str:
        return e.nickname + (" (left)" if e.gone else "")

    if board.closed:
        return [
            {
                "Rank": e.final_rank,
                "Nickname": name(e),
                "Hidden points": shown(e.hidden_score),
                "Live": shown(e.score),
                "Live rank": e.rank,
                "Change": _change(e.rank, e.final_rank),
                "Re-run": rerun(e),
                "Setup": base + e.link,
                HIDE: e.nickname,
            }
            for e in board.entries
        ]
    return [
        {
            "Rank": e.rank,
            "Nickname": name(e),
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


def challenge_panel(teacher: Instructor, entry: ChallengeBoard, base: str) -> None:
    """One challenge: its goal and counts, Close, the spread of scores, and its ranks (the top
    of them, the rest counted)."""
    c = entry.challenge
    with st.container(border=True, key=f"board_{c.key}"):
        # The goal, its counts and its button beside the chart; the table under both, full width.
        head, chart = st.columns([3, 2], vertical_alignment="center")
        head.markdown(f"**{c.goal}**  \n{entry.count} in · {entry.met} met the goal")
        if entry.closed:
            head.caption("Closed: ranked again on the hidden test points; each entry re-run from its link.")
        else:
            head.button(
                "Close and rank on hidden points",
                key=f"board_close_{c.key}",
                on_click=close_challenge,
                args=(teacher, c.key),
                help="No more posts; the board ranks again on test points no student has seen, and "
                "the server re-trains each entry from its link to check its score.",
            )
        if entry.entries:
            with chart:
                scores = [e.score for e in entry.entries]
                live_html(f"board_chart_{c.key}", score_spread_svg(scores, c.target, c.metric))
            table = ranks_table_parts(ranks(entry, base), "Setup", f"Ranks: {c.goal}", {HIDE: HIDE}, HIDE)
            live_html(f"board_ranks_{c.key}", *table, on_click=lambda who: hide(teacher, [who]))
            if entry.more:
                st.caption(f"… and {entry.more:,} more below these {len(entry.entries)}: the CSV has all.")


def students_panel(teacher: Instructor) -> None:
    """Hide several students at once, show them again, remove them (off the board, their browser
    and network refused), or let removed ones back in."""
    try:
        board = teacher.board(top=0)
    except Exception as err:  # the app's sentence, or what a fault means: never a traceback
        st.error(say(err), icon=":material/error:")
        return
    with st.expander(
        "Students: hide or remove several", icon=":material/group:", key=STUDENTS_KEY, on_change="rerun"
    ) as panel:
        if not panel.open:
            return
        st.caption("The board holds still while this is open.")
        chosen = st.multiselect(
            "Students", board.nicknames, key="board_chosen", placeholder="Choose one or more nicknames"
        )
        hide_, show_, remove_, refresh = st.columns(4)
        hide_.button("Hide", key="board_hide", disabled=not chosen, on_click=hide, args=(teacher, chosen))
        show_.button(
            "Show again",
            key="board_show",
            disabled=not chosen,
            on_click=act,
            args=(teacher.hide, chosen, False),
        )
        remove_.button(
            "Remove",
            key="board_remove",
            type="primary",
            disabled=not chosen,
            on_click=act,
            args=(teacher.remove, chosen),
            help="Ends their membership and takes their results off the board (the CSV keeps them). "
            "Their browser, and anyone on their network, can't join again until you let them back in.",
        )
        refresh.button("Refresh the list", key="board_refresh", icon=":material/refresh:")
        if board.removed:
            back = st.multiselect("Removed", board.removed, key="board_removed", placeholder="Let back in…")
            let_in = (teacher.let_in, back)
            st.button("Let back in", key="board_let_in", disabled=not back, on_click=act, args=let_in)


def hide(teacher: Instructor, nicknames: list[str]) -> None:
    if act(teacher.hide, nicknames):  # their rows are gone from every challenge: say where to
        shown = ", ".join(literal(n, 24) for n in nicknames[:3]) + (" and more" if len(nicknames) > 3 else "")
        st.toast(f"{shown} off the board. *Hidden from the board* puts them back.")


def close_challenge(teacher: Instructor, challenge: str) -> None:
    if act(teacher.close_challenge, challenge):
        recheck(teacher, challenge)


def recheck(teacher: Instructor, challenge: str, again: bool = False) -> None:
    """Re-run the closed challenge's entries from their links, as one job of this visitor's on the
    shared executor (one at a time per challenge), the top of the board first."""
    jobs: dict[str, Job] = st.session_state.setdefault(RECHECKS_KEY, {})
    if (job := jobs.get(challenge)) is not None and job.active:
        return
    try:
        entries = teacher.reruns(challenge, again=again)
    except Exception as err:  # the app's sentence, or what a fault means: never a traceback
        st.session_state[ERROR_KEY] = say(err)
        return
    if entries:
        executor = shared_executor()
        work = Recheck(shared_rooms(), teacher.code, challenge, entries, dataset, executor.threads_per_job)
        jobs[challenge] = executor.submit(work, f"re-run {challenge}")


def keep_rechecking(teacher: Instructor, board: Board) -> None:
    """A closed challenge whose entries aren't all re-run (an entry shown again, a job that ended
    with its server): re-run them. Entries another job marked queued are taken again only once a
    session (the first time it sees them)."""
    seen = st.session_state.setdefault("board_recheck_seen", set())
    for entry in board.challenges:
        waiting = [e for e in entry.entries if e.rerun in (None, RERUN_QUEUED)]
        if entry.closed and waiting:
            recheck(teacher, entry.challenge.key, again=entry.challenge.key not in seen)
            seen.add(entry.challenge.key)


def _ago(seconds: float) -> str:
    """When a result came, to the minute: a row that doesn't change isn't redrawn."""
    minutes = int(max(0.0, seconds) // 60)
    return "just now" if minutes == 0 else f"{minutes} min ago"


def _change(rank: int, final: int | None) -> str:
    if final is None or final == rank:
        return "="
    return f"↑{rank - final}" if final < rank else f"↓{final - rank}"
