"""What an instructor's secret lets them do with their room: see and export its board, close it
or a challenge, lock it, cap it, hide or remove students, and replace the secret itself.

`Instructor(rooms, code, secret)` checks the secret (a RoomError, the same for a wrong code or a
wrong secret), and so does every call after: a secret replaced in another tab opens nothing more.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Sequence

import mlp.rooms.limits as limits
from mlp.curriculum.challenges import CHALLENGES
from mlp.rooms.names import name_keys
from mlp.rooms.ranks import CSV_COLUMNS, RERUN_QUEUED, Board, Room, board_rows, challenge_boards, csv_text
from mlp.rooms.records import Rerun, RoomError, digest
from mlp.rooms.rooms import Rooms, check_cap


class Instructor:
    """One room, as its instructor's secret opens it."""

    def __init__(self, rooms: Rooms, code: str, secret: str) -> None:
        self.rooms, self.store, self.code, self.secret = rooms, rooms.store, code, secret
        self.room()  # the secret is checked now

    def room(self) -> Room:
        """The room, as it is now; a RoomError if the secret doesn't open it (any more)."""
        with self.store.transaction(write=False) as db:
            row = db.one(
                "SELECT code, title, created, expires, closed, locked, member_cap, secret FROM rooms "
                "WHERE code = ?",
                (self.code,),
            )
        if (
            row is None
            or not hmac.compare_digest(row[7], digest(self.secret))
            or row[3] <= self.rooms.clock()
        ):
            raise RoomError(
                "This instructor link doesn't open a room: it was mistyped or replaced, or the room "
                "has expired."
            )
        return Room(*row[:5], bool(row[5]), row[6])

    def new_secret(self) -> str:
        """A new instructor secret for the room; the old one opens nothing from now on."""
        self.room()
        fresh = secrets.token_urlsafe(24)
        with self.store.transaction() as db:
            db.execute(
                "UPDATE rooms SET secret = ? WHERE code = ? AND secret = ?",
                (digest(fresh), self.code, digest(self.secret)),
            )
        self.secret = fresh
        return fresh

    def close(self) -> None:
        """No more joins or posts; the board and its CSV stay until the room expires."""
        self.room()
        with self.store.transaction() as db:
            db.execute(
                "UPDATE rooms SET closed = ? WHERE code = ? AND closed IS NULL",
                (self.rooms.clock(), self.code),
            )

    def lock(self, locked: bool = True) -> None:
        """No new joins (or joins again); the room's members keep posting."""
        self.room()
        with self.store.transaction() as db:
            db.execute("UPDATE rooms SET locked = ? WHERE code = ?", (int(locked), self.code))

    def set_member_cap(self, cap: int) -> None:
        """How many students may join (those in already stay, however many)."""
        check_cap(cap)
        self.room()
        with self.store.transaction() as db:
            db.execute("UPDATE rooms SET member_cap = ? WHERE code = ?", (cap, self.code))

    def close_challenge(self, challenge: str) -> None:
        """The challenge takes no more posts, and its board ranks on the hidden part."""
        self.room()
        if challenge not in CHALLENGES:
            raise RoomError("There is no such challenge.")
        with self.store.transaction() as db:
            db.execute(
                "INSERT INTO closed_challenges (room, challenge, closed) VALUES (?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                (self.code, challenge, self.rooms.clock()),
            )

    def hide(self, nicknames: str | Sequence[str], hidden: bool = True) -> int:
        """Takes members off the board (or puts them back); their results stay in the CSV. How many."""
        return self._members_set(nicknames, "hidden = ?", (int(hidden),))

    def remove(self, nicknames: str | Sequence[str]) -> int:
        """Ends these members' memberships, takes their results off the board (the CSV keeps them)
        and refuses joins from their browsers and addresses. How many."""
        self.room()
        found = self._find(nicknames)
        now = self.rooms.clock()
        with self.store.transaction() as db:
            for member, browser, address in found:
                db.execute(
                    "UPDATE members SET removed = 1, gone = COALESCE(gone, ?) WHERE room = ? AND member = ?",
                    (now, self.code, member),
                )
                for kind, who in (("browser", browser), ("address", address)):
                    if who:
                        db.execute(
                            "INSERT INTO refused (room, kind, who) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                            (self.code, kind, who),
                        )
        return len(found)

    def let_in(self, nicknames: str | Sequence[str]) -> int:
        """Undoes `remove`: their browsers and addresses may join again (they join anew), and
        their results are back on the board. How many."""
        self.room()
        found = self._find(nicknames, removed=True)
        with self.store.transaction() as db:
            for member, browser, address in found:
                db.execute(
                    "UPDATE members SET removed = 0 WHERE room = ? AND member = ?", (self.code, member)
                )
                db.execute(
                    "DELETE FROM refused WHERE room = ? AND who IN (?, ?)", (self.code, browser, address)
                )
        return len(found)

    def board(self, top: int = limits.TOP_ROWS) -> Board:
        """Every challenge with at least one result, ranked (its top `top` drawn), as the
        instructor sees it."""
        room = self.room()
        self.rooms.purge()
        with self.store.transaction(write=False) as db:
            members = db.all(
                "SELECT nickname, hidden, gone, removed FROM members WHERE room = ? ORDER BY joined",
                (self.code,),
            )
            closed = {
                c for (c,) in db.all("SELECT challenge FROM closed_challenges WHERE room = ?", (self.code,))
            }
            rows, counts = board_rows(db, self.code, closed, top)
        boards = challenge_boards(rows, counts, closed)
        return Board(
            room,
            members=sum(g is None for _, _, g, _ in members),
            hidden=[n for n, h, _, r in members if h and not r],
            challenges=boards,
            removed=[n for n, _, _, r in members if r],
            left=sum(g is not None and not r for _, _, g, r in members),
            nicknames=[n for n, _, _, r in members if not r],
        )

    def export_csv(self) -> str:
        """The room's results, hidden, gone and removed members included (marked), one row per
        member and challenge."""
        room = self.room()
        with self.store.transaction(write=False) as db:
            rows = db.all(
                f"SELECT {CSV_COLUMNS} FROM results r JOIN members m "
                "ON m.room = r.room AND m.member = r.member WHERE r.room = ? "
                "ORDER BY r.challenge, r.goodness DESC, r.posted",
                (self.code,),
            )
        return csv_text(room, rows)

    def reruns(self, challenge: str, again: bool = False) -> list[Rerun]:
        """A closed challenge's shown entries not yet re-run, the top of its board first (on the
        hidden part), each marked queued; `again`: those marked queued already too (a job that
        ended with its server left them so)."""
        board = next(
            (b for b in self.board(top=limits.MAX_MEMBERS).challenges if b.challenge.key == challenge),
            None,
        )
        if board is None or not board.closed:
            return []
        order = {e.nickname: i for i, e in enumerate(board.entries)}
        with self.store.transaction() as db:
            rows = db.all(
                "SELECT m.member, m.nickname, r.link, r.epoch, r.score, r.hidden_score FROM results r "
                "JOIN members m ON m.room = r.room AND m.member = r.member "
                "WHERE r.room = ? AND r.challenge = ? AND (r.rerun IS NULL OR r.rerun = ?) "
                "AND m.hidden = 0 AND m.removed = 0",
                (self.code, challenge, RERUN_QUEUED if again else ""),
            )
            for member, *_ in rows:
                db.execute(
                    "UPDATE results SET rerun = ? WHERE room = ? AND member = ? AND challenge = ?",
                    (RERUN_QUEUED, self.code, member, challenge),
                )
        return sorted((Rerun(*row) for row in rows), key=lambda r: order.get(r.nickname, len(order)))

    def _find(self, nicknames: str | Sequence[str], removed: bool = False) -> list[tuple[str, str, str]]:
        """(member, browser, address) of the room's members under these nicknames."""
        keys = [name_keys(n)[0] for n in ([nicknames] if isinstance(nicknames, str) else nicknames)]
        with self.store.transaction(write=False) as db:
            rows = [
                db.one(
                    "SELECT member, browser, address FROM members "
                    "WHERE room = ? AND nickname_key = ? AND removed = ?",
                    (self.code, key, int(removed)),
                )
                for key in keys
            ]
        found = [row for row in rows if row is not None]
        if keys and not found:
            raise RoomError("No one in this room goes by that nickname.")
        return found

    def _members_set(self, nicknames: str | Sequence[str], change: str, values: tuple) -> int:
        self.room()
        found = self._find(nicknames)
        with self.store.transaction() as db:
            for member, _, _ in found:
                db.execute(
                    f"UPDATE members SET {change} WHERE room = ? AND member = ?", (*values, self.code, member)
                )
        return len(found)
