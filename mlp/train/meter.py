"""Counting while training: running totals on the device, busy time, and a smoothed rate."""

from __future__ import annotations

import math
import time

import torch

Totals = tuple[float, int, int]  # (sum of losses, correct predictions, examples seen)


class RunningTotals:
    """Loss, correct and seen since the start, on the device: read (one sync) only when asked.

    A NaN or infinite loss makes the loss total non-finite for good, so one look tells
    whether anything went wrong since the last look. Epochs and reports read differences
    against their own marks.
    """

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.reset()

    def reset(self) -> None:
        self.loss = torch.zeros((), device=self.device, dtype=torch.float64)
        self.correct = torch.zeros((), device=self.device, dtype=torch.int64)
        self.host = [0.0, 0]  # (sum of losses, correct) counted on the host: add_counts's, no dispatch
        self.on_device = False  # whether add() has counted anything on the device (else read() syncs nothing)
        self.seen = 0
        self.classes = 0  # the logits' width, once a batch has been seen
        self.regress = False  # real-valued labels: no accuracy to count (it reads NaN)
        self.marks: dict[str, Totals] = {}

    @torch.no_grad()
    def add(self, loss: torch.Tensor, logits: torch.Tensor, yb: torch.Tensor) -> None:
        """One batch's mean loss and predictions; stays on the device (no .item() per step)."""
        self.on_device = True
        self.loss.add_(loss, alpha=len(yb))
        self.regress = yb.is_floating_point()
        if not self.regress:
            self.correct.add_((logits.argmax(1) == yb).sum())
        self.seen += len(yb)
        self.classes = logits.shape[-1]

    def add_counts(self, loss: float, correct: int, n: int, classes: int, regress: bool) -> None:
        """One batch's mean loss and correct predictions, counted on the host (the NumPy path)."""
        self.host[0] += loss * n
        self.regress = regress
        if not regress:
            self.host[1] += correct
        self.seen += n
        self.classes = classes

    def read(self) -> Totals:
        """The totals on the host: the one sync of a report or an epoch's end."""
        if not self.on_device:
            return self.host[0], self.host[1], self.seen
        return self.loss.item() + self.host[0], int(self.correct.item()) + self.host[1], self.seen

    def since(self, mark: str, totals: Totals) -> tuple[float, float, int]:
        """(mean loss, accuracy, examples) since `mark` was last taken; takes it again. The
        accuracy is NaN for a regression."""
        loss0, correct0, seen0 = self.marks.get(mark, (0.0, 0, 0))
        self.marks[mark] = totals
        seen = max(1, totals[2] - seen0)
        accuracy = math.nan if self.regress else (totals[1] - correct0) / seen
        return (totals[0] - loss0) / seen, accuracy, totals[2] - seen0


class BusyClock:
    """Seconds spent inside training calls; the pauses between a page's frames don't count."""

    def __init__(self) -> None:
        self.elapsed = 0.0
        self._since: float | None = None
        self._marks: dict[str, float] = {}

    def start(self) -> None:
        self._since = time.perf_counter()

    def tick(self) -> None:
        if self._since is not None:
            now = time.perf_counter()
            self.elapsed += now - self._since
            self._since = now

    def stop(self) -> None:
        self.tick()
        self._since = None

    def since(self, mark: str) -> float:
        """Busy seconds since `mark` was last taken."""
        self.tick()
        return self.elapsed - self._marks.get(mark, 0.0)

    def lap(self, mark: str) -> float:
        """Busy seconds since `mark` was last taken; takes it again."""
        seconds = self.since(mark)
        self._marks[mark] = self.elapsed
        return seconds


class RateMeter:
    """Examples per second over about the last `tau` seconds of training.

    One report can be a few milliseconds long, so its own rate jumps with every hiccup of a
    shared machine. Both the examples and the seconds are averaged with weights that halve
    every tau·ln 2 seconds of training, and their ratio is the rate: no start-up bias (both
    sums start at zero), old reports forgotten at the same pace however long each one was.
    """

    def __init__(self, tau: float = 1.0) -> None:
        self.tau = tau
        self.examples = 0.0
        self.seconds = 0.0

    @property
    def rate(self) -> float:
        return self.examples / self.seconds if self.seconds > 0 else 0.0

    def update(self, examples: int, seconds: float) -> float:
        keep = math.exp(-max(seconds, 0.0) / self.tau)
        self.examples = self.examples * keep + examples
        self.seconds = self.seconds * keep + max(seconds, 0.0)
        return self.rate

    def eta(self, examples_left: int) -> float:
        """Seconds to train `examples_left` more at the current rate (inf before any rate)."""
        return examples_left / self.rate if self.rate > 0 else math.inf
