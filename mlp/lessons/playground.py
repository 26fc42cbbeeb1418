"""The 2D playground's settings: what they may hold, their link form, the presets, the points.

`Settings` is everything a link reproduces; the sidebar, the address bar and the run all
read it. The run itself (the network being trained) is `mlp.runs.playground`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mlp.data import MAX_CLASSES, PLANE_KINDS, Points, class_count, make_2d, split, task_of
from mlp.data.edits import Edits, edits_text, read_edits
from mlp.data.features import LABELS, NAMES, ordered
from mlp.links import settings as form
from mlp.links.settings import LinkNote
from mlp.spec import NETWORK, Spec, WidthLimits, setting, specs_of
from mlp.train import TrainConfig, engine_problem
from mlp.train.config import PENALTY_STOPS, TRAIN_SPECS

# One thread: a 2D net's matmuls are tiny, and with the cores shared (the browser drawing the
# frames, other visitors) a second thread made frames ~5x slower here (bench/playground_frame).
SMALL_NET_THREADS = 1
WIDTHS = WidthLimits(max_layers=8, max_width=128, min_layers=0)

DATA = "Data"
ENGINE_NAMES = TRAIN_SPECS["engine"].names  # how the pages name the engines
FROM_FILE = "file"  # the link's data= when the points were uploaded
EDITS_KEY = "pts"  # the link's points added and erased by clicks on the plane (mlp.data.edits)
SPEEDS = (1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 500, 1000, 2000)  # the speed control's stops, steps a second
CLASS_PACE = 3  # steps a second at which a class sees the default spiral's boundary form (10-23 s)
LEGACY_SPEED = "speed"  # links before speed was steps a second carried steps a frame, 10 frames a second
DATA_FIELDS = ("kind", "n", "noise", "classes", "test_fraction", "data_seed")
MODEL_FIELDS = ("features", "hidden", "activation", "init", "dropout", "seed")


@dataclass(frozen=True)
class Settings:
    """Everything a link reproduces: the data, the network and how it trains. Each field is the
    one declaration of its setting (mlp.links.settings): default, link name, range, widget."""

    kind: str = setting(
        "spiral",
        Spec(
            "data",
            choices=PLANE_KINDS,
            label="Data set",
            section=DATA,
            help="reg-plane and reg-gauss are regressions: each point has a real value, not a class.",
        ),
    )
    n: int = setting(600, Spec("n", 50, 2000, step=50, label="Points", section=DATA))  # train and test
    noise: float = setting(0.1, Spec("noise", 0.0, 1.0, step=0.05, label="Noise", section=DATA))
    classes: int = setting(3, Spec("classes", 2, MAX_CLASSES, label="Classes", section=DATA))  # or 2
    test_fraction: float = setting(0.2, Spec("test", 0.1, 0.5, step=0.05, label="Test share", section=DATA))
    data_seed: int = setting(0, form.SEED.like(key="dseed", label="Data seed", section=DATA))
    features: tuple[str, ...] = setting(
        (),
        Spec(
            "feat",
            choices=NAMES,
            many=True,
            label="Input features (besides x1, x2)",
            names=LABELS,
            section=NETWORK,
            help="More inputs computed from each point, TensorFlow Playground's: "
            "with x1² and x2² a network with no hidden layer draws circles.",
        ),
    )
    hidden: tuple[int, ...] = setting((32, 32), form.HIDDEN.like(widths=WIDTHS))
    activation: str = setting("relu", form.ACTIVATION)
    init: str = setting("kaiming", form.INIT)
    dropout: float = setting(0.0, form.DROPOUT)
    seed: int = form.train_setting(  # and dropout masks
        "seed", section=NETWORK, label="Seed (initial weights, batch order)"
    )
    engine: str = form.train_setting("engine")
    optimizer: str = form.train_setting("optimizer")
    momentum: float = form.train_setting("momentum")
    lr: float = form.train_setting(
        "lr", 0.01, stops=(1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
    )
    batch_size: int = setting(  # the page's own: 0 = the whole training set (train_config says how many)
        0,
        TRAIN_SPECS["batch_size"].like(
            stops=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 0), zero_last=True, names={0: "full"}
        ),
    )
    weight_decay: float = form.train_setting("weight_decay", stops=(0.0, 1e-5, 1e-4, 1e-3, 1e-2, 0.1))
    l1: float = form.train_setting("l1", stops=PENALTY_STOPS)
    l2: float = form.train_setting("l2", stops=PENALTY_STOPS)
    scheduler: str = form.train_setting("scheduler")
    warmup_epochs: float = form.train_setting("warmup_epochs", high=1000.0, step=10.0)
    grad_clip: float = form.train_setting("grad_clip", stops=(0.0, 0.1, 0.5, 1.0, 5.0))
    epochs: int = form.train_setting(
        "epochs", 2000, low=10, high=100_000, step=100, label="Epochs (run length and schedule horizon)"
    )
    speed: int = setting(
        100,
        Spec(
            "sps",
            stops=SPEEDS,
            label="Speed (steps a second)",
            for_class=CLASS_PACE,
            help=f"Optimizer steps a second while playing. {CLASS_PACE}: a class's pace, the boundary "
            "forming over 10-30 s; projector mode and tours start there.",
        ),
    )  # on the page's control bar, not in the sidebar
    discretize: bool = setting(
        False,
        Spec(
            "discrete",
            choices=(False, True),
            label="Discretize output",
            help="Each region in its class's one colour, without the shading of how sure the network "
            "is: where the boundary runs shows at a glance (TensorFlow Playground's toggle).",
        ),
    )  # under the plane; a view of the run, it changes nothing in training

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        object.__setattr__(self, "features", ordered(self.features))
        form.check(self, SPECS)
        if class_count(self.kind, self.classes) != self.classes:
            if task_of(self.kind) == "regress":
                raise ValueError(f"'{self.kind}' is a regression: it has no classes (leave classes at 2).")
            raise ValueError(f"'{self.kind}' has 2 classes; use blobs or spiral for more.")
        if problem := engine_problem(self.engine, self.dropout):
            raise ValueError(problem)

    def train_config(self, n_train: int, task: str) -> TrainConfig:
        """How the run trains on `n_train` points of a `task` (a regression's loss is the MSE)."""
        batch = n_train if self.batch_size == 0 else min(self.batch_size, n_train)
        return TrainConfig(
            **form.train_settings(self),  # every setting declared as TrainConfig's
            batch_size=batch,
            device="cpu",  # a 2D net is launch-bound: the CPU beats any GPU here
            report_every=10**9,  # sync only at epoch ends; the page reads once per frame
            threads=SMALL_NET_THREADS,
            loss="mse" if task == "regress" else "cross_entropy",
        )

    @property
    def data_key(self) -> tuple:
        """What decides the points: equal keys, equal points."""
        return tuple(getattr(self, f) for f in DATA_FIELDS)

    def needs_new_network(self, other: Settings) -> bool:
        """Whether `other` needs another network (not just other training settings)."""
        return any(getattr(self, f) != getattr(other, f) for f in MODEL_FIELDS)


SPECS: dict[str, Spec] = specs_of(Settings)

PRESETS: dict[str, Settings] = {
    "spiral": Settings(),
    "moons": Settings(kind="moons", n=400, noise=0.15, classes=2, hidden=(8, 8), activation="tanh", lr=0.03),
    "circles": Settings(kind="circles", n=400, noise=0.1, classes=2, hidden=(8,), lr=0.03),
    "xor": Settings(kind="xor", n=400, noise=0.05, classes=2, hidden=(8, 8), activation="tanh", lr=0.03),
    "blobs": Settings(kind="blobs", n=400, noise=0.1, classes=4, hidden=(), lr=0.05, epochs=500),
    "regression": Settings(
        kind="reg-gauss",
        n=600,
        noise=0.0,
        classes=2,
        hidden=(16, 16),
        activation="tanh",
        lr=0.01,
        epochs=1000,
    ),
}


def to_query(settings: Settings) -> dict[str, str]:
    """Every setting as a string, keyed by its short link name."""
    return form.to_query(settings, SPECS)


def from_query(query: Mapping[str, Any], base: Settings | None = None) -> tuple[Settings, list[LinkNote]]:
    """Settings from a link's query over `base`; each bad parameter is skipped with a note."""
    query, file_notes = dict(query), []
    edits = query.pop(EDITS_KEY, None)  # read after the settings: it needs their set (link_edits)
    if str(query.get("data")) in (FROM_FILE, str([FROM_FILE])):  # the page's link for uploaded points
        del query["data"]
        file_notes.append(
            LinkNote("data", FROM_FILE, "its points came from a file, which a link can't carry")
        )
    if str(query.get(LEGACY_SPEED)).isdigit() and SPECS["speed"].key not in query:  # steps a frame
        query[SPECS["speed"].key] = str(int(str(query.pop(LEGACY_SPEED))[:6]) * 10)
    values, given, notes = form.read_link(query, base or Settings(), SPECS)
    notes = file_notes + notes
    if (classes := class_count(values["kind"], values["classes"])) != values["classes"]:
        if "classes" in given:
            has = (
                "is a regression: it has no classes"
                if task_of(values["kind"]) == "regress"
                else "has 2 classes"
            )
            notes.append(LinkNote("classes", str(values["classes"]), f"this data set {has}"))
        values["classes"] = classes
    if engine_problem(values["engine"], values["dropout"]):
        notes.append(LinkNote("dropout", str(values["dropout"]), "the manual engine has no dropout"))
        values["dropout"] = 0.0
    settings = Settings(**values)
    return settings, notes + (_read_edits(edits, settings)[1] if edits is not None and not file_notes else [])


def link_edits(query: Mapping[str, Any], settings: Settings) -> Edits:
    """The clicks' edits a link carries for `settings`' set: none if it carries none, bad ones
    (from_query's notes say why) or points from a file (which a link can't carry)."""
    raw, uploaded = query.get(EDITS_KEY), str(query.get("data")) in (FROM_FILE, str([FROM_FILE]))
    return Edits() if raw is None or uploaded else _read_edits(raw, settings)[0]


def _read_edits(raw: Any, settings: Settings) -> tuple[Edits, list[LinkNote]]:
    text = str(raw[-1] if isinstance(raw, list) and raw else raw)
    shown = text if len(text) <= 60 else text[:60] + "…"
    try:
        edits = read_edits(text)
    except ValueError as err:
        return Edits(), [LinkNote(EDITS_KEY, shown, str(err))]
    if any(c >= settings.classes for _, _, c in edits.added):
        reason = f"this data set's classes are 0 to {settings.classes - 1}"
        return Edits(), [LinkNote(EDITS_KEY, shown, reason)]
    if edits.erased and edits.erased[-1] >= settings.n:
        return Edits(), [LinkNote(EDITS_KEY, shown, f"this data set's points are 0 to {settings.n - 1}")]
    return edits, []


def train_curve_name(settings: Settings) -> str:
    """The train curves' name: with L1 or L2 on, its loss includes the penalty (the test loss never)."""
    return "train (loss + penalty)" if settings.l1 or settings.l2 else "train"


def make_points(settings: Settings) -> Points:
    """The generated data set the settings describe, split (stratified, for classes)."""
    X, y = make_2d(settings.kind, settings.n, settings.noise, settings.classes, settings.data_seed)
    (X_train, y_train), (X_test, y_test) = split(X, y, settings.test_fraction, seed=settings.data_seed)
    if task_of(settings.kind) == "regress":  # one output: the value
        return Points(X_train, y_train, X_test, y_test, 1, f"{settings.kind} (regression)")
    arms = "arms" if settings.kind == "spiral" else "classes"
    name = f"{settings.kind} ({settings.classes} {arms})"
    return Points(X_train, y_train, X_test, y_test, settings.classes, name)


def link(settings: Settings, uploaded: bool = False, edits: Edits | None = None) -> dict[str, str]:
    """The address bar's query: every setting, and data=file when the points came from a file,
    else the points clicks added and erased, if any."""
    if uploaded:
        return to_query(settings) | {SPECS["kind"].key: FROM_FILE}
    return to_query(settings) | ({EDITS_KEY: edits_text(edits)} if edits else {})


def from_widgets(values: Mapping[str, Any], fallback: Settings) -> tuple[Settings, list[ValueError]]:
    """Settings from the sidebar's values; what can't be used keeps `fallback`'s, with the reason."""

    def fix(values: dict[str, Any]) -> None:
        if engine_problem(values["engine"], values["dropout"]):
            values["dropout"] = 0.0  # the sidebar disables the slider; its value stays for autograd
        values["classes"] = class_count(values["kind"], values["classes"])

    return form.from_widgets(values, fallback, SPECS, fix)
