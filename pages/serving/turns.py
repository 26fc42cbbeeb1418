"""Live frames take turns: one process's Python shared fairly among every visitor who is playing.

A server's visitors all run their scripts on threads of one interpreter, so only one of them
runs Python at a time. Left to themselves, K playing visitors each ask for 10 frames a second;
once K frames cost more than a second, every thread is always runnable, the interpreter lock
is handed round 16 ways, the health check waits seconds for its turn and a click waits behind
frames that never end. Here frames wait in one line instead (waiting threads cost nothing),
one at a time, and after each the line rests in proportion to what that frame took, so at most
`share` of the time goes to frames and the rest to everything else. With few visitors nothing
changes (a frame every 0.1 s costs ~35 ms of each 100); with many, each gets fewer frames and
none starves.

The line is fair by compute, not by arrival: of those waiting, the turn goes to the visitor
who has used the least CPU time lately (each visitor's use fades by half every HALF_LIFE
seconds). A visitor whose frames are costly (a big network on many points) is served when no
lighter one waits, so they slow themselves, not the class; they still get every turn the
others leave. (What a turn may cost is the caller's to bound: mlp.runs.playground.)
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

SHARE = 0.6  # of the process's time, at most, for frames; the rest: clicks, health checks, other pages
ACTIVE_SECONDS = 3.0  # a visitor who took a turn this recently is counted as playing
HALF_LIFE = 2.0  # seconds over which a visitor's CPU use counts half as much towards their next turn


class Turns:
    """A fair line for live frames. `with turns.turn(who, heed): draw()`."""

    def __init__(self, share: float = SHARE) -> None:
        if not 0 < share <= 1:
            raise ValueError(f"share must be in (0, 1]; got {share}")
        self.share = share
        self._lock = threading.Lock()
        # ticket -> (who, its place in arrival order, what it waits on): a turn's end wakes only
        # the next in line, not all of them (with 32 waiting, waking every one cost each turn
        # 0.7-1.2 ms more of the process's CPU: bench.turns)
        self._line: dict[object, tuple[str, int, threading.Condition]] = {}
        self._arrivals = itertools.count()
        self._busy = False
        self._rest_until = 0.0  # monotonic time before which no turn starts
        self._seen: dict[str, float] = {}  # who -> when their last turn ended
        self._used: dict[str, tuple[float, float]] = {}  # who -> (CPU seconds, faded to when)
        self.turns = 0
        self.seconds = 0.0  # CPU time spent in turns, in total

    @contextmanager
    def turn(self, who: str, heed: Callable[[], object] = lambda: None, poll: float = 0.1) -> Iterator[None]:
        """Wait for this caller's turn, run the block, then let the next one in.

        While it waits, `heed()` is called every `poll` seconds: a page passes something that
        ends its script run when the visitor has clicked, and the place in line is given up.
        """
        ticket = object()
        with self._lock:
            self._line[ticket] = (who, next(self._arrivals), threading.Condition(self._lock))
        started = None
        try:
            while not self._start(ticket, poll):
                heed()
            started = time.thread_time()
            yield
        finally:
            with self._lock:
                if started is None:
                    del self._line[ticket]  # it gave up its place: the next may be another now
                else:
                    self._end(who, time.thread_time() - started)
                self._wake_next()

    def _start(self, ticket: object, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._lock:
            waiting = self._line[ticket][2]
            while True:
                now = time.monotonic()
                first = self._next(now) is ticket
                if first and not self._busy and now >= self._rest_until:
                    del self._line[ticket]
                    self._busy = True
                    return True
                if now >= deadline:
                    return False
                # The next in line waits out the rest; the others are woken when it is theirs.
                wake = self._rest_until if first and not self._busy else deadline
                waiting.wait(max(0.0, min(deadline, wake) - now))

    def _wake_next(self) -> None:
        """Holding the lock: wake the ticket whose turn is next (it waits out the rest itself)."""
        if self._line:
            self._line[self._next(time.monotonic())][2].notify()

    def _next(self, now: float) -> object:
        """The waiting ticket whose turn is next: its visitor's faded use the least, then the earliest.
        (Use fades at one rate for all, so the order of two visitors holds as time passes.)"""
        return min(self._line, key=lambda t: (self.used(self._line[t][0], now), self._line[t][1]))

    def used(self, who: str, now: float | None = None) -> float:
        """CPU seconds `who` has used in turns, each faded by half every HALF_LIFE seconds since."""
        seconds, when = self._used.get(who, (0.0, 0.0))
        now = time.monotonic() if now is None else now
        return seconds * 0.5 ** ((now - when) / HALF_LIFE) if seconds else 0.0

    def _end(self, who: str, seconds: float) -> None:
        """A turn ended that took `seconds` of CPU time: the line rests in proportion. (CPU time,
        not the time it lasted: when other programs crowd the machine, a frame lasts long but
        costs this process no more, and resting longer would only waste the time it gets.)"""
        now = time.monotonic()
        self._busy = False
        self._rest_until = now + seconds * (1 - self.share) / self.share
        self._seen[who] = now
        self._used[who] = (self.used(who, now) + seconds, now)
        self.turns += 1
        self.seconds += seconds
        for name in [n for n, t in self._seen.items() if now - t > ACTIVE_SECONDS]:
            del self._seen[name]
            self._used.pop(name, None)  # faded to ~1/3 by now; a visitor back later starts afresh

    @property
    def waiting(self) -> int:
        """Frames in line now."""
        with self._lock:
            return len(self._line)

    def players(self) -> int:
        """Visitors who took a turn in the last few seconds."""
        now = time.monotonic()
        with self._lock:
            return sum(1 for t in self._seen.values() if now - t <= ACTIVE_SECONDS)


_SHARED = Turns()  # cheap to make, so made at import: no lock needed to make it once


def shared_turns() -> Turns:
    """The process's one line."""
    return _SHARED
