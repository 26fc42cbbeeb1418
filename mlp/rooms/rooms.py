"""A class's room: a join code for the projector, an instructor's secret, and every student's best
checked result per challenge, ranked live.

What a room keeps about a student is the nickname they typed and their results: no account, no
address. Codes and secrets come from `secrets`; the instructor's secret and each member's are
kept as SHA-256 digests, so the database alone lets no one act as either. A member posts only
through the token their own session holds (Membership), and only what the app's checker
measured (Result): the board is the checker's word, never a number a student typed.

Kaggle's lesson: a result carries its score on the challenge's visible test points, which rank
live, and on a hidden part no one sees while the challenge is open. When the instructor closes
a challenge, the board ranks again on the hidden part, and a class sees which ranks held.

A room lasts the class: it expires after the minutes it was opened for (purge() deletes it and
everything in it), and the instructor may close it sooner (no more joins or posts; its board
and CSV stay until it expires).
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import logging
import math
import secrets
import threading
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from mlp.curriculum.challenges import CHALLENGES, Challenge, Score
from mlp.rooms.store import Cursor, Store, StoreError

ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # no 0/O, 1/I/L: read off a projector at the back
CODE_LENGTH = 8  # 31^8 ≈ 8.5e11 codes, shown as ABCD-EFGH
NICKNAME_CHARS = 24
TITLE_CHARS = 60
LINK_CHARS = 2000
BLANKS = set(
    "\u115f\u1160\u3164\uffa0\u2800"
)  # Hangul fillers, the blank braille cell: letters that show nothing
MINUTES = 90  # a room's life unless the instructor says otherwise
MAX_MINUTES = 12 * 60
POST_SECONDS = 1.0  # a member's posts at most this often; the page posts its latest best at its next check
PURGE_SECONDS = 60.0  # expired rooms are looked for at most this often
_log = logging.getLogger(__name__)
# What became of a post (Rooms.post)
POSTED, QUEUED, NOT_BETTER, TOO_LATE, CLOSED = "posted", "queued", "not better", "too late", "closed"


class RoomError(ValueError):
    """Why a room can't do what was asked: a sentence of the app's own words (a nickname or a
    code a person typed is never in it)."""


@dataclass(frozen=True)
class Room:
    code: str
    title: str
    created: float
    expires: float
    closed: float | None

    @property
    def open(self) -> bool:
        return self.closed is None

    @property
    def shown_code(self) -> str:
        return show_code(self.code)


@dataclass(frozen=True)
class Membership:
    """A student's place in a room: what their session holds (the token is their secret)."""

    code: str
    nickname: str
    token: str


@dataclass(frozen=True)
class Result:
    """What the checker measured of a run on a challenge."""

    challenge: str
    score: float  # the challenge's metric on its visible test points
    hidden_score: float | None  # the same on the hidden part
    epoch: int
    parameters: int
    link: str  # the setup, as a link inside the app ("/playground?...")


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


@dataclass(frozen=True)
class ChallengeBoard:
    challenge: Challenge
    entries: list[Entry]
    closed: bool

    @property
    def count(self) -> int:
        return len(self.entries)

    @property
    def met(self) -> int:
        return sum(e.met for e in self.entries)


@dataclass(frozen=True)
class Board:
    room: Room
    members: int  # joined, hidden ones included
    hidden: list[str]  # nicknames the instructor took off the board
    challenges: list[ChallengeBoard] = field(default_factory=list)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def show_code(code: str) -> str:
    half = len(code) // 2
    return f"{code[:half]}-{code[half:]}"


def read_code(text: str) -> str | None:
    """A code as typed ("abcd efgh", "ABCD-EFGH"), or None if it can't be one."""
    code = "".join(ch for ch in text.upper() if ch not in " -\t")
    if len(code) != CODE_LENGTH or any(ch not in ALPHABET for ch in code):
        return None
    return code


def clean_text(text: str, limit: int, what: str) -> str:
    """`text` as it will be shown: no control or invisible format characters, spaces collapsed,
    at most `limit` characters. Shown literally (never Markdown or HTML) wherever it appears."""
    kept = "".join(
        " " if ch.isspace() else ch
        for ch in text
        if (unicodedata.category(ch)[0] != "C" or ch.isspace()) and ch not in BLANKS
    )
    cleaned = " ".join(kept.split())
    if not any(ch.isalnum() for ch in cleaned):  # no letter or digit: nothing to read
        raise RoomError(f"The {what} is empty: type a few letters.")
    if len(cleaned) > limit:
        raise RoomError(f"The {what} is {len(cleaned)} characters long; at most {limit}, please.")
    return cleaned


def nickname_key(nickname: str) -> str:
    """What makes two nicknames the same one: their letters whatever their case or width
    ("Ana", "ＡＮＡ" and "ana" are one)."""
    return unicodedata.normalize("NFKC", nickname).casefold()


def _goodness(challenge: Challenge, score: float) -> float:
    """Higher is better, whatever the metric."""
    return score if challenge.metric == "test_acc" else -score


class Rooms:
    """The rooms of one database: `Rooms(Store())`."""

    def __init__(
        self,
        store: Store,
        clock: Callable[[], float] = time.time,
        later: Callable[[float, Callable], object] | None = None,
    ) -> None:
        """`later(seconds, call)` calls `call()` after `seconds` (a daemon timer thread unless
        given: tests call flush() themselves)."""
        self.store, self.clock = store, clock
        self.later = later or _timer
        self._lock = threading.Lock()
        self._pace = _Pace()
        self._purged = -math.inf
        self.later(0.0, self._sweep)  # now, then every PURGE_SECONDS

    # --- the instructor's -------------------------------------------------------------------

    def create(self, title: str, minutes: int = MINUTES) -> tuple[Room, str]:
        """A new room and the instructor's secret (shown once; only its digest is kept)."""
        title = clean_text(title, TITLE_CHARS, "room's name")
        if not 1 <= minutes <= MAX_MINUTES:
            raise RoomError(f"A room lasts 1 to {MAX_MINUTES} minutes; {minutes} was asked.")
        self.purge(force=True)
        secret, now = secrets.token_urlsafe(24), self.clock()
        with self.store.transaction() as db:
            while True:
                code = new_code()
                added = db.execute(
                    "INSERT INTO rooms (code, secret, title, created, expires) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT DO NOTHING",
                    (code, digest(secret), title, now, now + 60 * minutes),
                )
                if added:
                    break
        return Room(code, title, now, now + 60 * minutes, None), secret

    def instructed(self, code: str, secret: str) -> Room:
        """The room whose instructor holds `secret`; a RoomError (the same for a wrong code or a
        wrong secret) otherwise."""
        with self.store.transaction(write=False) as db:
            row = db.one(
                "SELECT code, title, created, expires, closed, secret FROM rooms WHERE code = ?", (code,)
            )
        if row is None or not hmac.compare_digest(row[5], digest(secret)) or row[3] <= self.clock():
            raise RoomError(
                "This instructor link doesn't open a room: it was mistyped, or the room has expired."
            )
        return Room(*row[:5])

    def close(self, code: str, secret: str) -> None:
        """No more joins or posts; the board and its CSV stay until the room expires."""
        self.instructed(code, secret)
        with self.store.transaction() as db:
            db.execute("UPDATE rooms SET closed = ? WHERE code = ? AND closed IS NULL", (self.clock(), code))

    def close_challenge(self, code: str, secret: str, challenge: str) -> None:
        """The challenge takes no more posts, and its board ranks on the hidden part."""
        self.instructed(code, secret)
        if challenge not in CHALLENGES:
            raise RoomError("There is no such challenge.")
        with self.store.transaction() as db:
            db.execute(
                "INSERT INTO closed_challenges (room, challenge, closed) VALUES (?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                (code, challenge, self.clock()),
            )

    def hide(self, code: str, secret: str, nickname: str, hidden: bool = True) -> None:
        """Takes a member off the board (or puts them back); their results stay in the CSV."""
        self.instructed(code, secret)
        with self.store.transaction() as db:
            changed = db.execute(
                "UPDATE members SET hidden = ? WHERE room = ? AND nickname_key = ?",
                (int(hidden), code, nickname_key(nickname)),
            )
        if not changed:
            raise RoomError("No one in this room goes by that nickname.")

    def board(self, code: str, secret: str) -> Board:
        """Every challenge with at least one result, ranked, as the instructor sees it."""
        room = self.instructed(code, secret)
        self.purge()
        with self.store.transaction(write=False) as db:
            members = db.all("SELECT nickname, hidden FROM members WHERE room = ? ORDER BY joined", (code,))
            rows = db.all(
                "SELECT r.challenge, m.nickname, r.score, r.hidden_score, r.met, r.epoch, r.parameters, "
                "r.link, r.posted, r.goodness FROM results r JOIN members m "
                "ON m.room = r.room AND m.member = r.member WHERE r.room = ? AND m.hidden = 0",
                (code,),
            )
            closed = {c for (c,) in db.all("SELECT challenge FROM closed_challenges WHERE room = ?", (code,))}
        boards = [board for key in CHALLENGES if (board := _ranked(key, rows, closed)) is not None]
        hidden = [nickname for nickname, h in members if h]
        return Board(room, len(members), hidden, boards)

    def export_csv(self, code: str, secret: str) -> str:
        """The room's results, hidden members included (marked), one row per member and challenge."""
        room = self.instructed(code, secret)
        with self.store.transaction(write=False) as db:
            rows = db.all(
                "SELECT r.challenge, m.nickname, r.score, r.hidden_score, r.met, r.epoch, r.parameters, "
                "r.posted, r.link, m.hidden FROM results r JOIN members m "
                "ON m.room = r.room AND m.member = r.member WHERE r.room = ? "
                "ORDER BY r.challenge, r.goodness DESC, r.posted",
                (code,),
            )
        return _csv(room, rows)

    # --- a student's ------------------------------------------------------------------------

    def join(self, code_text: str, nickname: str) -> Membership:
        """A place in the room under `nickname`, unique in the room (whatever its letters' case)."""
        code = read_code(code_text)
        nickname = clean_text(nickname, NICKNAME_CHARS, "nickname")
        if code is None:
            raise RoomError(
                f"A room code has {CODE_LENGTH} letters and digits, like {show_code('K7MQ2XPW')}."
            )
        self.purge()
        token, now = secrets.token_urlsafe(24), self.clock()
        with self.store.transaction() as db:
            row = db.one("SELECT closed, expires FROM rooms WHERE code = ?", (code,))
            if row is None or row[1] <= now:
                raise RoomError("There is no open room with that code: check it on the projector.")
            if row[0] is not None:
                raise RoomError("This room is closed: the instructor ended it.")
            added = db.execute(
                "INSERT INTO members (room, member, nickname, nickname_key, joined) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                (code, digest(token), nickname, nickname_key(nickname), now),
            )
        if not added:
            raise RoomError("Someone in this room already has that nickname: pick another.")
        return Membership(code, nickname, token)

    def member(self, code: str, token: str) -> Membership | None:
        """The membership `token` holds in open room `code` (a browser back after a reload), or None."""
        with self.store.transaction(write=False) as db:
            row = db.one(
                "SELECT m.nickname FROM members m JOIN rooms r ON r.code = m.room "
                "WHERE m.room = ? AND m.member = ? AND r.closed IS NULL AND r.expires > ?",
                (code, digest(token), self.clock()),
            )
        return Membership(code, row[0], token) if row else None

    def post(self, membership: Membership, result: Result) -> str:
        """Keeps `result` if it beats the member's best on its challenge: POSTED.

        A member writes at most once every POST_SECONDS: a post that comes sooner waits, the
        latest per challenge replacing the one before, and is written when the time is up
        (QUEUED; flush()). Otherwise the answer says why nothing was kept: NOT_BETTER, TOO_LATE
        (past the challenge's epochs) or CLOSED (the instructor closed the challenge). A
        RoomError when the room is gone or closed, or the membership isn't one (a token the
        room never gave). The caller posts only runs whose settings the challenge accepts
        (Challenge.problem)."""
        challenge, link, hidden = _checked(result)
        if challenge.within is not None and result.epoch > challenge.within:
            return TOO_LATE  # past the challenge's epochs: it doesn't count
        member, now = digest(membership.token), self.clock()
        now_or_in = self._pace.admit(member, result.challenge, (membership, result), now)
        if now_or_in is not None:
            if now_or_in > 0:  # the member's first waiting post: a timer for it
                self.later(now_or_in, self.flush)
            return QUEUED
        with self.store.transaction() as db:
            return _write(db, membership.code, member, result, link, hidden, now)

    def flush(self) -> None:
        """Writes the posts that waited for their member's time, one a member (the others wait on)."""
        ready, left = self._pace.due(self.clock())
        try:
            for membership, result in ready:
                try:
                    self.post(membership, result)
                except (RoomError, StoreError) as err:  # the room closed meanwhile: nothing to keep
                    _log.info("A waiting post was dropped: %s", err)
                except Exception:  # a fault: logged, and the other members' posts still go
                    _log.exception("A waiting post failed")
        finally:
            if left:  # another challenge's post, or one not due yet (a clock behind the timer's)
                self.later(POST_SECONDS if ready else POST_SECONDS / 4, self.flush)

    def _sweep(self) -> None:
        """Every PURGE_SECONDS, whether or not anyone visits: expired rooms go."""
        try:
            self.purge(force=True)
        except Exception:  # the database is down: next time
            _log.warning("Expired rooms could not be deleted", exc_info=True)
        finally:
            self.later(PURGE_SECONDS, self._sweep)

    # --- housekeeping -----------------------------------------------------------------------

    def purge(self, force: bool = False) -> int:
        """Deletes expired rooms and everything in them; how many. Runs at most every
        PURGE_SECONDS unless forced."""
        now = self.clock()
        with self._lock:
            if not force and now - self._purged < PURGE_SECONDS:
                return 0
            self._purged = now
        with self.store.transaction() as db:
            return db.execute("DELETE FROM rooms WHERE expires <= ?", (now,))


def _ranked(key: str, rows: list[tuple], closed: set[str]) -> ChallengeBoard | None:
    """One challenge's board from the room's visible results (challenge, nickname, score,
    hidden score, met, epoch, parameters, link, posted, goodness); None if it has none and is open."""
    challenge = CHALLENGES[key]
    mine = sorted((r for r in rows if r[0] == key), key=lambda r: (-r[9], r[8]))
    if not mine and key not in closed:
        return None
    final = {}
    if key in closed:  # ranked again on the hidden part; no hidden score ranks last, in visible order
        order = sorted(
            mine,
            key=lambda r: (r[3] is None, -_goodness(challenge, r[3]) if r[3] is not None else 0, -r[9], r[8]),
        )
        final = {r[1]: i for i, r in enumerate(order, start=1)}
    entries = [
        Entry(r[1], r[2], r[3], bool(r[4]), r[5], r[6], r[7], r[8], i, final.get(r[1]))
        for i, r in enumerate(mine, start=1)
    ]
    return ChallengeBoard(challenge, entries, key in closed)


def _csv(room: Room, rows: list[tuple]) -> str:
    """The export's text: a header, then a row per member and challenge."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
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
        ]
    )
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
            ]
        )
    return out.getvalue()


def _checked(result: Result) -> tuple[Challenge, str, float | None]:
    """The result's challenge, its link and its hidden score (None if not a number), or a
    RoomError if the result can't be posted."""
    challenge = CHALLENGES.get(result.challenge)
    if challenge is None:
        raise RoomError("There is no such challenge.")
    if not math.isfinite(result.score) or result.epoch < 0 or result.parameters < 0:
        raise RoomError("That result has no score to post.")
    link = result.link
    if not link.startswith("/") or link.startswith("//") or len(link) > LINK_CHARS:
        raise RoomError("A setup's link must be a link inside the app.")
    hidden = (
        result.hidden_score
        if result.hidden_score is not None and math.isfinite(result.hidden_score)
        else None
    )
    return challenge, link, hidden


def _write(
    db: Cursor, code: str, member: str, result: Result, link: str, hidden: float | None, now: float
) -> str:
    """Within a transaction: the member's result kept if it is their best on its challenge."""
    challenge = CHALLENGES[result.challenge]
    acc = challenge.metric == "test_acc"
    met = challenge.reached(Score(result.epoch, result.score if acc else None, None if acc else result.score))
    row = db.one(
        "SELECT r.closed, r.expires, (SELECT 1 FROM members WHERE room = r.code AND member = ?), "
        "(SELECT 1 FROM closed_challenges WHERE room = r.code AND challenge = ?) "
        "FROM rooms r WHERE r.code = ?",
        (member, result.challenge, code),
    )
    if row is None or row[1] <= now:
        raise RoomError("This room has expired.")
    if row[0] is not None:
        raise RoomError("This room is closed: the instructor ended it.")
    if row[2] is None:
        raise RoomError("You're not in this room: join it again.")
    if row[3] is not None:
        return CLOSED
    kept = db.execute(
        "INSERT INTO results (room, member, challenge, score, goodness, hidden_score, met, "
        "epoch, parameters, link, posted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (room, member, challenge) DO UPDATE SET score = excluded.score, "
        "goodness = excluded.goodness, hidden_score = excluded.hidden_score, met = excluded.met, "
        "epoch = excluded.epoch, parameters = excluded.parameters, link = excluded.link, "
        "posted = excluded.posted WHERE excluded.goodness > results.goodness",
        (
            code,
            member,
            result.challenge,
            result.score,
            _goodness(challenge, result.score),
            hidden,
            int(met),
            result.epoch,
            result.parameters,
            link,
            now,
        ),
    )
    return POSTED if kept else NOT_BETTER


class _Pace:
    """A member writes at most once every POST_SECONDS (in this process); what comes sooner
    waits, the latest per challenge replacing the one before."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}  # member digest -> when they last wrote
        self._waiting: dict[tuple[str, str], tuple[Membership, Result]] = {}  # (member, challenge) -> latest

    def admit(self, member: str, challenge: str, post: tuple[Membership, Result], now: float) -> float | None:
        """None: write it now (it counts as the member's write). Else it waits: the seconds until
        it is due if it is the member's first waiting post (start a timer), else 0."""
        with self._lock:
            due = self._last.get(member, -math.inf) + POST_SECONDS
            if now < due:
                first = not any(m == member for m, _ in self._waiting)
                self._waiting[(member, challenge)] = post
                return due - now if first else 0.0
            self._last[member] = now
            if len(self._last) > 10_000:  # forget the ones long gone
                self._last = {m: t for m, t in self._last.items() if now - t < POST_SECONDS}
            return None

    def due(self, now: float) -> tuple[list[tuple[Membership, Result]], bool]:
        """The waiting posts due now, one a member, taken out; and whether others still wait."""
        with self._lock:
            ready, seen = [], set()
            for key in list(self._waiting):
                if key[0] not in seen and now >= self._last.get(key[0], -math.inf) + POST_SECONDS:
                    seen.add(key[0])
                    ready.append(self._waiting.pop(key))
            return ready, bool(self._waiting)


def _timer(seconds: float, call: Callable[[], object]) -> None:
    timer = threading.Timer(seconds, call)
    timer.daemon = True
    timer.start()


def _cell(text: str) -> str:
    """A CSV cell a spreadsheet shows as text, never runs as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
