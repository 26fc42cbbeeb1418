"""Getting a checked result onto the board, and nothing lost on the way.

A post counts once it is written. One that comes within its member's second, or meets a database
that is busy or restarting, waits in the outbox (mlp/rooms/outbox.py) and is written by `flush`,
on a timer, retried later and later until the database takes it; meanwhile `post` answers
QUEUED or WAITING, and the page keeps the result pending and says so. After a transient failure
every post waits a moment before the database is asked again, so a database that is away is not
hammered by a class's pages.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import OrderedDict
from collections.abc import Callable

from mlp.curriculum.challenges import CHALLENGES, Challenge, Score
from mlp.rooms.outbox import Outbox
from mlp.rooms.ranks import goodness
from mlp.rooms.records import Membership, Result, RoomError, digest
from mlp.rooms.store import Cursor, Store, StoreError

LINK_CHARS = 2000
AWAY_SECONDS = 1.0  # after a transient failure, posts wait this long before the database is asked again
_log = logging.getLogger(__name__)
# What became of a post (Posts.post)
POSTED, NOT_BETTER = "posted", "not better"  # on the board: this one, or a better one
QUEUED, WAITING = "queued", "waiting"  # not yet: for the member's next second, or for the database
TOO_LATE, CLOSED = "too late", "closed"  # never: past the challenge's epochs, or the challenge closed


class Posts:
    """The results members post to one database: written at once, or waiting in the outbox."""

    def __init__(
        self, store: Store, clock: Callable[[], float], later: Callable[[float, Callable], object]
    ) -> None:
        self.store, self.clock, self.later = store, clock, later
        self.outbox = Outbox()
        self._lock = threading.Lock()
        self._flush_at = math.inf  # when the next flush is due (one timer at a time)
        self._flushing = 0  # flushes writing now: their posts are out of the outbox, not yet written
        self._away_until = -math.inf  # after a transient failure: posts wait without asking the database
        self._written: OrderedDict[tuple[str, str], float] = OrderedDict()  # (token, challenge) -> goodness
        self._refused: OrderedDict[str, str] = OrderedDict()  # token -> why its posts can't be written
        self._closed: set[tuple[str, str]] = set()  # (token, challenge): the challenge is closed

    def post(self, membership: Membership, result: Result, inline: bool = True) -> str:
        """Posts `result` if it beats the member's best on its challenge.

        On the board: POSTED, or NOT_BETTER (the member's best is as good). Not yet: QUEUED (a
        member writes at most once every POST_SECONDS; the latest per challenge waits for the
        next) or WAITING (the database is busy or restarting: it is retried until it answers).
        Never: TOO_LATE (past the challenge's epochs) or CLOSED (the challenge is closed). A
        RoomError when the room is gone or closed, or the membership isn't one (left, removed,
        or a token the room never gave). The caller posts only runs whose settings the challenge
        accepts (Challenge.problem) and whose link reproduces them.

        `inline` False: the caller's thread never waits for the database (a page's live panel,
        which draws in its turn of the process's line: pages.serving.turns); the post is QUEUED for
        the writer's thread, and a later post of the same result hears NOT_BETTER once it is
        on the board."""
        challenge, link, hidden = _checked(result)
        if challenge.within is not None and result.epoch > challenge.within:
            return TOO_LATE  # past the challenge's epochs: it doesn't count
        token, now = digest(membership.token), self.clock()
        if refused := self._refused.get(token):  # left, removed, a room gone: known here already
            raise RoomError(refused)
        if (token, result.challenge) in self._closed:
            return CLOSED
        good = goodness(challenge, result.score)
        if self._written.get((token, result.challenge), -math.inf) >= good:
            return NOT_BETTER  # this process wrote as good a result already
        post = (membership, result)
        if now < self._away_until or self.outbox.failing(token, result.challenge):  # the database is away
            self._due(self.outbox.hold(token, result.challenge, post, max(now, self._away_until)))
            return WAITING
        due = self.outbox.admit(token, result.challenge, post, now) if inline else None
        if due is not None or not inline:
            self._due(due if due is not None else self.outbox.hold(token, result.challenge, post, now))
            return QUEUED
        return self._write(membership, result, link, hidden, now)

    def _write(
        self, membership: Membership, result: Result, link: str, hidden: float | None, now: float
    ) -> str:
        token = digest(membership.token)
        try:
            with self.store.transaction() as db:
                answer = _write(db, membership.code, token, result, link, hidden, now)
        except RoomError as err:  # the token posts nothing more: said at once from now on
            with self._lock:
                self._refused[token] = str(err)
                while len(self._refused) > 10_000:
                    self._refused.popitem(last=False)
            raise
        except StoreError as err:
            if not err.transient:
                raise
            with self._lock:  # the database is away: every post waits a moment before asking it again
                self._away_until = max(self._away_until, now + AWAY_SECONDS)
            _log.info("A post waits for the rooms' database: %s", err)
            self._due(self.outbox.retry(token, result.challenge, (membership, result), now))
            return WAITING
        if answer in (POSTED, NOT_BETTER):
            self._remember(token, result)
        elif answer == CLOSED and len(self._closed) < 100_000:
            self._closed.add((token, result.challenge))
        return answer

    def flush(self) -> None:
        """Writes the posts that are due (one a member); the rest wait for the next flush."""
        with self._lock:
            self._flush_at = math.inf
            self._flushing += 1
        try:
            for membership, result in self.outbox.due(self.clock()):
                try:
                    _, link, hidden = _checked(result)
                    self._write(membership, result, link, hidden, self.clock())
                except (RoomError, StoreError) as err:  # the room closed or expired: nothing to keep
                    _log.info("A waiting post was dropped: %s", err)
                except Exception:  # a fault: logged, and the other members' posts still go
                    _log.exception("A waiting post failed")
        finally:
            with self._lock:
                self._flushing -= 1
        if (due := self.outbox.next_due()) is not None:
            self._due(due)

    def settled(self) -> bool:
        """Whether every post is written or refused: none waits, none is being written."""
        with self._lock:
            flushing = self._flushing
        return not flushing and self.outbox.next_due() is None

    def pending(self, membership: Membership, challenge: str) -> bool:
        """Whether a post of this member's on `challenge` waits to be written."""
        return self.outbox.waiting(digest(membership.token), challenge)

    def _due(self, when: float) -> None:
        """A flush at `when` (or sooner, if one is set for sooner already)."""
        with self._lock:
            if when >= self._flush_at:
                return
            self._flush_at = when
        self.later(max(0.0, when - self.clock()), self.flush)

    def _remember(self, token: str, result: Result) -> None:
        key, good = (token, result.challenge), goodness(CHALLENGES[result.challenge], result.score)
        with self._lock:
            self._written[key] = max(good, self._written.get(key, -math.inf))
            self._written.move_to_end(key)
            while len(self._written) > 10_000:
                self._written.popitem(last=False)


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
    db: Cursor, code: str, token: str, result: Result, link: str, hidden: float | None, now: float
) -> str:
    """Within a transaction: the member's result kept if it is their best on its challenge."""
    challenge = CHALLENGES[result.challenge]
    acc = challenge.metric == "test_acc"
    met = challenge.reached(Score(result.epoch, result.score if acc else None, None if acc else result.score))
    row = db.one(
        "SELECT r.closed, r.expires, "
        "(SELECT member FROM members WHERE room = r.code AND token = ? AND gone IS NULL), "
        "(SELECT 1 FROM closed_challenges WHERE room = r.code AND challenge = ?) "
        "FROM rooms r WHERE r.code = ?",
        (token, result.challenge, code),
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
            row[2],
            result.challenge,
            result.score,
            goodness(challenge, result.score),
            hidden,
            int(met),
            result.epoch,
            result.parameters,
            link,
            now,
        ),
    )
    return POSTED if kept else NOT_BETTER
