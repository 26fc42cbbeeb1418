"""What a board shows of a room: each challenge's entries ranked, and the CSV of everything.

Live, a challenge ranks on its visible test points; once the instructor closes it, on the hidden
part (Kaggle's lesson: the class sees which ranks held), with each ranked entry re-trained from
its link on the server and marked if the re-run misses what was posted (mlp/rooms/recheck.py).
A board draws the top TOP_ROWS of a challenge and counts the rest.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from datetime import UTC, datetime

from mlp.curriculum.challenges import CHALLENGES, Challenge
from mlp.rooms.store import Cursor

# What a re-run at Close found (results.rerun)
RERUN_QUEUED, RERUN_OK, RERUN_MISSED, RERUN_FAILED = "queued", "reproduced", "missed", "failed"


@dataclass(frozen=True)
class Room:
    """A room as its board shows it: its code, title, times, and who may join."""

    code: str
    title: str
    created: float
    expires: float
    closed: float | None
    locked: bool = False  # no new joins; members keep posting
    member_cap: int = 60

    @property
    def open(self) -> bool:
        return self.closed is None

    @property
    def shown_code(self) -> str:
        return show_code(self.code)


@dataclass(frozen=True)
class Entry:
    """One member's best result on one challenge, as a row of the board."""

    nickname: str
    score: float
    hidden_score: float | None
    met: bool
    epoch: int
    parameters: int
    link: str
    posted: float
    rank: int  # on the visible part, 1 the best
    final_rank: int | None = None  # on the hidden part, once the challenge is closed
    rerun: str | None = None  # what its re-run at Close found (RERUN_*), None before
    rerun_score: float | None = None  # the re-run's score on the visible points
    gone: bool = False  # the member left the room (their results stay)


@dataclass(frozen=True)
class ChallengeBoard:
    """One challenge's part of the board: its top rows and a count of the rest."""

    challenge: Challenge
    entries: list[Entry]  # the top TOP_ROWS
    closed: bool
    count: int = 0  # entries in all
    met: int = 0  # of them, the ones that met the goal

    @property
    def more(self) -> int:
        """Entries not drawn."""
        return self.count - len(self.entries)


@dataclass(frozen=True)
class Board:
    """What the instructor's board shows of a room: its members and each challenge's ranks."""

    room: Room
    members: int  # joined and still in the room (hidden ones included)
    hidden: list[str]  # nicknames the instructor took off the board
    challenges: list[ChallengeBoard] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # nicknames the instructor removed from the room
    left: int = 0  # members who left (their results stay on the board)
    nicknames: list[str] = field(default_factory=list)  # everyone not removed, in the order they joined


def show_code(code: str) -> str:
    half = len(code) // 2
    return f"{code[:half]}-{code[half:]}"


def goodness(challenge: Challenge, score: float) -> float:
    """Higher is better, whatever the metric."""
    return score if challenge.metric == "test_acc" else -score


# One shown entry (not hidden, not removed) of the room's, its hidden score a reproduced entry's
# re-run's (mlp/rooms/recheck.py): the board's rows, ordered live or on the hidden part
_SHOWN_FROM = """
    FROM results r JOIN members m ON m.room = r.room AND m.member = r.member
    WHERE r.room = ? AND r.challenge = ? AND m.hidden = 0 AND m.removed = 0"""
_HIDDEN = "CASE WHEN r.rerun = ? AND r.rerun_hidden IS NOT NULL THEN r.rerun_hidden ELSE r.hidden_score END"
_SHOWN = f"""
    SELECT r.challenge, m.nickname, r.score, {_HIDDEN}, r.met, r.epoch, r.parameters, r.link, r.posted,
        r.rerun, r.rerun_score, m.gone
{_SHOWN_FROM}"""


def board_rows(db: Cursor, code: str, closed: set[str], top: int) -> tuple[dict[str, list[tuple]], dict]:
    """Each challenge's top `top` shown entries, ranked by the database, and each challenge's
    (entries, met) counts. A closed challenge's top is on the hidden part (lower better for a
    loss; no hidden score ranks last), each with its live rank. Measured with 500 members on six
    challenges: ~9 ms of a server's time a redraw, where ranking every entry in one query took
    ~25 ms (the index on a room's results by challenge and goodness serves the live tops)."""
    counts = {
        key: (count, int(met or 0))
        for key, count, met in db.all(
            "SELECT r.challenge, COUNT(*), SUM(r.met) FROM results r JOIN members m "
            "ON m.room = r.room AND m.member = r.member WHERE r.room = ? AND m.hidden = 0 AND m.removed = 0 "
            "GROUP BY r.challenge",
            (code,),
        )
    }
    rows = {}
    for key in counts:
        if key not in CHALLENGES:
            continue
        params: tuple = (RERUN_OK, code, key)
        order = "r.goodness DESC"
        if key not in closed:
            found = db.all(f"{_SHOWN} ORDER BY {order}, r.posted LIMIT ?", (*params, top))
            rows[key] = [(*r, i, None) for i, r in enumerate(found, start=1)]  # live rank: its place
            continue
        # Closed: the top on the hidden part (its score's expression again: PostgreSQL orders by no
        # alias inside an expression), each with its live rank (one indexed pass over the names)
        direction = " DESC" if CHALLENGES[key].metric == "test_acc" else ""
        hidden = f"CASE WHEN {_HIDDEN} IS NULL THEN 1 ELSE 0 END, {_HIDDEN}{direction}, {order}"
        found = db.all(f"{_SHOWN} ORDER BY {hidden}, r.posted LIMIT ?", (*params, RERUN_OK, RERUN_OK, top))
        live = {
            name: i
            for i, (name,) in enumerate(
                db.all(f"SELECT m.nickname{_SHOWN_FROM} ORDER BY {order}, r.posted", (code, key)), 1
            )
        }
        rows[key] = [(*r, live[r[1]], i) for i, r in enumerate(found, start=1)]
    return rows, counts


def challenge_boards(rows: dict[str, list[tuple]], counts: dict, closed: set[str]) -> list[ChallengeBoard]:
    """Each challenge with entries, or closed, in the app's order, from board_rows."""
    boards = []
    for key, challenge in CHALLENGES.items():
        mine, shut = rows.get(key, []), key in closed
        if not mine and not shut:
            continue
        entries = [
            Entry(
                *(r[1], r[2], r[3], bool(r[4]), r[5], r[6], r[7], r[8]),
                rank=r[12],
                final_rank=r[13],
                rerun=r[9],
                rerun_score=r[10],
                gone=r[11] is not None,
            )
            for r in mine
        ]
        boards.append(ChallengeBoard(challenge, entries, shut, *counts.get(key, (0, 0))))
    return boards


CSV_HEADER = [
    "room",
    "challenge",
    "nickname",
    "score",
    "hidden part score",
    "met",
    "epoch",
    "parameters",
    "posted (UTC)",
    "setup link",
    "hidden from the board",
    "left the room",
    "removed",
    "re-run at close",
    "re-run score",
]
# A row of the export's query: challenge, nickname, score, hidden score, met, epoch, parameters,
# posted, link, hidden, gone, removed, rerun, rerun score
CSV_COLUMNS = (
    "r.challenge, m.nickname, r.score, r.hidden_score, r.met, r.epoch, r.parameters, r.posted, r.link, "
    "m.hidden, m.gone, m.removed, r.rerun, r.rerun_score"
)


def csv_text(room: Room, rows: list[tuple]) -> str:
    """The export's text: a header, then a row per member and challenge (CSV_COLUMNS)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for r in rows:
        posted = datetime.fromtimestamp(r[7], UTC).strftime("%Y-%m-%d %H:%M:%S")
        writer.writerow(
            [
                room.shown_code,
                r[0],
                _cell(r[1]),
                r[2],
                "" if r[3] is None else r[3],
                "yes" if r[4] else "no",
                r[5],
                r[6],
                posted,
                _cell(r[8]),
                "yes" if r[9] else "no",
                "yes" if r[10] is not None and not r[11] else "no",
                "yes" if r[11] else "no",
                r[12] or "",
                "" if r[13] is None else r[13],
            ]
        )
    return out.getvalue()


def _cell(text: str) -> str:
    """A CSV cell a spreadsheet shows as text, never runs as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
