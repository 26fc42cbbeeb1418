"""A class's room: a join code for the projector, an instructor's secret, and every student's best
checked result per challenge, ranked live — a board a class can trust.

What a room keeps about a student is the nickname they typed, their results, and salted digests
of their browser's id and their address (to limit joins and to keep a removed student out),
all deleted with the room. Codes and secrets come from `secrets`; the instructor's secret and
each member's token are kept as SHA-256 digests, so the database alone lets no one act as
either, and the instructor can replace the secret (new_secret) if it leaks.

- **One student, one name.** Nicknames that look alike are one nickname (mlp/rooms/names.py,
  Unicode's UTS #39); joining is limited per address, per room and per browser, and capped per
  room (mlp/rooms/limits.py). Leaving ends a membership (its token posts nothing more; its
  results stay, and the same browser may come back under the same name). The instructor can
  hide or remove several members at once (removed: off the board, their browser and address
  refused), and lock the room to new joins while its members keep posting.
- **A score the link reproduces.** A member posts only through the token their own session
  holds (Membership), and only what the app's checker measured of a run the link reproduces
  (Result; the page keeps the others off). Kaggle's lesson: a result carries its score on the
  challenge's visible test points, which rank live, and on a hidden part drawn from a secret the
  room keeps (hidden_seed), which no public information computes. When the instructor closes a
  challenge, the board ranks again on the hidden part and the server re-trains the ranked
  entries from their links (mlp/rooms/recheck.py).
- **Nothing lost.** A post counts once it is written: one waiting for its member's next second,
  or for a database that is busy or restarting, waits in the outbox and is retried until the
  database takes it (mlp/rooms/outbox.py). The page keeps a result pending until `post` says it
  is on the board (POSTED, or NOT_BETTER: a better one is).
- **Bounded.** Rooms, members, rows drawn and the database's size (mlp/rooms/limits.py).

A room lasts the class: it expires after the minutes it was opened for (purge() deletes it and
everything in it), and the instructor may close it sooner (no more joins or posts; its board
and CSV stay until it expires).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import secrets
import threading
import time
import unicodedata
import weakref
from collections.abc import Callable

import mlp.rooms.limits as limits
from mlp.rooms.limits import Gate
from mlp.rooms.names import BLANKS, name_keys, refusal
from mlp.rooms.posts import Posts
from mlp.rooms.ranks import Room, show_code
from mlp.rooms.records import Membership, Result, RoomError, Visitor, digest
from mlp.rooms.store import Cursor, Store, StoreError

ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # no 0/O, 1/I/L: read off a projector at the back
CODE_LENGTH = 8  # 31^8 ≈ 8.5e11 codes, shown as ABCD-EFGH
NICKNAME_CHARS = 24
TITLE_CHARS = 60
MINUTES = 90  # a room's life unless the instructor says otherwise
MAX_MINUTES = 12 * 60
PURGE_SECONDS = 60.0  # expired rooms are looked for at most this often
ANYONE = Visitor()  # a caller that doesn't say who asks: this machine, no browser id
_log = logging.getLogger(__name__)
TAKEN = "Someone in this room already has that nickname, or one that looks the same: pick another."


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def read_code(text: str) -> str | None:
    """A code as typed ("abcd efgh", "ABCD-EFGH"), or None if it can't be one."""
    code = "".join(ch for ch in text.upper() if ch not in " -\t")
    if len(code) != CODE_LENGTH or any(ch not in ALPHABET for ch in code):
        return None
    return code


def clean_text(text: str, limit: int, what: str) -> str:
    """A room's name as it will be shown: no control or invisible format characters, spaces
    collapsed, at most `limit` characters. Shown literally (never Markdown or HTML)."""
    kept = "".join(
        " " if ch.isspace() else ch
        for ch in text
        if (unicodedata.category(ch)[0] != "C" or ch.isspace()) and ch not in BLANKS
    )
    return _sized(" ".join(kept.split()), limit, what)


def clean_nickname(text: str) -> str:
    """A nickname as it will be shown (spaces collapsed, control characters dropped, NFC), or a
    RoomError saying why it can't be one (mlp/rooms/names.py: lookalike tricks are refused)."""
    kept = "".join(
        " " if ch.isspace() else ch for ch in text if unicodedata.category(ch) != "Cc" or ch.isspace()
    )
    nickname = _sized(unicodedata.normalize("NFC", " ".join(kept.split())), NICKNAME_CHARS, "nickname")
    if problem := refusal(nickname):
        raise RoomError(problem)
    return nickname


def _sized(cleaned: str, limit: int, what: str) -> str:
    if not any(ch.isalnum() for ch in cleaned):  # no letter or digit: nothing to read
        raise RoomError(f"The {what} is empty: type a few letters.")
    if len(cleaned) > limit:
        raise RoomError(f"The {what} is {len(cleaned)} characters long; at most {limit}, please.")
    return cleaned


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
        self.gate = Gate(store, clock)  # joins and rooms counted against the limits
        self.posts = Posts(store, clock, self.later)  # results onto the board, nothing lost
        self._lock = threading.Lock()
        self._seeds: dict[tuple[str, str], int] = {}  # (room, challenge) -> the hidden part's seed
        self._purged = -math.inf
        self.later(0.0, _sweep_of(weakref.ref(self)))  # now, then every PURGE_SECONDS

    # --- an instructor's: a room (then mlp/rooms/instructor.py) -------------------------------

    def create(
        self, title: str, minutes: int = MINUTES, members: int = limits.MEMBERS, visitor: Visitor = ANYONE
    ) -> tuple[Room, str]:
        """A new room and the instructor's secret (shown once; only its digest is kept)."""
        title = clean_text(title, TITLE_CHARS, "room's name")
        if not 1 <= minutes <= MAX_MINUTES:
            raise RoomError(f"A room lasts 1 to {MAX_MINUTES} minutes; {minutes} was asked.")
        check_cap(members)
        self.purge(force=True)
        opener, now = self.gate.who(visitor.address), self.clock()
        local = visitor.address is None  # the server's own machine: its operator, not limited per address
        with self.store.transaction() as db:
            open_rooms = "SELECT COUNT(*) FROM rooms WHERE closed IS NULL AND expires > ?"
            if db.one(open_rooms, (now,))[0] >= limits.MAX_ROOMS:
                raise RoomError(limits.SERVER_ROOMS)
            if (
                not local
                and db.one(open_rooms + " AND opener = ?", (now, opener))[0] >= limits.ROOMS_PER_ADDRESS
            ):
                raise RoomError(limits.ROOMS_FROM_ADDRESS)
        self.gate.check_size()
        if not local:
            self.gate.tried(
                "open", opener, limits.OPEN_WINDOW, limits.OPENS_PER_ADDRESS, limits.OPENS_FROM_ADDRESS
            )
        secret = secrets.token_urlsafe(24)
        with self.store.transaction() as db:
            while True:
                code = new_code()
                added = db.execute(
                    "INSERT INTO rooms (code, secret, title, created, expires, hidden_key, member_cap, "
                    "opener) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (
                        code,
                        digest(secret),
                        title,
                        now,
                        now + 60 * minutes,
                        secrets.token_hex(32),
                        members,
                        opener,
                    ),
                )
                if added:
                    break
        return Room(code, title, now, now + 60 * minutes, None, False, members), secret

    def room_seed(self, code: str, challenge: str) -> int:
        """The seed of a challenge's hidden part in this room: from the room's secret key, which
        only the server knows (hidden_seed is a member's way to it)."""
        if (code, challenge) not in self._seeds:
            with self.store.transaction(write=False) as db:
                row = db.one("SELECT hidden_key FROM rooms WHERE code = ?", (code,))
            if row is None:
                raise RoomError("This room has expired.")
            mac = hmac.new(row[0].encode(), f"{code}:{challenge}".encode(), hashlib.sha256).digest()
            if len(self._seeds) > 10_000:
                self._seeds.clear()
            self._seeds[(code, challenge)] = int.from_bytes(mac[:8], "big") >> 1  # 63 bits
        return self._seeds[(code, challenge)]

    # --- a student's ------------------------------------------------------------------------

    def join(self, code_text: str, nickname: str, visitor: Visitor = ANYONE) -> Membership:
        """A place in the room under `nickname`, unique in the room among nicknames that look
        alike. From the browser that left under it, the same nickname takes its place back."""
        code = read_code(code_text)
        nickname = clean_nickname(nickname)
        if code is None:
            raise RoomError(
                f"A room code has {CODE_LENGTH} letters and digits, like {show_code('K7MQ2XPW')}."
            )
        self.purge()
        keys, now = name_keys(nickname), self.clock()
        address, browser = (
            self.gate.who(visitor.address),
            self.gate.who(visitor.browser) if visitor.browser else "",
        )
        with self.store.transaction(write=False) as db:
            room = db.one("SELECT closed, expires, locked, member_cap FROM rooms WHERE code = ?", (code,))
        if room is None or room[1] <= now:
            raise RoomError("There is no open room with that code: check it on the projector.")
        if room[0] is not None:
            raise RoomError("This room is closed: the instructor ended it.")
        self.gate.tried(
            "join", address, limits.JOIN_WINDOW, limits.JOINS_PER_ADDRESS, limits.JOINS_FROM_ADDRESS
        )
        self.gate.tried("join-room", code, limits.JOIN_WINDOW, limits.JOINS_PER_ROOM, limits.JOINS_INTO_ROOM)
        self.gate.check_size()
        token = secrets.token_urlsafe(24)
        with self.store.transaction() as db:
            problem = join_problem(db, code, keys, address, browser, room, self.store.kind == "postgresql")
            if problem is None:  # a new member
                added = db.execute(
                    "INSERT INTO members (room, member, token, nickname, nickname_key, nickname_look, "
                    "joined, browser, address) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (code, digest(token), digest(token), nickname, *keys, now, browser, address),
                )
                problem = None if added else TAKEN
            elif isinstance(problem, tuple):  # back under their own name, from their own browser
                db.execute(
                    "UPDATE members SET token = ?, gone = NULL WHERE room = ? AND member = ?",
                    (digest(token), code, problem[0]),
                )
                nickname, problem = problem[1], None
        if problem:
            raise RoomError(problem)
        return Membership(code, nickname, token, room[1])

    def member(self, code: str, token: str) -> Membership | None:
        """The membership `token` holds in open room `code` (a browser back after a reload), or None."""
        with self.store.transaction(write=False) as db:
            row = db.one(
                "SELECT m.nickname, r.expires FROM members m JOIN rooms r ON r.code = m.room "
                "WHERE m.room = ? AND m.token = ? AND m.gone IS NULL AND r.closed IS NULL AND r.expires > ?",
                (code, digest(token), self.clock()),
            )
        return Membership(code, row[0], token, row[1]) if row else None

    def standing(self, membership: Membership) -> str | None:
        """Why the membership no longer holds, in a sentence for its student (removed, left
        elsewhere, the room closed or expired); None while it does."""
        with self.store.transaction(write=False) as db:
            row = db.one(
                "SELECT m.gone, m.removed, r.closed, r.expires FROM rooms r LEFT JOIN members m "
                "ON m.room = r.code AND m.token = ? WHERE r.code = ?",
                (digest(membership.token), membership.code),
            )
        room = show_code(membership.code)
        if row is None or row[3] <= self.clock():
            return f"Room {room} has ended: its board is gone."
        if row[1]:
            return f"The instructor removed you from room {room}: your results are off its board."
        if row[2] is not None:
            return f"The instructor closed room {room}: its board takes no more results."
        if row[0] is not None or row[1] is None:
            return f"You left room {room} (from another tab or window): join again to post."
        return None

    def leave(self, membership: Membership) -> None:
        """Ends the membership: its token posts nothing more. Its results stay on the board, and
        the same browser may join again under the same nickname."""
        with self.store.transaction() as db:
            db.execute(
                "UPDATE members SET gone = ? WHERE room = ? AND token = ? AND gone IS NULL",
                (self.clock(), membership.code, digest(membership.token)),
            )

    def hidden_seed(self, membership: Membership, challenge: str) -> int | None:
        """The seed of `challenge`'s hidden part in the member's room (for their page to score
        their run on it), or None if the membership isn't one (any more)."""
        if self.member(membership.code, membership.token) is None:
            return None
        return self.room_seed(membership.code, challenge)

    # --- housekeeping -----------------------------------------------------------------------

    def purge(self, force: bool = False) -> int:
        """Deletes expired rooms and everything in them, and tries past remembering; how many
        rooms. Runs at most every PURGE_SECONDS unless forced."""
        now = self.clock()
        with self._lock:
            if not force and now - self._purged < PURGE_SECONDS:
                return 0
            self._purged = now
        with self.store.transaction() as db:
            db.execute("DELETE FROM tries WHERE at < ?", (now - limits.TRIES_KEPT,))
            return db.execute("DELETE FROM rooms WHERE expires <= ?", (now,))

    def _sweep(self) -> None:
        """Every PURGE_SECONDS, whether or not anyone visits: expired rooms go."""
        try:
            self.purge(force=True)
        except Exception as err:  # a database away says so in a line; a fault gives its traceback
            away = isinstance(err, StoreError) and err.transient
            why = f": {err} (next try in {PURGE_SECONDS:g} s)" if away else ""
            _log.warning("Expired rooms could not be deleted%s", why, exc_info=not away)
        finally:
            self.later(PURGE_SECONDS, _sweep_of(weakref.ref(self)))

    # --- what members post: mlp/rooms/posts.py -------------------------------------------------

    def post(self, membership: Membership, result: Result, inline: bool = True) -> str:
        """Posts.post: `result` on the board if it is the member's best (POSTED, NOT_BETTER), not
        yet (QUEUED, WAITING) or never (TOO_LATE, CLOSED); `inline` False: never wait for the database."""
        return self.posts.post(membership, result, inline)

    def flush(self) -> None:
        """Writes the waiting posts that are due."""
        self.posts.flush()


def join_problem(
    db: Cursor, code: str, keys: tuple[str, str], address: str, browser: str, room: tuple, one_at_a_time: bool
) -> str | tuple[str, str] | None:
    """Why this join can't be (a sentence), or (member, nickname) when it is someone coming back
    under their own name from their own browser, or None for a new member."""
    refused = db.one(
        "SELECT 1 FROM refused WHERE room = ? "
        "AND ((kind = 'browser' AND who = ?) OR (kind = 'address' AND who = ?))",
        (code, browser, address),
    )
    if refused:
        return limits.REFUSED_HERE
    if one_at_a_time:  # PostgreSQL: one join at a time per room (keys match across kinds)
        db.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (code,))
    same = db.one(
        "SELECT member, nickname, browser, gone, removed FROM members "
        "WHERE room = ? AND (nickname_key IN (?, ?) OR nickname_look IN (?, ?))",
        (code, *keys, *keys),
    )
    if same is not None:
        back = browser and same[2] == browser and same[3] is not None and not same[4]
        return (same[0], same[1]) if back else TAKEN
    if room[2]:
        return limits.ROOM_LOCKED
    if db.one("SELECT COUNT(*) FROM members WHERE room = ?", (code,))[0] >= room[3]:
        return limits.ROOM_FULL.format(cap=room[3])
    if browser and (
        db.one("SELECT COUNT(*) FROM members WHERE room = ? AND browser = ?", (code, browser))[0]
        >= limits.NICKNAMES_PER_BROWSER
    ):
        return limits.TOO_MANY_NICKNAMES
    return None


def check_cap(members: int) -> None:
    """A RoomError unless `members` is a cap an instructor may set."""
    if not 2 <= members <= limits.MAX_MEMBERS:
        raise RoomError(f"A room takes 2 to {limits.MAX_MEMBERS} students; {members} was asked.")


def _sweep_of(rooms: weakref.ref[Rooms]) -> Callable[[], None]:
    """A round of `rooms`' sweep while anything else holds it: the timer alone keeps no Rooms
    alive, so a Rooms let go (by a test, or a server that opened another) stops sweeping."""

    def _sweep() -> None:
        if (held := rooms()) is not None:
            held._sweep()

    return _sweep


def _timer(seconds: float, call: Callable[[], object]) -> None:
    timer = threading.Timer(seconds, call)
    timer.daemon = True
    timer.start()
