"""One visitor's playground run: the network, its trainer, an optional twin on the other engine,
and what a frame draws (the plane's probabilities, or a regression's values; each unit's map,
dead units, confusion)."""

from __future__ import annotations

import functools
import itertools
import math
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, TypeVar

import numpy as np
import torch

from mlp.data import Points, UploadedPoints, points_csv, uploaded_points
from mlp.data.edits import Edits, apply_edits
from mlp.data.features import input_width, network_inputs, with_features
from mlp.device import flush_denormals, torch_threads
from mlp.figures.plane import Shade
from mlp.io import architecture_json, model_to_bytes
from mlp.lessons.playground import SMALL_NET_THREADS, Settings, make_points
from mlp.links.format import loss_text
from mlp.metrics import confusion_matrix
from mlp.model import MLP
from mlp.runs import diagnosis
from mlp.train import (
    TrainConfig,
    Trainer,
    engine_problem,
    eval_mode,
    evaluate,
    predict_outputs,
    predict_proba,
)
from mlp.train.fastpath.choice import numpy_inference, switch_path
from mlp.train.fastpath.columns import hidden_maxima, numpy_outputs, top_class
from mlp.train.penalty import penalty_of
from mlp.train.schedule import horizon_matters
from mlp.train.trainer import new_data

T = TypeVar("T")

STOP_SECONDS = 0.02  # a run that may be stopped asks at least this often (in CPU time)
GRID_RES = 100  # the plane's lattice for small networks: 100 × 100 points
GRID_MIN_RES = 40  # ...and the coarsest any network gets (the canvas smooths it)
GRID_MACS = 100 * 100 * 20_000  # multiply-adds one plane may cost: a 100² grid of a ~2-100-100-3 net


def grid_resolution(layer_sizes: tuple[int, ...]) -> int:
    """The plane's lattice for a network of these layer sizes: 100 × 100 while that costs at most
    GRID_MACS, coarser for bigger networks (down to 40 × 40), so that drawing a frame of the
    sidebar's largest network (8 × 128) costs ~10 ms, not ~50.
    """
    macs = sum(a * b for a, b in itertools.pairwise(layer_sizes))
    return max(GRID_MIN_RES, min(GRID_RES, math.isqrt(GRID_MACS // max(1, macs))))


@dataclass
class PlaneGrid:
    """A res × res lattice over the plane, and the network's inputs there (with `features`)."""

    extent: tuple[float, float, float, float]
    res: int
    features: tuple[str, ...] = ()  # derived inputs (mlp.data.features), computed as for the points
    points: torch.Tensor = field(init=False, repr=False)  # (res * res, 2), row-major from the bottom
    inputs: torch.Tensor = field(init=False, repr=False)  # (res * res, 2 + k): x1, x2, the features
    columns: np.ndarray = field(init=False, repr=False)  # the inputs as float32 columns (2 + k, res * res)

    def __post_init__(self) -> None:
        x0, x1, y0, y1 = self.extent
        xs = torch.linspace(x0, x1, self.res)
        ys = torch.linspace(y0, y1, self.res)
        gy, gx = torch.meshgrid(ys, xs, indexing="ij")
        self.points = torch.stack([gx.flatten(), gy.flatten()], dim=1)
        self.inputs = with_features(self.points, self.features)
        self.columns = np.ascontiguousarray(self.inputs.numpy().T, dtype=np.float32)


@dataclass(frozen=True)
class LiveFrame:
    """What a frame of a playing run shows, read in one go under the run's lock."""

    step: int
    shade: Shade  # what the plane shades: each cell's top class and its probability, or its value
    metrics: list[tuple[str, str]]  # the numbers above the plane
    banner: str | None  # the kind of what the page must say ("error", "warning", "info"), if anything
    finished: bool  # the run ended (its length reached, or diverged): playing must stop


def locked(method: Callable[..., T]) -> Callable[..., T]:
    """Run the method holding the run's lock: one frame's training or drawing at a time."""

    @functools.wraps(method)
    def wrapper(self: Playground, *args: Any, **kwargs: Any) -> T:
        with self.lock:
            return method(self, *args, **kwargs)

    return wrapper


class Playground:
    """One user's network, its trainer, and (to compare engines) a twin trained the other way.

    A session can run two scripts at once (a click while a frame trains), so every method that
    trains or reads the network holds one lock: training is never interleaved, and what a frame
    draws is never computed from weights mid-step or with dropout switched off under training.
    """

    def __init__(
        self, settings: Settings, points: Points, data_key: object = None, grid_res: int | None = None
    ) -> None:
        self.lock = threading.RLock()
        self.settings = settings
        self.points = self.base = points  # base: the set before clicks edited it (edit_run)
        self.edits = Edits()
        self.inputs = network_inputs(points, settings.features)  # what the network takes: x1, x2, features
        self.data_key = data_key if data_key is not None else settings.data_key  # what made the points
        s, d_in = settings, input_width(settings.features)
        self.model = MLP(d_in, s.hidden, points.classes, s.activation, s.init, s.dropout, s.seed)
        self.initial = {k: v.clone() for k, v in self.model.state_dict().items()}
        res = grid_res or grid_resolution((d_in, *s.hidden, points.classes))
        self.grid = PlaneGrid(points.extent, res, s.features)
        self.neuron_grid = PlaneGrid(points.extent, 28, s.features)
        self.twin: Trainer | None = None
        self.comparing = False  # training a twin with the other engine (compare)
        self.hidden: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # see watch_hidden
        self.altered: str | None = None  # what its link can't reproduce since a reset (HAND_SET...)
        self.trainer = self._new_trainer(self.model, settings)
        self.step_seconds = 0.0  # CPU time a step has taken (twin included), as last measured
        self._train_columns: tuple[np.ndarray, np.ndarray] | None = None  # X_train, as float32 columns

    def _new_trainer(self, model: MLP, settings: Settings) -> Trainer:
        p = self.inputs
        trainer = Trainer(model, (p.X_train, p.y_train), (p.X_test, p.y_test), self.train_config(settings))
        if self.hidden is not None and model is self.model:  # the run's own trainer, not a twin's
            trainer.watch.set(*self.hidden[:2], trainer.device)
        return trainer

    def train_config(self, settings: Settings) -> TrainConfig:
        """How this run trains with `settings`. While the engines are compared, autograd must be
        autograd itself: no NumPy path (mlp.train.fastpath.choice) on either side."""
        cfg = settings.train_config(len(self.inputs.y_train), self.points.task)
        return replace(cfg, fast_path=not self.comparing)

    # --- controls --------------------------------------------------------------------------

    @locked
    def apply(self, settings: Settings) -> None:
        """New training settings, same network: training goes on from the current weights. A change
        that training doesn't see (the speed, the plane's look) keeps the optimizer's state too."""
        self.settings = settings
        cfg = self.train_config(settings)
        if cfg == self.trainer.cfg:
            return
        self.altered = self.altered or (None if replays_past(self.trainer, cfg) else SETTINGS_CHANGED)
        self.trainer.reconfigure(cfg)
        if self.twin is not None:
            self.twin.reconfigure(replace(cfg, engine=self.other_engine))

    @property
    def other_engine(self) -> str:
        return "manual" if self.settings.engine == "autograd" else "autograd"

    @locked
    def compare(self, on: bool) -> None:
        """Train a twin with the other engine in lockstep, from the same initial weights.

        Turning it on restarts both from the initial weights, so their curves can be compared.
        """
        if on and self.twin is None:
            if problem := engine_problem("manual", self.settings.dropout):
                raise ValueError(problem)
            self.comparing = True
            self.reset()
            twin_model = MLP.from_config(self.model.config)
            twin_model.load_state_dict(self.initial)
            self.twin = self._new_trainer(twin_model, replace(self.settings, engine=self.other_engine))
        elif not on and self.twin is not None:
            self.twin, self.comparing = None, False
            switch_path(self.trainer, fast_path=True)  # the same run goes on, on its fastest path

    @locked
    def run(self, steps: int, budget: float | None = None, stop: Callable[[], bool] | None = None) -> int:
        """Up to `steps` optimizer steps, the twin's the same; how many were taken. A frame passes a CPU
        `budget` (a big net takes the steps that fit) and `stop` (a Pause ends it); see `lockstep`."""
        trainers = [self.trainer] if self.twin is None else [self.trainer, self.twin]
        with torch_threads(SMALL_NET_THREADS):
            taken, self.step_seconds = lockstep(trainers, steps, self.step_seconds, budget, stop)
        return taken

    @locked
    def run_epoch(self) -> None:
        self.run(self.trainer.steps_left_in_epoch)

    @locked
    def reset(self) -> None:
        """Back to the same initial weights and batch order, with an empty history (and its link's)."""
        self.model.load_state_dict(self.initial)
        self.altered = None
        self.trainer = self._new_trainer(self.model, self.settings)
        if self.twin is not None:
            self.twin.model.load_state_dict(self.initial)
            self.twin = self._new_trainer(self.twin.model, replace(self.settings, engine=self.other_engine))

    # --- what the page shows -----------------------------------------------------------------

    @property
    def status(self) -> str:
        return self.trainer.status

    @locked
    def grid_probs(self) -> np.ndarray:
        """Class probabilities over the plane, (res, res, K), row 0 at the bottom; a regression's
        predicted values, (res, res, 1)."""
        with torch_threads(SMALL_NET_THREADS):
            probs = plane_outputs(self.model, self.grid, self.points.task, self.settings.dropout > 0)
        return probs.reshape(self.grid.res, self.grid.res, -1)

    @locked
    def grid_shade(self) -> Shade:
        """What a frame shades over the plane: each cell's top class and its probability, or a
        regression's value (cheaper than grid_probs: no (res, res, K) probabilities made)."""
        with torch_threads(SMALL_NET_THREADS), flush_denormals():
            return plane_shade(self.model, self.grid, self.points.task, self.settings.dropout > 0)

    @locked
    @torch.inference_mode()
    def neuron_maps(self, layers: int = 2, max_units: int = 32) -> list[np.ndarray]:
        """What each hidden unit of the first `layers` layers outputs over the plane: (units, r, r) each."""
        r = self.neuron_grid.res
        with eval_mode(self.model, self.settings.dropout > 0), torch_threads(SMALL_NET_THREADS):
            outputs = self.model.activations(self.neuron_grid.inputs)[:-1][:layers]
        return [a[:, :max_units].T.reshape(-1, r, r).numpy() for a in outputs]

    @locked
    def dead_units(self) -> list[tuple[int, int, int]]:
        """(layer, dead, units) per hidden layer; a unit is dead if it outputs 0 for every train point.

        Dead ReLUs pass no gradient back, so a layer of them stalls training with a finite loss
        the divergence check can't see. Too large a learning rate is the usual cause.
        """
        if self.settings.activation != "relu":
            return []
        X = self.inputs.X_train
        if self._train_columns is None or self._train_columns[0] is not X:
            self._train_columns = (X, np.ascontiguousarray(X.T, dtype=np.float32))
        with torch_threads(SMALL_NET_THREADS), flush_denormals():
            maxima = unit_maxima(self.model, X, self._train_columns[1])
        return [(i, int((m <= 0).sum()), len(m)) for i, m in enumerate(maxima, 1)]  # ReLU ≥ 0

    def mostly_dead(self, share: float = 0.9) -> list[tuple[int, int, int]]:
        """The hidden layers with at least `share` of their units dead."""
        return [(layer, dead, units) for layer, dead, units in self.dead_units() if dead >= share * units]

    @locked
    @torch.inference_mode()
    def confusion(self, which: str = "test") -> np.ndarray | None:
        """Counts (K, K): rows are the true class, columns the predicted one. None for a regression."""
        if (p := self.inputs).task == "regress":
            return None
        X, y = (p.X_test, p.y_test) if which == "test" else (p.X_train, p.y_train)
        predicted = predict_proba(self.model, X, set_eval=self.settings.dropout > 0).argmax(1).numpy()
        return confusion_matrix(y, predicted, p.classes)

    @locked
    def curves(self, max_points: int = 400) -> dict[str, np.ndarray]:
        """Per-epoch train/test loss and accuracy, thinned to at most max_points for plotting."""
        return self.trainer.history.epoch_arrays(max_points)

    @locked
    def twin_curves(self, max_points: int = 400) -> dict[str, np.ndarray] | None:
        return self.twin.history.epoch_arrays(max_points) if self.twin is not None else None

    @locked
    def live_metrics(self) -> list[tuple[str, str]]:
        """(label, value) of the numbers above the plane: of the model the plane shows. (After a
        divergence that is the last good one, whose step and numbers are not the last epoch's.)"""
        return metrics_shown(*_shown_numbers(self), self.points.task)

    @locked
    def live_frame(self) -> LiveFrame:
        """The plane's probabilities, the numbers and the banner's kind, all of one step."""
        t, banner = self.trainer, self.banner()
        kind = banner[0] if banner else None
        return LiveFrame(t.step_count, self.grid_shade(), self.live_metrics(), kind, t.finished)

    @locked
    def banner(self) -> tuple[str, str] | None:
        """What the page must say about the run, if anything: ("error" | "warning" | "info",
        Markdown), naming the cause the run shows (mlp.runs.diagnosis)."""
        return run_banner(self)

    def downloads(self) -> list[tuple[str, Callable[[], bytes | str], str]]:
        """(button label, what makes the file, file name) for everything a run can be saved as."""
        extra = {"settings": asdict(self.settings)}
        return [
            (
                "Weights (.safetensors)",
                lambda: model_to_bytes(self.model, **extra),
                "playground-model.safetensors",
            ),
            ("Architecture (.json)", lambda: architecture_json(self.model, **extra), "playground-model.json"),
            ("History (.csv)", lambda: self.trainer.history.to_frame().to_csv(index=False), "history.csv"),
            ("Data (.csv)", lambda: points_csv(self.points), "points.csv"),
        ]

    @locked
    def engine_gap(self) -> dict[str, float] | None:
        """How far apart the two engines are: largest loss and weight differences so far."""
        return None if self.twin is None else trainers_gap(self.trainer, self.twin)


# What a run's link can't reproduce of it since its last reset (Playground.altered): a class board
# takes no result of such a run (pages/ui/rooms.post_best)
SETTINGS_CHANGED = "training settings changed after it started"
HAND_SET = "a weight set by hand"


def replays_past(trainer: Trainer, new: TrainConfig) -> bool:
    """Whether the trainer's training so far would have gone the same under `new`: it hasn't
    started, or nothing changed but the number of epochs and the schedule doesn't depend on it."""
    old = trainer.cfg
    return not trainer.step_count or (replace(new, epochs=old.epochs) == old and not horizon_matters(old))


def watch_hidden(run: Playground, X: np.ndarray, y: np.ndarray) -> None:
    """Score a challenge's hidden points (x1, x2) at every epoch that could be the challenge's
    best, as the test points are (mlp.train.trainer.Watch), from now on and after a reset: their
    scores go on `run.trainer.watch.scored`. `run.hidden`: (the network's inputs, y, X as given)."""
    with run.lock:
        if run.hidden is not None and np.array_equal(run.hidden[2], X) and np.array_equal(run.hidden[1], y):
            return
        run.hidden = (with_features(np.asarray(X, dtype=np.float32), run.settings.features), y, X)
        run.trainer.watch.set(*run.hidden[:2], run.trainer.device, keep=False)  # other points: scored anew


@torch.inference_mode()
def score_points(run: Playground, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Cross-entropy and accuracy of the run's network as it is now on points (x1, x2) that are
    not its data: a challenge's hidden part (mlp.curriculum.challenges.hidden_points)."""
    with run.lock:
        X_in = with_features(np.asarray(X, dtype=np.float32), run.settings.features)
        return evaluate(run.model, X_in, y, set_eval=run.settings.dropout > 0)


def run_banner(run: Playground) -> tuple[str, str] | None:
    """Playground.banner's answer (the caller holds the run's lock)."""
    trainer, classes = run.trainer, run.points.classes
    last = trainer.history.epochs[-1] if trainer.history.epochs else None
    if trainer.status == "diverged":
        return "error", diagnosis.diverged_text(trainer.message, trainer.guard.checked_step)
    layers, dead = list(run.model.layers), run.mostly_dead()
    if dead or diagnosis.stalled(last and last.train_loss, trainer.epoch, classes):
        gain = diagnosis.signal_gain(layers)  # tiny: units look dead (or the loss sits at chance) for that
        if gain < diagnosis.FADED:
            return "warning", diagnosis.faded_text(gain, len(layers) - 1, classes)
    if dead:
        return "warning", diagnosis.dead_text(dead, run.settings.activation)
    if trainer.status == "done":
        return "info", diagnosis.done_text(trainer.epoch)
    return None


def trainers_gap(one: Trainer, other: Trainer) -> dict[str, float]:
    """Largest train-loss and weight differences between two trainers of one network, and the
    epochs compared."""
    a, b = one.history.epochs, other.history.epochs
    n = min(len(a), len(b))
    loss = max((abs(a[i].train_loss - b[i].train_loss) for i in range(n)), default=0.0)
    weights = max(
        (p - q).abs().max().item()
        for p, q in zip(one.model.parameters(), other.model.parameters(), strict=True)
    )
    return {"loss": loss, "weights": weights, "epochs": n}


# The step at which a weight of each trainer's model was last set by hand (mlp.runs.units).
_edited: weakref.WeakKeyDictionary[Trainer, int] = weakref.WeakKeyDictionary()


def mark_edited(run: Playground, edited: bool = True) -> None:
    """A weight was set by hand: until the next epoch's record, the numbers are measured anew.
    `edited=False`: every such weight is back as it was at that record, whose numbers hold again."""
    if edited:
        _edited[run.trainer] = run.trainer.step_count
    else:
        _edited.pop(run.trainer, None)


def _shown_numbers(run: Playground) -> tuple[int, int, float | None, float | None, float | None]:
    """(epoch, step, train loss, test loss, test accuracy) of the model `run` holds: the last
    epoch's record, or, after a divergence or a weight set by hand since that record, the
    weights' own, measured now."""
    trainer, p = run.trainer, run.inputs
    last = trainer.history.epochs[-1] if trainer.history.epochs else None
    edited = trainer in _edited and (last is None or last.step <= _edited[trainer])
    if trainer.status == "diverged" or edited:
        diverged, loss = trainer.status == "diverged", trainer.cfg.loss
        step = trainer.guard.checked_step if diverged else trainer.step_count  # the last good weights'
        # The train loss as training records it: with the L1 and L2 penalties (the test loss without).
        penalty = penalty_of(run.model, trainer.cfg.l1, trainer.cfg.l2)
        train_loss = evaluate(run.model, p.X_train, p.y_train, loss=loss)[0] + penalty
        test = evaluate(run.model, p.X_test, p.y_test, loss=loss) if len(p.y_test) else (None, None)
        epoch = step // trainer.steps_per_epoch if diverged else trainer.epoch
        return epoch, step, train_loss, *test
    if last is None:
        return trainer.epoch, trainer.step_count, None, None, None
    return trainer.epoch, trainer.step_count, last.train_loss, last.val_loss, last.val_acc


def metrics_shown(
    epoch: int, step: int, train: float | None, test: float | None, score: float | None, task: str
) -> list[tuple[str, str]]:
    """(label, value) of the numbers above the plane: the test accuracy, or a regression's MSE and R²."""
    if task == "regress":
        r2 = "–" if score is None or math.isnan(score) else f"{score:.3f}"
        losses = [
            ("Train MSE", loss_text(train)),
            ("Test MSE", loss_text(test)),
            ("Test R²", r2),
        ]
    else:
        accuracy = "–" if score is None else f"{score:.1%}"
        losses = [
            ("Train loss", loss_text(train)),
            ("Test loss", loss_text(test)),
            ("Test accuracy", accuracy),
        ]
    return [("Epoch", f"{epoch:,}"), ("Step", f"{step:,}"), *losses]


def plane_outputs(model: MLP, grid: PlaneGrid, task: str, set_eval: bool) -> np.ndarray:
    """What the plane shades: class probabilities (N, K), or for a regression the output (N, 1).
    A CPU float32 MLP's in one NumPy pass: ~4x faster than torch's on 10,000 points, every frame."""
    if numpy_inference(model):
        return numpy_outputs(model, grid.columns, softmax=task != "regress")
    predict = predict_outputs if task == "regress" else predict_proba
    return predict(model, grid.inputs, set_eval=set_eval).cpu().numpy()


def plane_shade(model: MLP, grid: PlaneGrid, task: str, set_eval: bool) -> Shade:
    """What the plane shades: each cell's top class and its probability, or a regression's value."""
    z = plane_columns(model, grid, set_eval)  # (K, res²)
    if task == "regress":
        return Shade(grid.res, values=z[0])
    winner, top = top_class(z)
    return Shade(grid.res, winner, top)


def unit_maxima(model: MLP, X: np.ndarray, columns: np.ndarray) -> list[np.ndarray]:
    """Each hidden unit's largest output over the points X (N, d_in), layer by layer; `columns`:
    X as float32 columns (d_in, N), for the NumPy pass a CPU float32 MLP takes (every frame)."""
    if numpy_inference(model):
        return hidden_maxima(model, columns)
    with torch.inference_mode():
        return [a.amax(0).cpu().numpy() for a in model.activations(torch.from_numpy(X))[:-1]]


def plane_columns(model: MLP, grid: PlaneGrid, set_eval: bool) -> np.ndarray:
    """The network's outputs over the grid as columns (d_out, N): logits, or a regression's values;
    in NumPy for a CPU float32 MLP, as plane_outputs."""
    if numpy_inference(model):
        return numpy_outputs(model, grid.columns, columns=True)
    return predict_outputs(model, grid.inputs, set_eval=set_eval).cpu().numpy().T


def lockstep(
    trainers: list[Trainer],
    steps: int,
    step_seconds: float,
    budget: float | None = None,
    stop: Callable[[], bool] | None = None,
) -> tuple[int, float]:
    """Up to `steps` steps of every trainer, the same ones, in as few chunks as the cost of a
    step allows: (steps taken, CPU seconds a step of them all took, measured as they went;
    `step_seconds` is the last measure, 0 if none). Past a `budget` of CPU seconds no chunk
    starts (the first step always runs); `stop()` is asked about every STOP_SECONDS."""
    start, taken, first = time.thread_time(), 0, trainers[0]
    while taken < steps and not first.finished:
        used = time.thread_time() - start
        if taken and ((budget is not None and used >= budget) or (stop is not None and stop())):
            break
        chunk = steps - taken
        if budget is not None:  # the steps that fit in what is left
            fits = int((budget - used) / step_seconds) if step_seconds else 1
            if taken and fits < 1:
                break
            chunk = max(1, min(chunk, fits))
        if stop is not None:
            every = int(STOP_SECONDS / step_seconds) if step_seconds else 1
            chunk = max(1, min(chunk, every))
        before, chunk_start = first.step_count, time.thread_time()
        for trainer in trainers:
            trainer.run_steps(chunk)
        took = first.step_count - before
        if took == 0:
            break
        step_seconds = (time.thread_time() - chunk_start) / took
        taken += took
    return taken, step_seconds


def edit_run(run: Playground, edits: Edits) -> None:
    """Train on the set as clicks edited it (points added, points erased), from where the run
    is: the weights, the optimizer's state and the history go on (mlp.train.trainer.new_data)."""
    with run.lock:
        points = apply_edits(run.base, edits)  # checks the edits before anything changes
        run.points, run.edits = points, edits
        run.inputs = p = network_inputs(points, run.settings.features)
        cfg = run.train_config(run.settings)
        new_data(run.trainer, (p.X_train, p.y_train), (p.X_test, p.y_test), cfg)
        if run.twin is not None:
            twin_cfg = replace(cfg, engine=run.other_engine)
            new_data(run.twin, (p.X_train, p.y_train), (p.X_test, p.y_test), twin_cfg)


def current_run(
    run: Playground | None,
    settings: Settings,
    upload: UploadedPoints | None = None,
    upload_id: str = "",
    edits: Edits | None = None,
) -> Playground:
    """The run these settings (and an uploaded file, and clicks' `edits`) call for: `run` itself,
    reconfigured if only training settings changed; a new run when the points or the network
    must change. Edits belong to one set: a new set (other data settings) starts without them."""
    data_key = (upload_id, settings.test_fraction, settings.data_seed) if upload else settings.data_key
    if run is None or run.data_key != data_key or run.settings.needs_new_network(settings):
        if upload is not None:
            points = uploaded_points(upload, settings.test_fraction, settings.data_seed)
        else:
            points = make_points(settings)
        same_set = run is None or run.data_key == data_key
        run, edits = Playground(settings, points, data_key), edits if same_set else None
    elif settings != run.settings:
        run.apply(settings)
    if edits is not None and edits != run.edits:
        edit_run(run, edits)
    return run
