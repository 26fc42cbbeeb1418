"""The 2D playground's model of the world: settings (and their URL form), presets, points from a
generator or a CSV, and one per-user training run that the page steps a few times per frame.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import numpy as np
import pandas as pd
import torch

from mlp.data import KINDS, MULTICLASS_KINDS, make_2d, split
from mlp.device import torch_threads
from mlp.metrics import confusion_matrix
from mlp.model import ACTIVATIONS, INITS, MLP
from mlp.train import ENGINES, OPTIMIZERS, SCHEDULERS, TrainConfig, Trainer, eval_mode, predict_proba

MAX_CSV_ROWS = 5_000
MAX_CSV_BYTES = 2_000_000
MAX_CSV_CLASSES = 8
PLANE = 1.5  # uploaded points are centred and scaled into [-PLANE, PLANE]^2
# One thread: a 2D net's matmuls are tiny, and with the cores shared (the browser drawing the
# frames, other visitors) a second thread made frames ~5x slower here (bench/playground_frame).
SMALL_NET_THREADS = 1


@dataclass(frozen=True)
class Spec:
    """How one setting is checked, and written in a link."""

    key: str  # its name in the URL
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None


SPECS: dict[str, Spec] = {
    "kind": Spec("data", choices=KINDS),
    "n": Spec("n", 50, 2000),
    "noise": Spec("noise", 0.0, 1.0),
    "classes": Spec("classes", 2, 5),
    "test_fraction": Spec("test", 0.1, 0.5),
    "data_seed": Spec("dseed", 0, 2**31 - 1),
    "hidden": Spec("hidden", 1, 128),  # widths; 0 to 8 layers
    "activation": Spec("act", choices=ACTIVATIONS),
    "init": Spec("init", choices=INITS),
    "dropout": Spec("dropout", 0.0, 0.9),
    "seed": Spec("seed", 0, 2**31 - 1),
    "engine": Spec("engine", choices=ENGINES),
    "optimizer": Spec("opt", choices=OPTIMIZERS),
    "lr": Spec("lr", 1e-4, 10.0),
    "batch_size": Spec("bs", 0, MAX_CSV_ROWS),  # 0 = the whole training set
    "weight_decay": Spec("wd", 0.0, 1.0),
    "scheduler": Spec("sched", choices=SCHEDULERS),
    "grad_clip": Spec("clip", 0.0, 100.0),
    "epochs": Spec("epochs", 10, 100_000),
    "speed": Spec("speed", 1, 500),
}
MAX_LAYERS = 8
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
    seed: int = 0  # initial weights and batch order
    engine: str = "autograd"  # or "manual": mlp.manual's backprop
    optimizer: str = "adam"
    lr: float = 0.01
    batch_size: int = 0  # 0 = full batch
    weight_decay: float = 0.0
    scheduler: str = "none"
    grad_clip: float = 0.0  # 0 = off
    epochs: int = 2000  # the run's length, and the schedule's horizon
    speed: int = 10  # optimizer steps per animation frame

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        for name in SPECS:
            problem = _problem(name, getattr(self, name))
            if problem:
                raise ValueError(problem)
        if self.kind not in MULTICLASS_KINDS and self.classes != 2:
            raise ValueError(f"'{self.kind}' has 2 classes; use blobs or spiral for more.")
        if self.engine == "manual" and self.dropout > 0:
            raise ValueError("The manual engine has no dropout: set dropout to 0 or use autograd.")

    def train_config(self, n_train: int) -> TrainConfig:
        batch = n_train if self.batch_size == 0 else min(self.batch_size, n_train)
        return TrainConfig(
            optimizer=self.optimizer,
            lr=self.lr,
            batch_size=batch,
            epochs=self.epochs,
            weight_decay=self.weight_decay,
            scheduler=self.scheduler,
            grad_clip=self.grad_clip,
            seed=self.seed,
            device="cpu",  # a 2D net is launch-bound: the CPU beats any GPU here
            report_every=10**9,  # sync only at epoch ends; the page reads once per frame
            engine=self.engine,
            threads=SMALL_NET_THREADS,
        )


def _problem(name: str, value: Any) -> str | None:
    """Why a value is not allowed for a setting, or None."""
    spec = SPECS[name]
    if spec.choices is not None:
        return (
            None
            if value in spec.choices
            else f"{name} must be one of {', '.join(spec.choices)}; got {value!r}."
        )
    if name == "hidden":
        if len(value) > MAX_LAYERS:
            return f"At most {MAX_LAYERS} hidden layers; got {len(value)}."
        bad = [w for w in value if not spec.low <= w <= spec.high]
        return f"Hidden widths must be 1 to 128; got {bad[0]}." if bad else None
    if isinstance(value, float) and not math.isfinite(value):
        return f"{name} must be a finite number; got {value}."
    if not spec.low <= value <= spec.high:
        return f"{name} must be between {spec.low:g} and {spec.high:g}; got {value}."
    return None


# --- presets ----------------------------------------------------------------------------------

PRESETS: dict[str, Settings] = {
    "spiral": Settings(),
    "moons": Settings(kind="moons", n=400, noise=0.15, classes=2, hidden=(8, 8), activation="tanh", lr=0.03),
    "circles": Settings(kind="circles", n=400, noise=0.1, classes=2, hidden=(8,), lr=0.03),
    "xor": Settings(kind="xor", n=400, noise=0.05, classes=2, hidden=(8, 8), activation="tanh", lr=0.03),
    "blobs": Settings(kind="blobs", n=400, noise=0.1, classes=4, hidden=(), lr=0.05, epochs=500),
}


# --- the link ---------------------------------------------------------------------------------


def to_query(settings: Settings) -> dict[str, str]:
    """Every setting as a string, keyed by its short URL name."""
    query = {}
    for f in fields(settings):
        value = getattr(settings, f.name)
        if f.name == "hidden":
            text = "-".join(str(w) for w in value) or "none"
        elif isinstance(value, float):
            text = repr(value)
        else:
            text = str(value)
        query[SPECS[f.name].key] = text
    return query


def from_query(query: Mapping[str, Any], base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Settings from a URL's query, starting from `base`; each bad parameter is skipped with a warning."""
    base = base or Settings()
    by_key = {spec.key: name for name, spec in SPECS.items()}
    values = asdict(base)
    warnings = []
    for key, raw in query.items():
        text = raw[-1] if isinstance(raw, list) else str(raw)
        name = by_key.get(key)
        if name is None:
            warnings.append(f"Ignored the unknown link parameter '{key}'.")
            continue
        try:
            value = _parse(name, text)
        except ValueError:
            warnings.append(f"Ignored {key}={text!r}: not a valid {name}.")
            continue
        problem = _problem(name, value)
        if problem:
            warnings.append(f"Ignored {key}={text!r}: {problem}")
            continue
        values[name] = value
    if values["kind"] not in MULTICLASS_KINDS and values["classes"] != 2:
        if "classes" in {by_key.get(k) for k in query}:
            warnings.append(f"Ignored classes={values['classes']}: '{values['kind']}' has 2 classes.")
        values["classes"] = 2
    if values["engine"] == "manual" and values["dropout"] > 0:
        warnings.append("Ignored dropout: the manual engine has none.")
        values["dropout"] = 0.0
    return Settings(**values), warnings


def _parse(name: str, text: str) -> Any:
    default = getattr(Settings(), name)
    if name == "hidden":
        text = text.strip().lower()
        return () if text in ("", "none") else tuple(int(w) for w in text.replace(",", "-").split("-"))
    if isinstance(default, bool):
        raise ValueError(name)
    if isinstance(default, int):
        value = float(text)
        if not value.is_integer():
            raise ValueError(text)
        return int(value)
    if isinstance(default, float):
        return float(text)
    return text


# --- points -------------------------------------------------------------------------------------


@dataclass
class Points:
    """A labelled 2D data set, split for training and testing."""

    X_train: np.ndarray  # (n_train, 2) float32
    y_train: np.ndarray  # (n_train,) int64
    X_test: np.ndarray
    y_test: np.ndarray
    classes: int
    name: str  # "spiral (3 arms)" or "points.csv"

    @property
    def extent(self) -> tuple[float, float, float, float]:
        """x and y ranges of the plane shown: every point plus a margin, square, at least ±1.5."""
        both = np.concatenate([self.X_train, self.X_test])
        half = max(PLANE, float(np.abs(both).max()) * 1.1)
        return (-half, half, -half, half)


def make_points(settings: Settings) -> Points:
    """The generated data set the settings describe, split stratified."""
    X, y = make_2d(settings.kind, settings.n, settings.noise, settings.classes, settings.data_seed)
    (X_train, y_train), (X_test, y_test) = split(X, y, settings.test_fraction, seed=settings.data_seed)
    arms = "arms" if settings.kind == "spiral" else "classes"
    return Points(
        X_train, y_train, X_test, y_test, settings.classes, f"{settings.kind} ({settings.classes} {arms})"
    )


@dataclass
class UploadedPoints:
    X: np.ndarray  # (n, 2) float32, centred and scaled into the plane
    y: np.ndarray  # (n,) int64 in 0..K-1
    classes: int
    note: str  # what was done to the file, in a sentence


def read_points_csv(data: bytes, name: str = "the file") -> UploadedPoints:
    """Points from a CSV with the columns x1, x2, label; ValueError saying what is wrong otherwise."""
    if len(data) > MAX_CSV_BYTES:
        raise ValueError(f"{name} is {len(data) / 1e6:.1f} MB; the limit is {MAX_CSV_BYTES / 1e6:.0f} MB.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(
            f"{name} is not a text file: upload a UTF-8 CSV with columns x1, x2, label."
        ) from None
    try:
        frame = pd.read_csv(io.StringIO(text), skipinitialspace=True, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise ValueError(f"{name} is not a readable CSV: {str(err).splitlines()[0]}") from None
    columns = [str(c).strip().lower() for c in frame.columns]
    if columns != ["x1", "x2", "label"]:
        found = ", ".join(str(c) for c in frame.columns) or "nothing"
        raise ValueError(f"Expected the header x1, x2, label (in that order); found {found}.")
    if len(frame) < 10:
        raise ValueError(f"{name} has {len(frame)} rows; a playground needs at least 10 points.")
    if len(frame) > MAX_CSV_ROWS:
        raise ValueError(f"{name} has {len(frame):,} rows; at most {MAX_CSV_ROWS:,} are allowed.")
    numbers = {}
    for column in frame.columns:
        cells = frame[column].str.strip()
        values = pd.to_numeric(cells, errors="coerce")
        bad = values.isna() | ~np.isfinite(values.fillna(0))
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            cell = cells.iloc[row]
            what = "is empty" if cell == "" else f"has {cell!r}, which is not a finite number"
            raise ValueError(f"Row {row + 2} (counting the header), column {column.strip()}, {what}.")
        numbers[column.strip().lower()] = values.to_numpy(dtype=np.float64)
    labels = numbers["label"]
    if not np.all(labels == np.round(labels)):
        row = int(np.flatnonzero(labels != np.round(labels))[0])
        raise ValueError(f"Labels must be whole numbers; row {row + 2} has {labels[row]:g}.")
    values = np.unique(labels)
    if len(values) < 2:
        raise ValueError(f"Every point has label {values[0]:g}: a classifier needs at least two classes.")
    if len(values) > MAX_CSV_CLASSES:
        raise ValueError(f"{len(values)} different labels; at most {MAX_CSV_CLASSES} classes are allowed.")
    y = np.searchsorted(values, labels).astype(np.int64)
    X = np.column_stack([numbers["x1"], numbers["x2"]])
    centre = (X.max(axis=0) + X.min(axis=0)) / 2
    scale = PLANE / max(float(np.abs(X - centre).max()), 1e-12)
    X = ((X - centre) * scale).astype(np.float32)
    note = f"{len(y):,} points, {len(values)} classes, centred and scaled to fit [-{PLANE}, {PLANE}]²"
    if not np.array_equal(values, np.arange(len(values))):
        note += f"; labels {', '.join(f'{v:g}' for v in values)} became 0 to {len(values) - 1}"
    return UploadedPoints(X, y, len(values), note + ".")


def uploaded_points(upload: UploadedPoints, test_fraction: float, seed: int, name: str) -> Points:
    (X_train, y_train), (X_test, y_test) = split(upload.X, upload.y, test_fraction, seed=seed)
    return Points(X_train, y_train, X_test, y_test, upload.classes, name)


def points_csv(points: Points) -> str:
    """The data set as a CSV that read_points_csv takes back: x1, x2, label (train, then test)."""
    X = np.concatenate([points.X_train, points.X_test])
    y = np.concatenate([points.y_train, points.y_test])
    return pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "label": y}).to_csv(index=False, float_format="%.6g")


# --- one training run -------------------------------------------------------------------------


@dataclass
class PlaneGrid:
    """A res × res lattice over the plane, as model input."""

    extent: tuple[float, float, float, float]
    res: int
    points: torch.Tensor = field(init=False, repr=False)  # (res * res, 2), row-major from the bottom

    def __post_init__(self) -> None:
        x0, x1, y0, y1 = self.extent
        xs = torch.linspace(x0, x1, self.res)
        ys = torch.linspace(y0, y1, self.res)
        gy, gx = torch.meshgrid(ys, xs, indexing="ij")
        self.points = torch.stack([gx.flatten(), gy.flatten()], dim=1)


class Playground:
    """One user's network, its trainer, and (to compare engines) a twin trained the other way."""

    def __init__(self, settings: Settings, points: Points, grid_res: int = 100, neuron_res: int = 28) -> None:
        self.settings = settings
        self.points = points
        self.model = MLP(
            2,
            settings.hidden,
            points.classes,
            settings.activation,
            settings.init,
            settings.dropout,
            settings.seed,
        )
        self.initial = {k: v.clone() for k, v in self.model.state_dict().items()}
        self.grid = PlaneGrid(points.extent, grid_res)
        self.neuron_grid = PlaneGrid(points.extent, neuron_res)
        self.twin: Trainer | None = None
        self.trainer = self._new_trainer(self.model, settings)

    def _new_trainer(self, model: MLP, settings: Settings) -> Trainer:
        p = self.points
        return Trainer(
            model, (p.X_train, p.y_train), (p.X_test, p.y_test), settings.train_config(len(p.y_train))
        )

    # --- controls --------------------------------------------------------------------------

    def apply(self, settings: Settings) -> None:
        """New training settings, same network: training goes on from the current weights."""
        self.settings = settings
        cfg = settings.train_config(len(self.points.y_train))
        self.trainer.reconfigure(cfg)
        if self.twin is not None:
            self.twin.reconfigure(replace(cfg, engine=self.other_engine))

    @property
    def other_engine(self) -> str:
        return "manual" if self.settings.engine == "autograd" else "autograd"

    def compare(self, on: bool) -> None:
        """Train a twin with the other engine in lockstep, from the same initial weights.

        Turning it on restarts both from the initial weights, so their curves can be compared.
        """
        if on and self.twin is None:
            if self.settings.dropout > 0:
                raise ValueError("The manual engine has no dropout: set dropout to 0 to compare engines.")
            self.reset()
            twin_model = MLP.from_config(self.model.config)
            twin_model.load_state_dict(self.initial)
            self.twin = self._new_trainer(twin_model, replace(self.settings, engine=self.other_engine))
        elif not on:
            self.twin = None

    def run(self, steps: int) -> None:
        """Up to `steps` optimizer steps (the twin takes the same ones)."""
        with torch_threads(SMALL_NET_THREADS):
            self.trainer.run_steps(steps)
            if self.twin is not None:
                self.twin.run_steps(steps)

    def run_epoch(self) -> None:
        self.run(self.trainer.steps_left_in_epoch)

    def reset(self) -> None:
        """Back to the same initial weights and batch order, with an empty history."""
        self.model.load_state_dict(self.initial)
        self.trainer = self._new_trainer(self.model, self.settings)
        if self.twin is not None:
            self.twin.model.load_state_dict(self.initial)
            self.twin = self._new_trainer(self.twin.model, replace(self.settings, engine=self.other_engine))

    # --- what the page shows -----------------------------------------------------------------

    @property
    def status(self) -> str:
        return self.trainer.status

    def grid_probs(self) -> np.ndarray:
        """Class probabilities over the plane, (res, res, K), row 0 at the bottom."""
        with torch_threads(SMALL_NET_THREADS):
            probs = predict_proba(self.model, self.grid.points, set_eval=self.settings.dropout > 0)
        return probs.numpy().reshape(self.grid.res, self.grid.res, -1)

    @torch.inference_mode()
    def neuron_maps(self, layers: int = 2, max_units: int = 32) -> list[np.ndarray]:
        """What each hidden unit of the first `layers` layers outputs over the plane: (units, r, r) each."""
        r = self.neuron_grid.res
        with eval_mode(self.model, self.settings.dropout > 0), torch_threads(SMALL_NET_THREADS):
            outputs = self.model.activations(self.neuron_grid.points)[:-1][:layers]
        return [a[:, :max_units].T.reshape(-1, r, r).numpy() for a in outputs]

    def dead_units(self) -> list[tuple[int, int, int]]:
        """(layer, dead, units) per hidden layer; a unit is dead if it outputs 0 for every train point.

        Dead ReLUs pass no gradient back, so a layer of them stalls training with a finite loss
        the divergence check can't see. Too large a learning rate is the usual cause.
        """
        if self.settings.activation != "relu":
            return []
        with torch.inference_mode(), torch_threads(SMALL_NET_THREADS):
            outputs = self.model.activations(torch.from_numpy(self.points.X_train))[:-1]
        return [(i, int((~a.any(dim=0)).sum()), a.shape[1]) for i, a in enumerate(outputs, start=1)]

    def mostly_dead(self, share: float = 0.9) -> list[tuple[int, int, int]]:
        """The hidden layers with at least `share` of their units dead."""
        return [(layer, dead, units) for layer, dead, units in self.dead_units() if dead >= share * units]

    @torch.inference_mode()
    def confusion(self, which: str = "test") -> np.ndarray:
        """Counts (K, K): rows are the true class, columns the predicted one."""
        X, y = (
            (self.points.X_test, self.points.y_test)
            if which == "test"
            else (self.points.X_train, self.points.y_train)
        )
        predicted = predict_proba(self.model, X, set_eval=self.settings.dropout > 0).argmax(1).numpy()
        return confusion_matrix(y, predicted, self.points.classes)

    def curves(self, max_points: int = 400) -> dict[str, np.ndarray]:
        """Per-epoch train/test loss and accuracy, thinned to at most max_points for plotting."""
        return history_arrays(self.trainer, max_points)

    def twin_curves(self, max_points: int = 400) -> dict[str, np.ndarray] | None:
        return history_arrays(self.twin, max_points) if self.twin is not None else None

    def structure_differs(self, settings: Settings) -> bool:
        """Whether `settings` needs another network (not just other training settings)."""
        return any(getattr(self.settings, f) != getattr(settings, f) for f in MODEL_FIELDS)

    def engine_gap(self) -> dict[str, float] | None:
        """How far apart the two engines are: largest loss and weight differences so far."""
        if self.twin is None:
            return None
        a, b = self.trainer.history.epochs, self.twin.history.epochs
        n = min(len(a), len(b))
        loss = max((abs(a[i].train_loss - b[i].train_loss) for i in range(n)), default=0.0)
        weights = max(
            (p - q).abs().max().item()
            for p, q in zip(self.trainer.model.parameters(), self.twin.model.parameters(), strict=True)
        )
        return {"loss": loss, "weights": weights, "epochs": n}


def history_arrays(trainer: Trainer, max_points: int = 400) -> dict[str, np.ndarray]:
    """A trainer's epochs as arrays, evenly thinned (the last epoch always kept)."""
    epochs = trainer.history.epochs
    if not epochs:
        return {k: np.empty(0) for k in ("epoch", "train_loss", "test_loss", "train_acc", "test_acc")}
    idx = np.unique(np.linspace(0, len(epochs) - 1, min(len(epochs), max_points)).round().astype(int))
    pick = [epochs[i] for i in idx]

    def col(getter) -> np.ndarray:
        return np.array([np.nan if getter(r) is None else getter(r) for r in pick], dtype=np.float64)

    return {
        "epoch": np.array([r.epoch for r in pick], dtype=np.float64),
        "train_loss": col(lambda r: r.train_loss),
        "test_loss": col(lambda r: r.val_loss),
        "train_acc": col(lambda r: r.train_acc),
        "test_acc": col(lambda r: r.val_acc),
    }
