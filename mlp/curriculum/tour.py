"""Guided tours: an ordered list of stops across the pages, for a class to be walked through.

A stop is a page's setup (a link's query, so it reproduces exactly), a sentence or two for the
class, the part of the page to point at, and what the presenter does there (play, step or
start). A tour is moved with → and ←, one stop at a time, and a link names its stop, so a class
can pick it up where it was left. Stops built from lessons keep their lessons' promises, which
tests/test_catalogue.py asserts over seeds; tests/test_tour.py checks the tour itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlp.curriculum.catalogue import LESSON, LESSONS, Setup, forward_setup
from mlp.curriculum.challenges import CHALLENGE, CHALLENGES
from mlp.lessons import forward_backward as fb
from mlp.lessons import mnist as mn
from mlp.lessons import playground as pg

TOUR = "tour"  # ?tour=<key> in a page's link: the tour being given
STOP = "stop"  # ?stop=<n>: its stop, counted from 1

# The parts of each page a stop may point at: each is drawn in a container with this key
# (Streamlit gives it the CSS class st-key-<key>, which the tour outlines).
HIGHLIGHTS = {
    "forward_backward": ("fb_heatmaps", "fb_equation", "fb_code", "fb_teacher"),
    "playground": ("pg_plane", "pg_network", "pg_curves", "pg_controls"),
    "mnist": ("mn_curves", "mn_confusion", "mn_mistakes", "mn_weights"),
}
ACTIONS = {  # what the presenter does at a stop, as the stop's card says it
    "play": "Press Space (or Play) and watch.",
    "step": "Press → to go through it one operation at a time.",
    "start": "Press Start and watch the curves grow.",
    "look": "",
}


@dataclass(frozen=True)
class Stop:
    """One stop: where, what to say, what to point at, what to do."""

    title: str
    setup: Setup
    say: str  # a sentence or two for the class
    highlight: str  # one of HIGHLIGHTS[setup.page]
    action: str  # one of ACTIONS
    minutes: int  # of the class's time, planned
    lesson: str | None = None  # the lesson it comes from: the page's lesson panel shows it
    challenge: str | None = None  # the challenge it sets: the page checks it live
    steps: tuple[str, str] | None = None  # on Forward & backward: the first and last step it walks
    pace: int = pg.CLASS_PACE  # on the playground: steps a second, for its effect to show in 10-30 s

    @property
    def page(self) -> str:
        return self.setup.page

    @property
    def query(self) -> dict[str, str]:
        """The link query that fills its page: its setup, its lesson or challenge."""
        extra = {LESSON: self.lesson} if self.lesson else {}
        extra |= {CHALLENGE: self.challenge} if self.challenge else {}
        if self.page == "playground":
            extra[pg.SPECS["speed"].key] = str(self.pace)
        elif self.page == "mnist":
            extra[mn.SPECS["pace"].key] = mn.CLASS
        return self.setup.query | extra


@dataclass(frozen=True)
class Tour:
    """An ordered list of stops, given in one class."""

    key: str
    title: str
    stops: tuple[Stop, ...]

    @property
    def minutes(self) -> int:
        return sum(stop.minutes for stop in self.stops)

    def link(self, number: int) -> dict[str, str]:
        """The query of stop `number` (from 1): its setup, the tour and the stop."""
        return self.stops[number - 1].query | {TOUR: self.key, STOP: str(number)}

    def stop_from(self, text: str | None) -> int | None:
        """A link's stop number if it names one of this tour's stops, else None."""
        if text is None or not text.isdigit() or not 1 <= int(text) <= len(self.stops):
            return None
        return int(text)

    def elapsed(self, number: int) -> int:
        """Minutes of the class before stop `number` begins."""
        return sum(stop.minutes for stop in self.stops[: number - 1])


def _lesson(key: str, which: int = 0, **stop) -> Stop:
    """A stop on a lesson's setup (`which` = 0) or on its comparison number `which`."""
    lesson = LESSONS[key]
    setup = lesson.setup if which == 0 else lesson.compare[which - 1][1]
    stop.setdefault("say", lesson.watch_on(setup.page))
    return Stop(setup=setup, lesson=key, **stop)


def _walk(first: str, last: str, **stop) -> Stop:
    """A stop on Forward & backward that steps from `first` to `last`."""
    view = fb.ForwardView(step=first)
    return Stop(
        setup=forward_setup(view), highlight="fb_heatmaps", action="step", steps=(first, last), **stop
    )


HOW_AN_MLP_LEARNS = Tour(
    "how-an-mlp-learns",
    "How an MLP learns",
    (
        _walk(
            "z1",
            "loss",
            title="The forward pass",
            say="A batch goes in as the rows of X. Each layer is a matrix product, a bias and a "
            "ReLU; softmax turns the last scores into probabilities, and the loss is how surprised "
            "the network is by the right answers.",
            minutes=6,
        ),
        _walk(
            "Y",
            "loss_new",
            title="Backprop, by hand",
            say="The same operations backwards: dz2 = (P − Y)/N, then every weight's share of the "
            "blame, layer by layer, checked against autograd. Then one step, W ← W − lr·dW, and the "
            "same batch's loss goes down.",
            minutes=6,
        ),
        _lesson(
            "xor-line",
            title="XOR needs a hidden layer",
            highlight="pg_plane",
            action="play",
            minutes=4,
            pace=5,
        ),
        _lesson(
            "xor-line",
            1,
            title="Eight hidden units bend the boundary",
            say="One hidden layer of 8 tanh units: each unit draws one line, and the output combines "
            "them. The boundary bends around XOR's corners and test accuracy passes 90%.",
            highlight="pg_network",
            action="play",
            minutes=4,
            pace=5,
        ),
        _lesson(
            "width-depth",
            title="Width against depth",
            say="Five spiral arms and one layer of 45 units: 365 parameters. Watch how it cuts "
            "across the arms' tips; then → for two layers of 15, the same 365 parameters.",
            highlight="pg_plane",
            action="play",
            minutes=3,
            pace=10,
        ),
        _lesson(
            "width-depth",
            1,
            title="Depth folds the plane",
            say="Two layers of 15 units follow the arms that one layer of 45 cut: the second layer "
            "folds the first layer's pieces again.",
            highlight="pg_plane",
            action="play",
            minutes=3,
            pace=10,
        ),
        _lesson(
            "learning-rate",
            title="A learning rate too high",
            highlight="pg_curves",
            action="play",
            minutes=3,
        ),
        _lesson(
            "learning-rate",
            2,
            title="A learning rate that works",
            say="The same moons at lr = 0.3: the loss falls steadily and the boundary settles.",
            highlight="pg_curves",
            action="play",
            minutes=2,
            pace=10,
        ),
        _lesson(
            "dead-relu",
            title="Dead units",
            highlight="pg_network",
            action="play",
            minutes=4,
            pace=10,
        ),
        _lesson(
            "init",
            1,
            title="Initialisation in a deep stack",
            highlight="pg_curves",
            action="play",
            minutes=4,
            pace=10,
        ),
        _lesson(
            "overfitting",
            title="Over-fitting",
            highlight="pg_curves",
            action="play",
            minutes=4,
            pace=50,  # its 1,000 epochs in 20 s: the curves part as the class watches
        ),
        _lesson(
            "mnist-minute",
            title="Handwritten digits",
            highlight="mn_curves",
            action="start",
            minutes=4,
        ),
        Stop(
            "Your turn: a challenge",
            CHALLENGES["circles-4"].start,
            "Separate the circles with at most 4 hidden units in all. The page checks every run "
            "and says when the goal is met; share the link of the setup that met it.",
            highlight="pg_plane",
            action="play",
            minutes=3,
            challenge="circles-4",
        ),
    ),
)

TOURS: dict[str, Tour] = {tour.key: tour for tour in (HOW_AN_MLP_LEARNS,)}
