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
from mlp.rooms.limits import TOP_ROWS

# What a re-run at Close found (results.rerun)
RERUN_QUEUED, RERUN_OK, RERUN_MISSED, RERUN_FAILED = "queued", "reproduced", "missed", "failed"


@dataclass(frozen=True)
class Room:
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


# A row of the board's query: challenge, nickname, score, hidden score, met, epoch, parameters,
# link, posted, goodness, rerun, rerun score, gone, rerun's hidden score
RESULT_COLUMNS = (
    "r.challenge, m.nickname, r.score, r.hidden_score, r.met, r.epoch, r.parameters, r.link, r.posted, "
    "r.goodness, r.rerun, r.rerun_score, m.gone, r.rerun_hidden"
)


def ranked(key: str, rows: list[tuple], closed: set[str], top: int = TOP_ROWS) -> ChallengeBoard | None:
    """One challenge's board from the room's shown results (RESULT_COLUMNS); None if it has none
    and is open. Closed, it ranks on the hidden part and draws the top of that ranking."""
    challenge = CHALLENGES[key]
    # A reproduced entry's hidden score is its re-run's, measured on the server (mlp/rooms/recheck.py)
    rows = [(*r[:3], r[13] if r[10] == RERUN_OK and r[13] is not None else r[3], *r[4:13]) for r in rows]
    mine = sorted((r for r in rows if r[0] == key), key=lambda r: (-r[9], r[8]))
    if not mine and key not in closed:
        return None
    live = {r[1]: i for i, r in enumerate(mine, start=1)}
    final = {}
    if key in closed:  # ranked again on the hidden part; no hidden score ranks last, in visible order
        mine = sorted(
            mine,
            key=lambda r: (r[3] is None, -goodness(challenge, r[3]) if r[3] is not None else 0, -r[9], r[8]),
        )
        final = {r[1]: i for i, r in enumerate(mine, start=1)}  # and its top is what the board draws
    entries = [
        Entry(
            r[1],
            r[2],
            r[3],
            bool(r[4]),
            *r[5:9],
            live[r[1]],
            final.get(r[1]),
            r[10],
            r[11],
            r[12] is not None,
        )
        for r in mine[:top]
    ]
    return ChallengeBoard(challenge, entries, key in closed, len(mine), sum(bool(r[4]) for r in mine))


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
