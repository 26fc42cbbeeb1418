"""One visitor's playground run: the network, its trainer, and an optional twin on the other
engine, trained a frame's steps at a time. What it shows is its view (mlp.runs.playground_view);
what it is saved as, its exports (mlp.runs.exports)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from mlp.data import Points, UploadedPoints, uploaded_points
from mlp.data.edits import Edits, apply_edits
from mlp.data.features import input_width, network_inputs, with_features
from mlp.device import torch_threads
from mlp.lessons.playground import SMALL_NET_THREADS, Settings, make_points
from mlp.model import MLP
from mlp.runs.playground_view import PlaygroundView, locked
from mlp.train import TrainConfig, Trainer, engine_problem
from mlp.train.fastpath.choice import switch_path
from mlp.train.schedule import horizon_matters
from mlp.train.trainer import new_data

STOP_SECONDS = 0.02  # a run that may be stopped asks at least this often (in CPU time)


class Playground:
    """One visitor's training: their network, its trainer, and (to compare engines) a twin trained
    the other way — started, stepped, reconfigured, reset. Its `view` draws it.

    A session can run two scripts at once (a click while a frame trains), so every method that
    trains or reads the network holds one lock: training is never interleaved, and what a frame
    draws is never computed from weights mid-step or with dropout switched off under training.
    """

    def __init__(
        self, settings: Settings, points: Points, data_key: object = None, grid_res: int | None = None
    ) -> None:
        self.lock = threading.RLock()
        self.settings = settings
        self.points = self.base = points  # base: the set before clicks edited it (edit)
        self.edits = Edits()
        self.inputs = network_inputs(points, settings.features)  # what the network takes: x1, x2, features
        self.data_key = data_key if data_key is not None else settings.data_key  # what made the points
        s, d_in = settings, input_width(settings.features)
        self.model = MLP(d_in, s.hidden, points.classes, s.activation, s.init, s.dropout, s.seed)
        self.initial = {k: v.clone() for k, v in self.model.state_dict().items()}
        self.twin: Trainer | None = None
        self.comparing = False  # training a twin with the other engine (compare)
        self.hidden: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # see watch_hidden
        self.altered: str | None = None  # what its link can't reproduce since a reset (HAND_SET...)
        self.trainer = self._new_trainer(self.model, settings)
        self.step_seconds = 0.0  # CPU time a step has taken (twin included), as last measured
        self.view = PlaygroundView(self, grid_res)

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

    @property
    def status(self) -> str:
        return self.trainer.status

    def watch_hidden(self, X: np.ndarray, y: np.ndarray) -> None:
        """Score a challenge's hidden points (x1, x2) at every epoch that could be the challenge's
        best, as the test points are (mlp.train.trainer.Watch), from now on and after a reset: their
        scores go on `trainer.watch.scored`. `hidden`: (the network's inputs, y, X as given)."""
        with self.lock:
            seen = self.hidden
            if seen is not None and np.array_equal(seen[2], X) and np.array_equal(seen[1], y):
                return
            self.hidden = (with_features(np.asarray(X, dtype=np.float32), self.settings.features), y, X)
            self.trainer.watch.set(*self.hidden[:2], self.trainer.device, keep=False)  # scored anew

    @locked
    def edit(self, edits: Edits) -> None:
        """Train on the set as clicks edited it (points added, points erased), from where the run
        is: the weights, the optimizer's state and the history go on (mlp.train.trainer.new_data)."""
        points = apply_edits(self.base, edits)  # checks the edits before anything changes
        self.points, self.edits = points, edits
        self.inputs = p = network_inputs(points, self.settings.features)
        cfg = self.train_config(self.settings)
        new_data(self.trainer, (p.X_train, p.y_train), (p.X_test, p.y_test), cfg)
        if self.twin is not None:
            twin_cfg = replace(cfg, engine=self.other_engine)
            new_data(self.twin, (p.X_train, p.y_train), (p.X_test, p.y_test), twin_cfg)


# What a run's link can't reproduce of it since its last reset (Playground.altered): a class board
# takes no result of such a run (pages/ui/rooms.post_best)
SETTINGS_CHANGED = "training settings changed after it started"
HAND_SET = "a weight set by hand"


def replays_past(trainer: Trainer, new: TrainConfig) -> bool:
    """Whether the trainer's training so far would have gone the same under `new`: it hasn't
    started, or nothing changed but the number of epochs and the schedule doesn't depend on it."""
    old = trainer.cfg
    return not trainer.step_count or (replace(new, epochs=old.epochs) == old and not horizon_matters(old))


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
        run.edit(edits)
    return run
