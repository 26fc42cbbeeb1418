"""At Close, the ranked entries re-trained from their links on the server: a board's last word.

A result reaches a board only from a run its link reproduces (the page keeps the others off:
uploads, points by hand, weights set by hand, settings changed mid-run). When the instructor
closes a challenge, the server checks that: it trains each shown entry's link again, to the
epoch the entry was posted at, the top of the board first, as one background job (the
instructor's one job on the shared executor, like any visitor's), and marks each entry
"reproduced" or "missed" (its re-run's visible score further from the posted one than NOISE)
or "failed" (the link can't be trained). The re-run's hidden score, measured here on the room's
hidden part, is what the closed board ranks on (mlp/rooms/ranks.py).

NOISE is the run-to-run noise measured between a page's run and its re-run on the same server
(tests/test_recheck.py): a page's run and a fresh one of the same link give the same numbers bit
for bit on one machine (the same seed, batch order, path and threads); the allowance is half a
test point, so a re-run flags any difference a class could see on the board.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from urllib.parse import parse_qsl, urlsplit

from mlp.curriculum.challenges import CHALLENGE, CHALLENGES, Challenge, hidden_points, playground_scores
from mlp.data import MnistData
from mlp.device import torch_threads
from mlp.lessons import mnist as mn
from mlp.lessons import playground as pg
from mlp.rooms.ranks import RERUN_FAILED, RERUN_MISSED, RERUN_OK
from mlp.rooms.records import Rerun
from mlp.rooms.rooms import Rooms

_log = logging.getLogger(__name__)
LOSS_NOISE = 1e-4  # a loss challenge's allowance (its board shows 3 decimals)
HELD_STEPS = 32  # an MNIST re-run's steps between two turns of the threads (mlp.device.torch_threads)


def allowance(challenge: Challenge, test_points: int) -> float:
    """How far a re-run's score may be from the posted one and still be the same run: half a
    test point for accuracy, LOSS_NOISE for a loss."""
    return 0.5 / max(1, test_points) if challenge.metric == "test_acc" else LOSS_NOISE


def rerun_playground(
    link: str, epoch: int, challenge: Challenge, seed: int
) -> tuple[float, float | None, int]:
    """The playground run `link` describes, trained to the end of `epoch`: its score on the
    visible test points, on the room's hidden part (`seed`), and how many visible test points."""
    from mlp.runs.playground import Playground

    settings = _read(pg.from_query, link)
    run = Playground(settings, pg.make_points(settings))
    X, y = hidden_points(settings, seed)
    run.watch_hidden(X, y)
    while run.trainer.epoch < epoch and not run.trainer.finished:
        run.run_epoch()
    scores = {s.epoch: s for s in playground_scores(run.trainer.history)}
    if epoch not in scores:
        raise ValueError(f"The run ends before epoch {epoch}.")
    with torch_threads(pg.SMALL_NET_THREADS):  # as the page's frames scored it
        scored = run.trainer.watch.scored.get(epoch) or run.view.score(X, y)
    hidden = scored[1] if challenge.metric == "test_acc" else scored[0]
    return getattr(scores[epoch], challenge.metric), hidden, len(run.points.y_test)


def rerun_mnist(
    link: str, epoch: int, challenge: Challenge, seed: int, data: MnistData, threads: int = 0
) -> tuple[float, float | None, int]:
    """The MNIST run `link` describes, trained to the end of `epoch` on the room's challenge part
    (`seed`): its accuracy on the visible test digits, on the hidden ones, and how many visible."""
    from mlp.runs.mnist import MnistRun

    settings = _read(mn.from_query, link)
    run = MnistRun(data.challenge_part(seed), settings, "re-run", threads=threads)
    run.min_epoch_seconds = 0.0  # a class's pace is the page's; the server re-runs at full speed
    steps = epoch * run.trainer.steps_per_epoch
    while run.trainer.step_count < steps and not run.trainer.finished:
        with run.threads_held():  # a few steps at a time: blocks at other counts (frames) take turns
            run.trainer.run_steps(min(HELD_STEPS, steps - run.trainer.step_count))
    with run.threads_held():
        evaluation = run.evaluate()
        hidden = run.hidden_accuracy()
    score = evaluation.accuracy if challenge.metric == "test_acc" else evaluation.loss
    return score, hidden, len(run.data.y_test)


def _read(from_query: Callable, link: str):
    """The settings a link gives; a ValueError if the page would skip any of its parameters (then
    the link does not say how the entry was trained)."""
    query = dict(parse_qsl(urlsplit(link).query))
    query.pop(CHALLENGE, None)  # which challenge: the page's switch, not a setting
    settings, notes = from_query(query)
    if notes:
        raise ValueError(f"The link has {len(notes)} setting(s) the page doesn't take.")
    return settings


def record(
    rooms: Rooms,
    code: str,
    member: str,
    challenge: str,
    state: str,
    score: float | None,
    hidden: float | None,
) -> None:
    """What a re-run at Close found for one entry: its state (RERUN_*), its visible score, its
    hidden one (what the closed board ranks on: mlp/rooms/ranks.py)."""
    with rooms.store.transaction() as db:
        db.execute(
            "UPDATE results SET rerun = ?, rerun_score = ?, rerun_hidden = ? "
            "WHERE room = ? AND member = ? AND challenge = ?",
            (state, score, hidden, code, member, challenge),
        )


class Recheck:
    """A job's work (pages.serving.jobs): re-run a closed challenge's entries, one per advance, and
    record what each found. Each re-run holds its threads a few steps at a time, as its page's
    run did (the job holds nothing around a whole entry: frames would wait for it)."""

    holds_own_threads = True

    def __init__(
        self,
        rooms: Rooms,
        code: str,
        challenge: str,
        entries: list[Rerun],
        mnist: Callable[[], MnistData] | None = None,
        threads: int = 0,
    ) -> None:
        self.rooms, self.code, self.challenge = rooms, code, CHALLENGES[challenge]
        self.entries = list(entries)
        self.mnist, self.threads = mnist, threads
        self.done: list[tuple[str, str]] = []  # (nickname, what its re-run found)
        self._stopped = threading.Event()

    @property
    def finished(self) -> bool:
        return not self.entries or self._stopped.is_set()

    @property
    def status(self) -> str:
        return "stopped" if self._stopped.is_set() else "done"

    def advance(self, seconds: float) -> None:
        entry = self.entries.pop(0)
        state, score, hidden = self.check(entry)
        record(self.rooms, self.code, entry.member, self.challenge.key, state, score, hidden)
        self.done.append((entry.nickname, state))

    def check(self, entry: Rerun) -> tuple[str, float | None, float | None]:
        """(what the re-run found, its visible score, its hidden score) for one entry."""
        seed = self.rooms.room_seed(self.code, self.challenge.key)
        try:
            if self.challenge.page == "mnist":
                if self.mnist is None:
                    raise ValueError("No digits to re-run an MNIST challenge on.")
                found = rerun_mnist(entry.link, entry.epoch, self.challenge, seed, self.mnist(), self.threads)
            else:
                found = rerun_playground(entry.link, entry.epoch, self.challenge, seed)
        except Exception:  # a link that can't be trained: the entry is marked, the others go on
            _log.warning("A re-run at Close failed (room %s)", self.code, exc_info=True)
            return RERUN_FAILED, None, None
        score, hidden, points = found
        close = math.isfinite(score) and abs(score - entry.score) <= allowance(self.challenge, points)
        return (RERUN_OK if close else RERUN_MISSED), score, hidden

    def stop(self, reason: str) -> None:
        self._stopped.set()

    def interrupt(self) -> None:
        self._stopped.set()

    def finish(self) -> None:
        pass

    def view(self) -> tuple[int, int]:
        """(entries re-run, entries left)."""
        return len(self.done), len(self.entries)
