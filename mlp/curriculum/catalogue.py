"""The lessons: presets that fill a page, say what to watch for and why, and keep a promise.

Each lesson is a link's query for one page (every setting, so it reproduces exactly) and, for
most, a second setup to compare it with. What a lesson promises (the `outcome` line) is
asserted through the library in tests/test_catalogue.py, with the thresholds written there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mlp.lessons import forward_backward as fb
from mlp.lessons import mnist as mn
from mlp.lessons import playground as pg

PAGES = ("forward_backward", "playground", "mnist")  # the pages' url paths
LESSON = "lesson"  # ?lesson=<key> in a page's link: the lesson its settings came from
COMPARE = "compare"  # ?compare=1 on the playground: train the other engine alongside


@dataclass(frozen=True)
class Setup:
    """A page and the link query that fills it."""

    page: str  # one of PAGES
    query: dict[str, str] = field(hash=False)


@dataclass(frozen=True)
class Lesson:
    """One preset: the setup, what to watch, why, and what to compare it with."""

    key: str  # its name in links
    title: str
    setup: Setup
    watch: str  # what to watch for, in a sentence
    why: str  # why it happens, in a sentence
    outcome: str  # the promise its test keeps, in a line
    compare: tuple[tuple[str, Setup], ...] = ()  # (button label, a setup to compare with), each a fresh run
    watch_elsewhere: tuple[tuple[str, str], ...] = ()  # (page, what to watch there) for its other pages

    @property
    def page(self) -> str:
        return self.setup.page

    @property
    def pages(self) -> tuple[str, ...]:
        """Every page its setups are on, its own first: the lesson's panel goes with it to each."""
        return tuple(dict.fromkeys([self.page, *(setup.page for _, setup in self.compare)]))

    def watch_on(self, page: str) -> str:
        """What to watch for on `page`: its own sentence there, or the lesson's."""
        return dict(self.watch_elsewhere).get(page, self.watch)

    def setup_on(self, page: str) -> Setup:
        """Its setup on `page`: its own, else its first comparison there."""
        return next(s for s in (self.setup, *(s for _, s in self.compare)) if s.page == page)

    def link(self, setup: Setup | None = None) -> dict[str, str]:
        """The query of its setup (or of `setup`), with the lesson's key."""
        return (setup or self.setup).query | {LESSON: self.key}


def playground_setup(compare: bool = False, **changes: Any) -> Setup:
    """The playground with these settings; `compare`: both engines, side by side."""
    return Setup("playground", pg.to_query(pg.Settings(**changes)) | ({COMPARE: "1"} if compare else {}))


def forward_setup(view: fb.ForwardView | None = None, **changes) -> Setup:
    """Forward & backward with these settings, opened at `view` (its tab and step)."""
    return Setup("forward_backward", fb.to_query(fb.ForwardSettings(**changes), view or fb.ForwardView()))


XOR = {"kind": "xor", "n": 400, "noise": 0.05, "classes": 2, "activation": "tanh", "lr": 0.03, "epochs": 300}
FIVE_ARMS = {"kind": "spiral", "n": 1000, "classes": 5, "lr": 0.01, "epochs": 200}
MOONS = {"kind": "moons", "n": 400, "noise": 0.15, "classes": 2, "hidden": (8, 8), "activation": "tanh"}
DYING = {
    "kind": "circles",
    "n": 400,
    "classes": 2,
    "hidden": (32, 32),
    "optimizer": "sgd",
    "lr": 10.0,
    "batch_size": 64,
    "grad_clip": 0.5,
    "epochs": 300,
    "seed": 1,  # on about one seed in seven leaky ReLU stalls too (the lesson says so): not on the first
    "data_seed": 1,
}
DEEP = {
    "kind": "moons",
    "n": 400,
    "noise": 0.15,
    "classes": 2,
    "hidden": (32,) * 8,
    "optimizer": "sgd",
    "lr": 0.1,
    "batch_size": 32,
    "epochs": 300,
}
FEW = {"kind": "circles", "n": 200, "noise": 0.25, "classes": 2, "test_fraction": 0.5, "hidden": (128, 128)}
RINGS = {"kind": "circles", "n": 400, "noise": 0.1, "classes": 2, "hidden": (), "lr": 0.03, "epochs": 200}
SPARSE = {
    "kind": "circles",
    "n": 400,
    "classes": 2,
    "hidden": (8, 8),
    "optimizer": "sgd",
    "lr": 0.3,
    "batch_size": 32,
    "epochs": 200,
}
BUMPS = {"kind": "reg-gauss", "n": 600, "noise": 0.0, "classes": 2, "activation": "tanh", "epochs": 1000}
TWO_BLOBS = {"kind": "blobs", "n": 400, "noise": 0.1, "classes": 2, "hidden": (8,), "lr": 0.03}

LESSONS: dict[str, Lesson] = {
    lesson.key: lesson
    for lesson in (
        Lesson(
            "xor-line",
            "A straight line can't separate XOR",
            playground_setup(**XOR, hidden=()),
            "With no hidden layer the boundary stays one straight line and test accuracy stays near 50%.",
            "Without a hidden layer the network is softmax(X W + b): its classes are split by straight "
            "lines, and no line puts XOR's opposite corners together.",
            "no hidden layer stays below 80% test accuracy (41–64% on ten seeds); one hidden layer of 8 "
            "tanh units reaches ≥ 90% (96–100%)",
            (("Add a hidden layer of 8 units", playground_setup(**XOR, hidden=(8,))),),
        ),
        Lesson(
            "circle-features",
            "Circles with x1² and x2², and no hidden layer",
            playground_setup(**RINGS),
            "With only x1 and x2 and no hidden layer the boundary is one straight line through the "
            "rings: test accuracy stays near 50%. Add the inputs x1² and x2² and the same network "
            "draws a circle around the inner ring and separates them.",
            "A network with no hidden layer is linear in its inputs. A circle, x1² + x2² = r², is "
            "not a line in x1 and x2, but it is one in x1² and x2²: the right features do what a "
            "hidden layer would otherwise have to learn.",
            "no hidden layer on x1, x2 stays below 70% test accuracy (44–58% on ten seeds); with "
            "x1² and x2² added it reaches ≥ 95% (97.5–100%)",
            (("Add the inputs x1² and x2²", playground_setup(**RINGS, features=("x1sq", "x2sq"))),),
        ),
        Lesson(
            "regression-bumps",
            "Regression: a plane fits a ramp, not bumps",
            playground_setup(**BUMPS, hidden=(), lr=0.03),
            "Six bumps, three up (orange) and three down (blue): each point's colour is its value. "
            "With no hidden layer the output is a tilted plane, the best of which is nearly flat "
            "here: test R² stays near 0. Add two hidden layers of 16 and the bumps appear, one by "
            "one, and R² passes 0.8.",
            "With one linear output and the mean squared error, no hidden layer means ŷ = w1·x1 + "
            "w2·x2 + b: a plane, which fits reg-plane's ramp exactly but can only average bumps of "
            "both signs away. Hidden units each bend the surface once; enough of them build a bump.",
            "no hidden layer stays below R² 0.3 on the test points (-0.12–0.03 on ten seeds); two "
            "tanh layers of 16 reach R² ≥ 0.8 (0.93–0.98)",
            (("Two hidden layers of 16", playground_setup(**BUMPS, hidden=(16, 16), lr=0.01)),),
        ),
        Lesson(
            "width-depth",
            "Width vs depth on a spiral, same parameter budget",
            playground_setup(**FIVE_ARMS, hidden=(45,)),
            "After 200 epochs on five arms one layer of 45 units (365 parameters) still cuts across "
            "the arms' tips, near 90% test accuracy; two layers of 15 (365 parameters) follow them, "
            "near 96%. Train both for 1,500 epochs and both pass 95%: depth bought speed here.",
            "A second layer folds the first layer's pieces again, so the same parameters buy many "
            "more linear regions than one wide layer can cut.",
            "after 200 epochs two layers of 15 beat one layer of 45 at the same 365 parameters: "
            "test accuracy 95.5–98.5% vs 85.5–92%, test loss 0.11–0.30 vs 0.28–0.38 (ten seeds)",
            (("Two layers of 15 units", playground_setup(**FIVE_ARMS, hidden=(15, 15))),),
        ),
        Lesson(
            "learning-rate",
            "Learning rate too high, then too low",
            playground_setup(**MOONS, optimizer="sgd", lr=10.0, epochs=300),
            "At lr = 10 the loss explodes within a few epochs and the app stops the run and says so.",
            "Each step moves the weights by lr × gradient: too far, and it overshoots the valley into "
            "steeper ground, every step larger than the last. Too small, and it barely moves.",
            "SGD at lr = 10 diverges (the run stops, diverged, on ten seeds of ten); lr = 0.0001 keeps "
            "the train loss within 15% of its start for 300 epochs (1–10% lower); lr = 0.3 reaches "
            "≥ 95% (97.5–100%)",
            (
                ("Try lr = 0.0001", playground_setup(**MOONS, optimizer="sgd", lr=1e-4, epochs=300)),
                ("Try lr = 0.3", playground_setup(**MOONS, optimizer="sgd", lr=0.3, epochs=300)),
            ),
        ),
        Lesson(
            "dead-relu",
            "Dead ReLUs",
            playground_setup(**DYING),
            "With SGD at lr = 10 on batches of 64 most ReLU units go dark in the network view (0 for "
            "every point) within a few steps, and the network is left guessing: 50% test accuracy. "
            "Switch to leaky ReLU and the same steps find the circle, on most seeds: on about one "
            "in seven even leaky ReLU's units all land on their flat side and it stalls too (try "
            "the next seed).",
            "A big step pushes a unit's bias so low that it outputs 0 for every input; ReLU's "
            "gradient there is 0, so nothing ever brings it back. Leaky ReLU keeps a slope of 0.01 "
            "there, a trickle of gradient that lets such units recover. Clipping each gradient to "
            "norm 0.5 keeps the steps large but finite, so the run dies rather than explodes.",
            "ReLU: ≥ 50% of hidden units dead (55–77% on ten seeds) and test accuracy ≤ 60% (50%); "
            "leaky ReLU, the same steps: ≥ 90% (95–100%; below 90% on 15 of 100 seeds beyond these)",
            (("Switch to leaky ReLU", playground_setup(**DYING, activation="leaky_relu")),),
        ),
        Lesson(
            "init",
            "Initialisation matters in a deep stack",
            forward_setup(fb.ForwardView(tab="init", spread_depth=10), init="normal"),
            "With N(0, 0.02) weights each layer's activations shrink: after 10 layers they are about "
            "a million times smaller than at the input, while He keeps them about the same size.",
            "Each layer multiplies the spread by about σ·√fan_in, and ReLU, zeroing half the "
            "values, by √½ more: 0.02·√256·√½ ≈ 0.23 per layer, ten times over. He's σ = √(2/fan_in) "
            "gives √2, which ReLU's √½ brings back to 1.",
            "N(0, 0.02) shrinks a 10-layer stack's spread below 1/1000 (about 10⁻⁶), He keeps it within "
            "×2 (×0.58–1.08); trained with SGD, 8 layers with N(0, 0.02) stall at ln 2 ≈ 0.693 and 50% "
            "on moons while He reaches ≥ 95% (96–100% on ten seeds)",
            (
                ("Train 8 layers with N(0, 0.02)", playground_setup(**DEEP, init="normal")),
                ("The same 8 layers with He init", playground_setup(**DEEP, init="kaiming")),
            ),
            (
                (
                    "playground",
                    "Press Play: with N(0, 0.02) the 8-layer stack stays at a coin toss (loss ln 2 = "
                    "0.693, 50%) and the banner says the signal fades; the same 8 layers with He init "
                    "reach 95% and more.",
                ),
            ),
        ),
        Lesson(
            "overfitting",
            "Over-fitting, and weight decay",
            playground_setup(**FEW, epochs=1000),
            "100 training points and 17,000 parameters: train accuracy hits 100% while test accuracy "
            "stalls 15 to 30 points lower and the test loss climbs to several times its low: the "
            "curves part. Add weight decay and the test loss stays near its low; test accuracy is "
            "usually a few points higher, though on some seeds no higher.",
            "A wide net can memorise every training point, noise included; weight decay pulls the "
            "weights toward 0, which keeps the boundary smooth where there are no points.",
            "train − test accuracy ≥ 10 points (17–32 on ten seeds) and the test loss ends ≥ 3× its "
            "low (5–15×); weight decay 0.01 keeps the test loss within 1.5× its own low (1.01–1.10×) "
            "and under half the free net's (0.07–0.21×); test accuracy +1 to +17 points on these ten "
            "seeds, −3 to +18 on thirty others",
            (("Add weight decay 0.01", playground_setup(**FEW, epochs=1000, weight_decay=0.01)),),
        ),
        Lesson(
            "l1-zeros",
            "L1 makes weights exactly zero",
            playground_setup(**SPARSE, l1=0.01),
            "Press Play: with L1 at 0.01 the network view's edges go dashed one by one, and under it "
            "the count of weights that are exactly 0 climbs past half of the 96, while the circle "
            "is still found. With L2 instead, every weight stays, only smaller.",
            "L1's pull toward 0 is the same λ₁ whatever a weight's size, so a weight the data barely "
            "needs is pulled all the way and stays there: each step shrinks it by lr·λ₁ and stops "
            "at 0. L2's pull, 2λ₂·w, fades as the weight shrinks, so it never quite gets there.",
            "L1 0.01: ≥ 50% of the 96 weights exactly 0 (79–85 on ten seeds) at ≥ 90% test "
            "accuracy (96–100%); L2 0.01: none exactly 0, yet mean |w| ≤ 0.6× the unpenalised "
            "run's (0.36–0.49×)",
            (
                ("The same with L2 0.01", playground_setup(**SPARSE, l2=0.01)),
                ("No penalty", playground_setup(**SPARSE)),
            ),
        ),
        Lesson(
            "engines",
            "Manual backprop equals autograd",
            playground_setup(**MOONS, engine="manual", optimizer="sgd", lr=0.3, epochs=300, compare=True),
            "Press Play: both engines train side by side from the same weights. Beside the plane, the "
            "other engine's train loss (dashed) lies on this one's, and the gap printed under the "
            "confusion matrix stays at float32 rounding.",
            "mlp.manual computes dz2 = (P − Y)/N, dW2 = A1ᵀ dZ2 and the rest by hand; autograd derives "
            "the same products, so only the order of float32 additions differs. Plain SGD carries "
            "that rounding along unchanged; Adam divides by √v and can magnify it where a gradient "
            "is near 0, so this lesson uses SGD.",
            "with SGD over 300 epochs the two engines' train losses differ by < 1e-5 (≤ 1.2e-7 on ten "
            "seeds) and weights by < 1e-4 (≤ 1.1e-6)",
        ),
        Lesson(
            "mnist-minute",
            "MNIST in a minute",
            Setup("mnist", mn.to_query(mn.MnistSettings(lr=2e-3))),
            "Press Start: 784-128-10 passes 90% test accuracy in 5 epochs (about 92%), and under "
            "*Evaluate*, *First-layer weights* shows what training changed in each unit: pen strokes.",
            "Each first-layer unit is a 28×28 template the digit is compared with; training turns "
            "random templates into the strokes that tell digits apart.",
            "≥ 90% test accuracy on the bundled sample (91.0–93.3% on ten seeds); first-layer "
            "neighbour correlation ≥ 0.5 (0.73–0.75)",
        ),
        Lesson(
            "teacher",
            "The teacher network's task",
            forward_setup(source="teacher", k=5, hidden=(64,), n=8),
            "Sixteen inputs, five classes, labels from a fixed random ReLU network: the seed notes' "
            "task, one batch of it through a student 16-64-5. Press *Train the student*: on the "
            "whole task its loss falls from about 0.9 to below 0.25 in 30 epochs.",
            "A student at least as large as its teacher can express the labels exactly, so what is "
            "left to see is whether training finds them.",
            "the page's 16-64-5 student, trained in the app, gets its train loss below 0.25 in 30 "
            "epochs (0.14–0.20 on ten seeds; test accuracy ≥ 87%, 88.7–92.0%); in 2D, four "
            "classes, the playground's 32-32 student reaches ≥ 95% (97–100%)",
            (
                (
                    "The same task in 2D",
                    playground_setup(
                        kind="teacher", n=1000, noise=0.0, classes=4, hidden=(32, 32), epochs=500
                    ),
                ),
            ),
            (
                (
                    "playground",
                    "Press Play: four classes drawn by a random ReLU teacher in 2D, with its bent "
                    "borders; a 32-32 student finds them and passes 95% test accuracy.",
                ),
            ),
        ),
        Lesson(
            "two-blobs",
            "The NumPy network on two blobs",
            playground_setup(**TWO_BLOBS, engine="manual", epochs=200),
            "Two Gaussian blobs, one hidden layer of 8, and gradients from mlp.manual's NumPy "
            "backprop: the boundary settles between the blobs within a few dozen epochs.",
            "It is the seed notes' NumPy network: forward, (P − Y)/N, backward by hand, then the same "
            "optimizer step autograd's gradients would get.",
            "the manual engine reaches ≥ 95% test accuracy in 200 epochs (98.8–100% on ten seeds)",
        ),
    )
}


def lessons_for(page: str) -> list[Lesson]:
    """The lessons with a setup on `page`: their own, or one to compare with."""
    return [lesson for lesson in LESSONS.values() if page in lesson.pages]
