"""Posts that wait: for their member's next second, or for a database that is busy or restarting.

A member writes at most once every POST_SECONDS (per process); a post that comes sooner waits,
the latest per challenge replacing the one before. A post the database couldn't take (SQLite's
write lock held, PostgreSQL restarting) waits too, and is tried again later and later (RETRY_FIRST
doubling up to RETRY_MOST) until the database answers: a result a page has checked is never
dropped because the database was busy. What waits is one post per member and challenge, so the
outbox is bounded by the rooms' members.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

POST_SECONDS = 1.0  # a member's writes at most this often; the page posts its latest best at its next check
RETRY_FIRST = 0.5  # seconds before a post the database couldn't take is tried again
RETRY_MOST = 30.0  # and at most this long between tries


@dataclass
class _Waiting:
    """One post waiting in the outbox: what it writes, when, and how often it failed."""

    post: Any  # what the caller writes (Rooms: a membership and a result)
    due: float  # not before this time
    tries: int  # failed writes so far


class Outbox:
    """Waiting posts, keyed by (member, challenge)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}  # member -> when they last wrote
        self._waiting: dict[tuple[str, Hashable], _Waiting] = {}

    def admit(self, member: str, challenge: Hashable, post: Any, now: float) -> float | None:
        """None: write it now (it counts as the member's write). Else it waits, replacing the
        member's waiting post on this challenge: the time it is due."""
        with self._lock:
            due = self._last.get(member, -math.inf) + POST_SECONDS
            if now < due:
                return self._wait(member, challenge, post, due)
            self._wrote(member, now)
            return None

    def hold(self, member: str, challenge: Hashable, post: Any, until: float) -> float:
        """`post` waits until `until` at least (the database is away), replacing the member's
        waiting post on this challenge; the time it is due."""
        with self._lock:
            return self._wait(member, challenge, post, until)

    def failing(self, member: str, challenge: Hashable) -> bool:
        """Whether the member's waiting post on this challenge is one the database couldn't take."""
        with self._lock:
            waiting = self._waiting.get((member, challenge))
            return waiting is not None and waiting.tries > 0

    def retry(self, member: str, challenge: Hashable, post: Any, now: float) -> float:
        """The database couldn't take `post`: it waits, tried later each time; the time it is due
        (a newer post on the same challenge, waiting meanwhile, takes its place)."""
        with self._lock:
            waiting = self._waiting.get((member, challenge))
            tries = (waiting.tries if waiting else 0) + 1
            due = now + min(RETRY_MOST, RETRY_FIRST * 2 ** (tries - 1))
            self._waiting[(member, challenge)] = _Waiting(waiting.post if waiting else post, due, tries)
            return due

    def due(self, now: float) -> list[Any]:
        """The waiting posts due now, one a member (each counts as their write), taken out."""
        with self._lock:
            ready, seen = [], set()
            for key, waiting in list(self._waiting.items()):
                member = key[0]
                if (
                    member in seen
                    or now < waiting.due
                    or now < self._last.get(member, -math.inf) + POST_SECONDS
                ):
                    continue
                seen.add(member)
                self._wrote(member, now)
                ready.append(self._waiting.pop(key).post)
            return ready

    def next_due(self) -> float | None:
        """When the soonest waiting post is due (its member's pace included), or None."""
        with self._lock:
            dues = [
                max(w.due, self._last.get(k[0], -math.inf) + POST_SECONDS) for k, w in self._waiting.items()
            ]
            return min(dues, default=None)

    def waiting(self, member: str, challenge: Hashable) -> bool:
        with self._lock:
            return (member, challenge) in self._waiting

    def _wait(self, member: str, challenge: Hashable, post: Any, due: float) -> float:
        waiting = self._waiting.get((member, challenge))
        if waiting is not None:  # the newer post takes its place, no sooner than it was due
            due, tries = max(due, waiting.due), waiting.tries
        else:
            tries = 0
        self._waiting[(member, challenge)] = _Waiting(post, due, tries)
        return due

    def _wrote(self, member: str, now: float) -> None:
        self._last[member] = now
        if len(self._last) > 10_000:  # forget the ones long gone
            self._last = {m: t for m, t in self._last.items() if now - t < POST_SECONDS}
