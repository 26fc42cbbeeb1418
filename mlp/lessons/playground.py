"""The 2D playground's settings: what they may hold, their link form, the presets, the points.

`Settings` is everything a link reproduces; the sidebar, the address bar and the run all
read it. The run itself (the network being trained) is `mlp.lessons.playground_run`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mlp.data import KINDS, MAX_CLASSES, MULTICLASS_KINDS, Points, make_2d, split
from mlp.lessons import settings as form
from mlp.lessons.settings import LinkNote, Spec, WidthLimits
from mlp.model import ACTIVATIONS, INITS
from mlp.train import ENGINES, OPTIMIZERS, SCHEDULERS, TrainConfig, engine_problem

# One thread: a 2D net's matmuls are tiny, and with the cores shared (the browser drawing the
# frames, other visitors) a second thread made frames ~5x slower here (bench/playground_frame).
SMALL_NET_THREADS = 1
WIDTHS = WidthLimits(max_layers=8, max_width=128, min_layers=0)

SPECS: dict[str, Spec] = {
    "kind": Spec("data", choices=KINDS),
    "n": Spec("n", 50, 2000, step=50),
    "noise": Spec("noise", 0.0, 1.0, step=0.05),
    "classes": Spec("classes", 2, MAX_CLASSES),
    "test_fraction": Spec("test", 0.1, 0.5, step=0.05),
    "data_seed": Spec("dseed", 0, 2**31 - 1),
    "hidden": Spec("hidden", widths=WIDTHS),
    "activation": Spec("act", choices=ACTIVATIONS),
    "init": Spec("init", choices=INITS),
    "dropout": Spec("dropout", 0.0, 0.9, step=0.05),
    "seed": Spec("seed", 0, 2**31 - 1),
    "engine": Spec("engine", choices=ENGINES),
    "optimizer": Spec("opt", choices=OPTIMIZERS),
    "lr": Spec("lr", stops=(1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)),
    "batch_size": Spec(  # 0 = the whole training set
        "bs", stops=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 0), zero_last=True
    ),
    "weight_decay": Spec("wd", stops=(0.0, 1e-5, 1e-4, 1e-3, 1e-2, 0.1)),
    "scheduler": Spec("sched", choices=SCHEDULERS),
    "warmup_epochs": Spec("warmup", 0.0, 1000.0, step=10.0),
    "grad_clip": Spec("clip", stops=(0.0, 0.1, 0.5, 1.0, 5.0)),
    "epochs": Spec("epochs", 10, 100_000, step=100),
    "speed": Spec("speed", stops=(1, 2, 5, 10, 20, 50, 100, 200)),
}
FROM_FILE = "file"  # the link's data= when the points were uploaded
DATA_FIELDS = ("kind", "n", "noise", "classes", "test_fraction", "data_seed")
MODEL_FIELDS = ("hidden", "activation", "init", "dropout", "seed")


@dataclass(frozen=True)
class Settings:
    """Everything a link reproduces: the data, the network and how it trains."""

    kind: str = "spiral"  # one of KINDS
    n: int = 600  # points, train and test together
    noise: float = 0.1
    classes: int = 3  # 2 to 5 for blobs and spiral; 2 otherwise
    test_fraction: float = 0.2
    data_seed: int = 0
    hidden: tuple[int, ...] = (32, 32)  # 0 to 8 layers of 1 to 128 units
    activation: str = "relu"
    init: str = "kaiming"
    dropout: float = 0.0
    seed: int = 0  # initial weights, batch order and dropout masks
    engine: str = "autograd"  # or "manual": mlp.manual's backprop
    optimizer: str = "adam"
    lr: float = 0.01
    batch_size: int = 0  # 0 = full batch
    weight_decay: float = 0.0
    scheduler: str = "none"
    warmup_epochs: float = 0.0
    grad_clip: float = 0.0  # 0 = off
    epochs: int = 2000  # the run's length, and the schedule's horizon
    speed: int = 10  # optimizer steps per animation frame

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        form.check(self, SPECS)
        if self.kind not in MULTICLASS_KINDS and self.classes != 2:
            raise ValueError(f"'{self.kind}' has 2 classes; use blobs or spiral for more.")
        if problem := engine_problem(self.engine, self.dropout):
            raise ValueError(problem)

    def train_config(self, n_train: int) -> TrainConfig:
        batch = n_train if self.batch_size == 0 else min(self.batch_size, n_train)
        return TrainConfig(
            optimizer=self.optimizer,
            lr=self.lr,
            batch_size=batch,
            epochs=self.epochs,
            weight_decay=self.weight_decay,
            scheduler=self.scheduler,
            warmup_epochs=self.warmup_epochs,
            grad_clip=self.grad_clip,
            seed=self.seed,
            device="cpu",  # a 2D net is launch-bound: the CPU beats any GPU here
            report_every=10**9,  # sync only at epoch ends; the page reads once per frame
            engine=self.engine,
            threads=SMALL_NET_THREADS,
        )

    @property
    def data_key(self) -> tuple:
        """What decides the points: equal keys, equal points."""
        return tuple(getattr(self, f) for f in DATA_FIELDS)

    def needs_new_network(self, other: Settings) -> bool:
        """Whether `other` needs another network (not just other training settings)."""
        return any(getattr(self, f) != getattr(other, f) for f in MODEL_FIELDS)


PRESETS: dict[str, Settings] = {
    "spiral": Settings(),
    "moons": Settings(kind="moons", n=400, noise=0.15, classes=2, hidden=(8, 8), activation="tanh", lr=0.03),
    "circles": Settings(kind="circles", n=400, noise=0.1, classes=2, hidden=(8,), lr=0.03),
    "xor": Settings(kind="xor", n=400, noise=0.05, classes=2, hidden=(8, 8), activation="tanh", lr=0.03),
    "blobs": Settings(kind="blobs", n=400, noise=0.1, classes=4, hidden=(), lr=0.05, epochs=500),
}


def to_query(settings: Settings) -> dict[str, str]:
    """Every setting as a string, keyed by its short link name."""
    return form.to_query(settings, SPECS)


def from_query(query: Mapping[str, Any], base: Settings | None = None) -> tuple[Settings, list[LinkNote]]:
    """Settings from a link's query over `base`; each bad parameter is skipped with a note."""
    query, file_notes = dict(query), []
    if str(query.get("data")) in (FROM_FILE, str([FROM_FILE])):  # the page's link for uploaded points
        del query["data"]
        file_notes.append(
            LinkNote("data", FROM_FILE, "its points came from a file, which a link can't carry")
        )
    values, given, notes = form.read_link(query, base or Settings(), SPECS)
    notes = file_notes + notes
    if values["kind"] not in MULTICLASS_KINDS and values["classes"] != 2:
        if "classes" in given:
            notes.append(LinkNote("classes", str(values["classes"]), "this data set has 2 classes"))
        values["classes"] = 2
    if engine_problem(values["engine"], values["dropout"]):
        notes.append(LinkNote("dropout", str(values["dropout"]), "the manual engine has no dropout"))
        values["dropout"] = 0.0
    return Settings(**values), notes


def make_points(settings: Settings) -> Points:
    """The generated data set the settings describe, split stratified."""
    X, y = make_2d(settings.kind, settings.n, settings.noise, settings.classes, settings.data_seed)
    (X_train, y_train), (X_test, y_test) = split(X, y, settings.test_fraction, seed=settings.data_seed)
    arms = "arms" if settings.kind == "spiral" else "classes"
    name = f"{settings.kind} ({settings.classes} {arms})"
    return Points(X_train, y_train, X_test, y_test, settings.classes, name)


def link(settings: Settings, uploaded: bool = False) -> dict[str, str]:
    """The address bar's query: every setting, and data=file when the points came from a file."""
    return to_query(settings) | ({SPECS["kind"].key: FROM_FILE} if uploaded else {})


def from_widgets(values: Mapping[str, Any], fallback: Settings) -> tuple[Settings, list[ValueError]]:
    """Settings from the sidebar's values; what can't be used keeps `fallback`'s, with the reason."""

    def fix(values: dict[str, Any]) -> None:
        if engine_problem(values["engine"], values["dropout"]):
            values["dropout"] = 0.0  # the sidebar disables the slider; its value stays for autograd
        if values["kind"] not in MULTICLASS_KINDS:
            values["classes"] = 2

    return form.from_widgets(values, fallback, SPECS, fix)
