"""Challenges: a goal with numbers ("circles, at most 4 hidden units, test accuracy ≥ 95%"),
rules on the settings, and a check a page runs live on what its run has reached.

Each challenge has a start (the page's setup when it is chosen) that does not meet it and a
known solution that does; tests/test_challenges.py trains both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any

import numpy as np

from mlp.curriculum.catalogue import Setup, playground_setup
from mlp.data import make_2d
from mlp.data.features import input_width
from mlp.data.toy import HIDDEN_SEED
from mlp.lessons import mnist as mn
from mlp.lessons import playground as pg

CHALLENGE = "challenge"  # ?challenge=<key> in a page's link


def parameter_count(widths: Sequence[int]) -> int:
    """Weights and biases of an MLP with these layer widths, inputs first: Σ (n_in + 1) · n_out."""
    return sum((a + 1) * b for a, b in pairwise(widths))


@dataclass(frozen=True)
class Score:
    """What a run had reached at the end of one epoch, on its test points."""

    epoch: int
    test_acc: float | None
    test_loss: float | None


@dataclass(frozen=True)
class Verdict:
    """Whether a run met its challenge, said in a sentence."""

    met: bool
    text: str  # what the page says, in a sentence (Markdown-free)
    epoch: int | None = None  # where it was met


@dataclass(frozen=True)
class Challenge:
    """A goal on one page, the rules its settings must keep, and how to tell it is met."""

    key: str
    page: str
    goal: str  # the challenge, in a sentence
    hint: str  # a nudge, not the answer
    start: Setup  # what the page shows when the challenge is chosen
    solution: Setup  # one known way to meet it (tested, never shown)
    metric: str  # "test_acc" (at least `target`) or "test_loss" (below `target`)
    target: float
    within: int | None = None  # epochs; None = any time
    rules: Callable[[Any], str | None] = lambda settings: None  # why settings don't qualify, or None

    def problem(self, settings: Any) -> str | None:
        """Why a run with these settings can't count, or None."""
        return self.rules(settings)

    def reached(self, score: Score) -> bool:
        value = getattr(score, self.metric)
        if value is None or (self.within is not None and score.epoch > self.within):
            return False
        return value >= self.target if self.metric == "test_acc" else value < self.target

    def check(self, settings: Any, scores: Sequence[Score]) -> Verdict:
        """Whether the run (its settings, its per-epoch scores) meets the challenge, in words."""
        if problem := self.problem(settings):
            return Verdict(False, f"These settings don't count: {problem}")
        if met := next((s for s in scores if self.reached(s)), None):
            return Verdict(True, f"Met at epoch {met.epoch:,}: {self._value(met)}.", met.epoch)
        window = [s for s in scores if self.within is None or s.epoch <= self.within]
        values = [v for s in window if (v := getattr(s, self.metric)) is not None]
        if not values:
            return Verdict(False, "Not yet: train to see how close you get.")
        best = max(values) if self.metric == "test_acc" else min(values)
        within = f" within {self.within:,} epochs" if self.within else ""
        return Verdict(
            False, f"Not yet: best {self._name()} {self._format(best)}{within}, goal {self._goal()}."
        )

    def best(self, scores: Sequence[Score]) -> Score | None:
        """The run's best score within the challenge's epochs (the first of equals), or None."""
        window = [
            s
            for s in scores
            if getattr(s, self.metric) is not None and (self.within is None or s.epoch <= self.within)
        ]
        sign = 1 if self.metric == "test_acc" else -1
        return max(window, key=lambda s: sign * getattr(s, self.metric), default=None)

    def parameters(self, settings: Any) -> int:
        """The weights and biases of the network `settings` describe."""
        return _mnist_params(settings) if self.page == "mnist" else _playground_params(settings)

    def _name(self) -> str:
        return "test accuracy" if self.metric == "test_acc" else "test loss"

    def _format(self, value: float) -> str:
        return f"{value:.1%}" if self.metric == "test_acc" else f"{value:.3f}"

    def _goal(self) -> str:
        return (
            f"≥ {self._format(self.target)}"
            if self.metric == "test_acc"
            else f"< {self._format(self.target)}"
        )

    def _value(self, score: Score) -> str:
        return f"{self._name()} {self._format(getattr(score, self.metric))}"


# --- the playground's ---------------------------------------------------------------------------


def _variant(setup: Setup, **changes: Any) -> Setup:
    return Setup("playground", pg.to_query(replace(pg.from_query(setup.query)[0], **changes)))


def _same_data(start: Setup) -> Callable[[pg.Settings], str | None]:
    """A rule: the start's points (kind, count, noise, classes, split and seed) unchanged."""
    expected, _ = pg.from_query(start.query)

    def rule(settings: pg.Settings) -> str | None:
        if settings.data_key != expected.data_key:
            e = expected
            data = f"{e.kind}, {e.n} points, noise {e.noise:g}, test {e.test_fraction:g}, seed {e.data_seed}"
            return f"keep the challenge's data ({data})."
        return None

    return rule


def _all(*rules: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    return lambda settings: next((p for rule in rules if (p := rule(settings))), None)


def _playground_params(settings: pg.Settings) -> int:
    return parameter_count([input_width(settings.features), *settings.hidden, settings.classes])


CIRCLES = playground_setup(kind="circles", n=400, noise=0.1, classes=2, hidden=(8,), lr=0.03, epochs=300)
SPIRAL = playground_setup(kind="spiral", classes=3, optimizer="sgd", lr=0.01, epochs=300)
MOONS = playground_setup(
    kind="moons", n=400, noise=0.15, classes=2, hidden=(8, 8), activation="tanh", lr=0.03, epochs=100
)
SMALL_SPIRAL = playground_setup(kind="spiral", classes=3, epochs=1000)


def _at_most_units(limit: int) -> Callable[[pg.Settings], str | None]:
    return lambda s: (
        f"use at most {limit} hidden units in all (now {sum(s.hidden)})." if sum(s.hidden) > limit else None
    )


def _at_most_parameters(count: Callable[[Any], int], limit: int) -> Callable[[Any], str | None]:
    def rule(settings: Any) -> str | None:
        n = count(settings)
        return f"use at most {limit:,} parameters (now {n:,})." if n > limit else None

    return rule


def _lines_only(settings: pg.Settings) -> str | None:
    """The circles challenge asks for lines that fence the circle in: x1² + x2² would do it alone."""
    return "use only x1 and x2 as inputs (no derived features)." if settings.features else None


def _sgd(settings: pg.Settings) -> str | None:
    return None if settings.optimizer == "sgd" else "use plain SGD (the optimizer 'sgd')."


# --- the MNIST page's -------------------------------------------------------------------------


def _mnist_params(settings: mn.MnistSettings) -> int:
    return parameter_count([784, *settings.hidden, 10])


CHALLENGES: dict[str, Challenge] = {
    c.key: c
    for c in (
        Challenge(
            "circles-4",
            "playground",
            "Separate the circles with at most 4 hidden units in all, on x1 and x2 alone: test "
            "accuracy ≥ 95%.",
            "How many straight lines does it take to fence in the inner circle?",
            CIRCLES,
            _variant(CIRCLES, hidden=(4,), activation="relu"),
            "test_acc",
            0.95,
            rules=_all(_same_data(CIRCLES), _at_most_units(4), _lines_only),
        ),
        Challenge(
            "spiral-sgd",
            "playground",
            "Plain SGD on the spiral: test loss below 0.1 within 300 epochs.",
            "SGD has no per-weight step sizes: its learning rate has to do all the work.",
            SPIRAL,
            _variant(SPIRAL, lr=0.3, hidden=(128, 128), batch_size=32),
            "test_loss",
            0.1,
            within=300,
            rules=_all(_same_data(SPIRAL), _sgd),
        ),
        Challenge(
            "moons-20",
            "playground",
            "Moons at 99% test accuracy within 20 epochs.",
            "An epoch is one pass over the data; how many steps it holds is up to you.",
            MOONS,
            _variant(MOONS, batch_size=16, lr=0.1),
            "test_acc",
            0.99,
            within=20,
            rules=_same_data(MOONS),
        ),
        Challenge(
            "spiral-100",
            "playground",
            "The spiral with at most 100 parameters: test accuracy ≥ 95%.",
            "Count them: each layer has (inputs + 1) × units.",
            SMALL_SPIRAL,
            playground_setup(kind="spiral", classes=3, hidden=(16,), epochs=1000),
            "test_acc",
            0.95,
            rules=_all(_same_data(SMALL_SPIRAL), _at_most_parameters(_playground_params, 100)),
        ),
        Challenge(
            "mnist-10k",
            "mnist",
            "MNIST with at most 10,000 parameters: test accuracy ≥ 88%.",
            "Nearly all of a small network's parameters sit in its first layer: 785 per unit.",
            Setup("mnist", mn.to_query(mn.MnistSettings())),
            Setup("mnist", mn.to_query(mn.MnistSettings(hidden=(12,), lr=3e-3, epochs=20))),
            "test_acc",
            0.88,  # 12 units (9,550 parameters) top out near 90-91% on the 4,000 sample digits
            rules=_at_most_parameters(_mnist_params, 10_000),
        ),
        Challenge(
            "mnist-3",
            "mnist",
            "MNIST at 91% test accuracy in at most 3 epochs.",
            "More steps per epoch, or more units per step?",
            Setup("mnist", mn.to_query(mn.MnistSettings(epochs=3))),
            Setup("mnist", mn.to_query(mn.MnistSettings(hidden=(512,), lr=2e-3, batch_size=32, epochs=3))),
            "test_acc",
            0.91,  # on the 700 test digits a challenge shows: the solution 92.1-93.9%, the start 86.9-89.1%
            within=3,
        ),
    )
}


def challenges_for(page: str) -> list[Challenge]:
    """The challenges on `page`."""
    return [c for c in CHALLENGES.values() if c.page == page]


def hidden_points(settings: pg.Settings, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A playground challenge's hidden test points: as many as its visible ones, drawn from the
    same distribution (its kind, noise and classes) with another seed. No page shows them; a
    class board ranks on them once the instructor closes the challenge (mlp.rooms). In a class
    room, `seed` comes from a secret the room keeps (Rooms.room_seed): no public information
    computes the points. Without one (no room, no board), the seed is the data's own plus
    HIDDEN_SEED."""
    n = max(1, round(settings.n * settings.test_fraction))
    seed = settings.data_seed + HIDDEN_SEED if seed is None else seed
    return make_2d(settings.kind, n, settings.noise, settings.classes, seed)


def playground_scores(history: Any) -> list[Score]:
    """A playground run's per-epoch scores (its test points are the trainer's validation set)."""
    return [Score(e.epoch, e.val_acc, e.val_loss) for e in history.epochs]
