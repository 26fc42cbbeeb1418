"""One MNIST run: a model and its trainer (a background job's work), the views it publishes,
its evaluation on the test digits, and its line in the comparison table; and one visitor's
session of runs (`MnistSession`): Start queues a run on the executor, Stop ends it, finished
runs are kept to compare."""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

import numpy as np
import torch

from mlp.data import MnistData
from mlp.data.mnist import VAL_FRACTION
from mlp.device import torch_threads
from mlp.io import model_from_bytes
from mlp.lessons.mnist import SUMMARY_FIELDS, MnistSettings, loaded_sentence, page_refuses, recorded_training
from mlp.links.format import count_text, seconds_text
from mlp.metrics import confusion_matrix, per_class, top_k
from mlp.model import MLP, ModelConfig
from mlp.train import Trainer, lr_factor, predict_proba

CURVE_POINTS = 500  # the most points a live curve carries to the page


@dataclass
class Evaluation:
    """How a trained model does on the test digits."""

    accuracy: float
    loss: float
    confusion: np.ndarray  # (10, 10): true class down, predicted across
    per_class: list[dict]  # precision, recall, f1, support per digit
    probs: np.ndarray  # (n_test, 10) float32
    predicted: np.ndarray  # (n_test,)

    def mistakes(self, y_true: np.ndarray, limit: int = 24) -> list[dict]:
        """The misclassified test digits the model was surest about, with their top-3 guesses."""
        wrong = np.flatnonzero(self.predicted != y_true)
        order = wrong[np.argsort(-self.probs[wrong].max(axis=1), kind="stable")][:limit]
        classes, probs = top_k(self.probs[order], 3)
        return [
            {"index": int(i), "true": int(y_true[i]), "top3": list(zip(c.tolist(), p.tolist(), strict=True))}
            for i, c, p in zip(order, classes, probs, strict=True)
        ]


@dataclass(frozen=True)
class RunView:
    """What a page may read about a run while a worker trains it: plain values and copies."""

    name: str
    config: ModelConfig  # the architecture, to rebuild the model from `weights`
    status: str  # ready, running, done, stopped or diverged
    message: str
    step: int
    total_steps: int
    epoch: float  # fractional epochs done
    epochs: int  # the run's length
    metrics: tuple[tuple[str, str], ...]  # (label, value) for the numbers above the curves
    curves: dict[str, dict[str, np.ndarray]]  # "train" (reports) and "val" (epochs) arrays
    elapsed: float
    schedule: tuple[np.ndarray, np.ndarray]  # (fractional epoch, learning rate) over the whole run
    weights: dict[str, torch.Tensor] | None  # a CPU copy, taken at the last epoch's end
    evaluation: Evaluation | None  # once training has ended
    first_layer_start: torch.Tensor | None = None  # its initial weights (None for a loaded model)
    loaded: str | None = None  # for a model loaded from a file: a sentence on what it is

    @property
    def fraction(self) -> float:
        return min(1.0, self.step / self.total_steps) if self.total_steps else 1.0


@dataclass
class RunSummary:
    """One line of the session's comparison table, and its curve."""

    name: str
    settings: dict[str, Any]
    test_accuracy: float | None
    val_accuracy: float | None
    epochs: int
    seconds: float
    curve: tuple[np.ndarray, np.ndarray] = field(repr=False)  # (epoch, val accuracy)
    test_digits: int | None = None  # how many digits its test accuracy is on (a challenge keeps some back)

    def row(self) -> dict[str, Any]:
        return {
            "run": self.name,
            **self.settings,
            "epochs": self.epochs,
            "val acc": self.val_accuracy,
            "test acc": self.test_accuracy,
            "test digits": self.test_digits,
            "seconds": round(self.seconds, 2),
        }


class MnistRun:
    """A model and its trainer on MNIST's training digits (minus a validation share).

    It is a job's work (pages.serving.jobs): a worker calls `advance`, `stop`, `finish` and `view`;
    pages read only the views. `settings` is an MnistSettings (mlp.lessons.mnist).
    """

    def __init__(self, data: MnistData, settings: Any, name: str = "run", threads: int = 0) -> None:
        self.name = name
        self.data = data
        self.settings = settings
        self.model = MLP.from_config(settings.model_config(), seed=settings.seed)
        (x_train, y_train), (x_val, y_val) = data.holdout(VAL_FRACTION)
        # About ten points per epoch on the live curves, whatever the data and batch size.
        steps_per_epoch = -(-len(y_train) // min(settings.batch_size, len(y_train)))
        cfg = settings.train_config()
        self.train_cfg = replace(
            cfg, report_every=max(1, steps_per_epoch // 10), threads=threads or cfg.threads
        )
        self.trainer = Trainer(self.model, (x_train, y_train), (x_val, y_val), self.train_cfg)
        self.min_epoch_seconds = settings.min_epoch_seconds  # a class's pace, or 0
        self._pace_start = 0.0  # when a paced run's first step was due
        self.evaluation: Evaluation | None = None
        self.schedule = self.lr_schedule()
        self._weights: tuple[tuple[int, bool], dict[str, torch.Tensor]] | None = None  # (when, copy)
        self.loaded: str | None = None  # set by MnistSession.load: a model trained elsewhere
        self.recorded: dict[str, Any] | None = None  # and the training settings its file recorded
        # Where the first layer started: what it learned is the change from there.
        self.first_layer_start: torch.Tensor | None = self.model.layers[0].weight.detach().cpu().clone()

    # --- the job's side ----------------------------------------------------------------------

    holds_own_threads = True  # a job leaves the holding to it: a paced run's waits hold nothing

    @property
    def wide(self) -> bool:
        """Whether a job may train it on every core (pages.serving.jobs): not a challenge's run,
        whose re-run at the class's Close trains on a job's share, and must give its numbers."""
        return self.data.hidden is None and self.trainer.step_count == 0

    def use_threads(self, threads: int) -> None:
        """Train on `threads` CPU threads from the first step (before it, or never)."""
        if self.trainer.use_threads(threads):
            self.train_cfg = self.trainer.cfg

    @property
    def finished(self) -> bool:
        return self.trainer.finished

    @property
    def status(self) -> str:
        return self.trainer.status

    @property
    def threads(self) -> int:
        """Its CPU threads, held around its steps (0: the trainer measures them)."""
        return self.trainer.cfg.threads

    def threads_held(self) -> AbstractContextManager[None]:
        """Its steps' CPU threads, held (on a server, in turn with blocks at other counts:
        mlp.device.torch_threads); nothing to hold while the trainer is to measure them."""
        return torch_threads(self.threads) if self.threads else nullcontext()

    def advance(self, seconds: float) -> None:
        """Train for about `seconds`; at a class's pace, no faster than its epochs may go. The
        steps hold the run's threads; a paced run's wait between them holds nothing."""
        if self.min_epoch_seconds <= 0:
            with self.threads_held():
                self.trainer.run_for(seconds)
            return
        now = time.monotonic()
        self._pace_start = self._pace_start or now
        per_step = self.min_epoch_seconds / self.trainer.steps_per_epoch
        # Steps owed by now (the first at once); the 1e-6 keeps a step whose time has just come
        # from being owed a rounding error of a second forever.
        due = int((now - self._pace_start) / per_step + 1e-6) + 1 - self.trainer.step_count
        if due > 0:
            with self.threads_held():
                self.trainer.run_steps(due)
        else:  # ahead of the pace: wait for the next step's time, and no longer than asked
            time.sleep(min(seconds, (self.trainer.step_count * per_step) - (now - self._pace_start)))

    def stop(self, reason: str = "Stopped: the model keeps what it learned so far.") -> None:
        self.trainer.stop(reason)

    def interrupt(self) -> None:
        self.trainer.interrupt()

    def finish(self) -> None:
        """Evaluate on the test digits, once training has ended."""
        with self.threads_held():
            self.evaluate()

    def view(self) -> RunView:
        """A snapshot of counters, curves and (at each epoch's end) the weights, for the page."""
        t = self.trainer
        key = (t.epoch, self.evaluation is not None)  # a new copy at each epoch's end, and the final one
        if key != (0, False) and (self._weights is None or self._weights[0] != key):
            self._weights = (key, {k: v.detach().cpu().clone() for k, v in self.model.state_dict().items()})
        history = t.history
        return RunView(
            name=self.name,
            config=self.model.config,
            status=t.status,
            message=t.message,
            step=t.step_count,
            total_steps=t.total_steps,
            epoch=t.epoch_progress,
            epochs=self.train_cfg.epochs,
            metrics=tuple(self._metrics()),
            curves={"train": history.report_arrays(CURVE_POINTS), "val": history.epoch_arrays(CURVE_POINTS)},
            elapsed=t.elapsed,
            schedule=self.schedule,
            weights=self._weights[1] if self._weights else None,
            evaluation=self.evaluation,
            first_layer_start=self.first_layer_start,
            loaded=self.loaded,
        )

    def _metrics(self) -> list[tuple[str, str]]:
        t = self.trainer
        last, epoch = (t.history.reports[-1] if t.history.reports else None), t.history.last_epoch
        val = [e.val_acc for e in t.history.epochs if e.val_acc is not None]
        return [
            ("Epoch", f"{t.epoch_progress:.2f} / {self.train_cfg.epochs}"),
            ("Samples / s", count_text(last.samples_per_sec) if last else "–"),
            ("Epoch time", seconds_text(epoch.seconds) if epoch else "–"),
            ("Test accuracy", f"{self.evaluation.accuracy:.2%}")
            if self.evaluation
            else ("ETA", seconds_text(last.eta) if last and not self.finished else "–"),
            ("Val. accuracy", f"{val[-1]:.2%}" if val else "–"),
        ]

    # --- after training ----------------------------------------------------------------------

    def lr_schedule(self, points: int = 300) -> tuple[np.ndarray, np.ndarray]:
        """(fractional epoch, learning rate) over the whole run, from the same formula the trainer uses."""
        t = self.trainer
        steps = np.unique(np.linspace(0, max(0, t.total_steps - 1), points).round().astype(int))
        lrs = [self.train_cfg.lr * lr_factor(int(s), self.train_cfg, t.steps_per_epoch) for s in steps]
        return steps / t.steps_per_epoch, np.array(lrs)

    def evaluate(self) -> Evaluation:
        """Accuracy, loss, confusion and per-class scores on the test digits (once)."""
        if self.evaluation is None:
            x, y = self.data.x_test, self.data.y_test
            probs = predict_proba(self.model, x).float().cpu().numpy()  # one pass over the test set
            predicted = probs.argmax(axis=1)
            accuracy = float(np.mean(predicted == y))
            loss = float(-np.log(np.maximum(probs[np.arange(len(y)), y].astype(np.float64), 1e-45)).mean())
            confusion = confusion_matrix(y, predicted, 10)
            self.evaluation = Evaluation(accuracy, loss, confusion, per_class(confusion), probs, predicted)
        return self.evaluation

    def hidden_accuracy(self) -> float | None:
        """Accuracy on the challenge's hidden test digits (MnistData.challenge_part), which no page
        shows; None for data without a hidden part."""
        if self.data.hidden is None:
            return None
        x, y = self.data.hidden
        return float(np.mean(predict_proba(self.model, x).argmax(dim=1).cpu().numpy() == y))

    def mark_loaded(self, sentence: str, recorded: dict[str, Any] | None) -> None:
        """This run's weights came from a file: trained elsewhere, with what the file recorded
        (its first layer has no start here, so the page shows the weights themselves)."""
        self.loaded, self.recorded, self.first_layer_start = sentence, recorded, None

    def training_record(self) -> dict[str, Any]:
        """How this run trained, as a model file records it."""
        record = {k: v for k, v in asdict(self.settings).items() if k in (*SUMMARY_FIELDS, "epochs")}
        return record | {"epochs_trained": round(self.trainer.epoch_progress, 2)}

    def summary(self) -> RunSummary:
        """This run as one row of the comparison table (a loaded model: what its file recorded)."""
        val = self.trainer.history.epoch_arrays()
        known = ~np.isnan(val["val_acc"])
        curve = (val["epoch"][known].astype(np.float32), val["val_acc"][known].astype(np.float32))
        hidden = ", ".join(map(str, self.settings.hidden)) or "none"
        settings = {"hidden": hidden, "activation": self.settings.activation}
        if self.loaded:
            settings |= {k: (self.recorded or {}).get(k, "not recorded") for k in SUMMARY_FIELDS}
        else:
            settings |= {k: v for k, v in asdict(self.settings).items() if k in SUMMARY_FIELDS}
        test = self.evaluation.accuracy if self.evaluation else None
        last_val = float(curve[1][-1]) if len(curve[1]) else None
        return RunSummary(
            self.name,
            settings,
            test,
            last_val,
            self.trainer.epoch,
            self.trainer.elapsed,
            curve,
            self.data.n_test,
        )


def predictor(weights: dict[str, torch.Tensor], config: ModelConfig) -> MLP:
    """A model of its own holding a copy of published weights, to predict with on the page."""
    model = MLP.from_config(config)
    model.load_state_dict(weights)
    return model.eval()


def predict(model: MLP, digit: np.ndarray) -> np.ndarray:
    """Probabilities (10,) for one 28×28 uint8 digit."""
    pixels = torch.from_numpy(np.asarray(digit, dtype=np.uint8)[None])
    return predict_proba(model, pixels)[0].cpu().numpy()


def first_layer_weights(
    weights: dict[str, torch.Tensor], units: int = 64, start: torch.Tensor | None = None
) -> np.ndarray:
    """The first layer's incoming weights of up to `units` units, each as a 28×28 image; with
    `start`, what training changed (W − W_start). A short run leaves W looking like the random
    static it began as, while its change shows the strokes each unit learned to look for."""
    W = weights["layers.0.weight"].float()  # (out, 784)
    if start is not None:
        W = W - start.float()
    return W[:units].numpy().reshape(-1, 28, 28)


class Job(Protocol):
    """What the session reads of a training job: an executor's (pages/serving/jobs.py), handed in
    by the page; the library knows nothing of who serves its runs."""

    work: Any
    state: str
    message: str
    view: Any

    @property
    def active(self) -> bool: ...

    @property
    def position(self) -> int: ...

    def stop(self, reason: str = ...) -> None: ...

    def wait(self, timeout: float | None = None) -> bool: ...

    def seen(self) -> None: ...


class Executor(Protocol):
    """Where the session's runs train: a bounded pool of workers (pages/serving/jobs.py)."""

    threads_per_job: int

    def submit(
        self, work: Any, name: str = ..., owner: object | None = ..., keepalive: float | None = ...
    ) -> Job: ...


class MnistSession:
    """One visitor's MNIST page: the current job (or a finished run), and every run to compare.

    Training runs as a job on the process's executor; the page only polls `view()`. The job's
    owner is this object: when the visitor's session ends and it is collected, the job stops;
    and with `keepalive`, when no page of theirs has polled (view() or the sidebar's line) for
    that long: a closed tab.
    """

    def __init__(self) -> None:
        self.job: Job | None = None
        self.run: MnistRun | None = None  # a run that has ended (trained here or loaded), to look inside
        self.runs: list[RunSummary] = []
        self.loaded_file: str | None = None  # the id of the model file loaded last
        self._predictor: tuple[dict, MLP] | None = None  # (the weights it copies, the model)

    def start(
        self, data: MnistData, settings: MnistSettings, executor: Executor, keepalive: float | None = None
    ) -> None:
        """Queue a new run; ValueError or RuntimeError (e.g. out of GPU memory) if it can't be built."""
        name = f"run {len(self.runs) + 1}"
        work = MnistRun(data, settings, name, threads=executor.threads_per_job)
        self.job, self.run = executor.submit(work, name, owner=self, keepalive=keepalive), None

    def stop(self, wait: float = 1.0) -> None:
        """Stop the run after its current step, and wait (up to `wait` s) for it to end, so the
        page that follows shows the stopped run (and its evaluation) at once."""
        if self.job is not None:
            self.job.stop()
            self.job.wait(wait)

    @property
    def running(self) -> bool:
        """Whether a run is queued or training."""
        return self.job is not None and self.job.active

    def sync(self) -> bool:
        """Collect a job that has ended (its run, its line in the table); True the first time."""
        if self.job is None or self.job.active or self.run is self.job.work:
            return False
        self.run = self.job.work
        if self.job.state != "failed":
            self.runs.append(self.run.summary())
        return True

    def view(self) -> RunView | None:
        """What there is to show: the job's latest view, or the finished run's."""
        if self.job is not None:  # training, or ended (collected by sync() or not yet)
            self.job.seen()
            return self.job.view
        return self.run.view() if self.run is not None else None

    def banner(self) -> tuple[str, str] | None:
        """("info" | "error", sentence) about the job: its place in the queue, or why it failed."""
        if self.job is None:
            return None
        if self.job.state == "queued":
            ahead = self.job.position
            waiting = f"{ahead} run{'s' * (ahead != 1)} wait ahead of yours" if ahead else "yours is next"
            return "info", f"Waiting for a free training slot on the server: {waiting}."
        if self.job.state in ("failed", "diverged", "cancelled"):
            return "error", self.job.message or self.job.view.message
        return None

    def sidebar_status(self) -> str | None:
        """One line for the app's sidebar while a run trains, whatever page is open."""
        if not self.running:
            return None
        self.job.seen()
        view = self.job.view
        if self.job.state == "queued":
            return f"MNIST: {view.name} waiting, number {self.job.position + 1} in the queue"
        return f"MNIST: {view.name} training, epoch {min(int(view.epoch) + 1, view.epochs)}/{view.epochs}"

    def predictor(self) -> MLP | None:
        """A model to predict with: the latest published weights (an epoch's end, or the final ones)."""
        view = self.view()
        if view is None or view.weights is None:
            return None
        if self._predictor is None or self._predictor[0] is not view.weights:
            self._predictor = (view.weights, predictor(view.weights, view.config))
        return self._predictor[1]

    def load(self, data: MnistData, file: bytes, name: str, file_id: str) -> None:
        """A model file (made by this page) becomes the run to look at, evaluated.

        ValueError, in words, for a file that isn't one; what was there stays then.
        """
        if problem := page_refuses(file):  # before the loader, whose limits are MLP's, not this page's
            raise ValueError(problem)
        model, meta = model_from_bytes(file, expect_d_in=784, expect_d_out=10)
        c = model.config
        settings = MnistSettings(
            hidden=tuple(c.hidden),
            activation=c.activation,
            init=c.init,
            dropout=c.dropout,
            epochs=1,
            device="cpu",
        )
        run = MnistRun(data, settings, name)
        run.model.load_state_dict(model.state_dict())
        recorded = recorded_training(meta)
        run.mark_loaded(loaded_sentence(c, recorded), recorded)
        run.stop("Loaded from a file.")
        run.finish()
        self.job, self.run, self.loaded_file = None, run, file_id
        self.runs.append(run.summary())

    @property
    def ready(self) -> bool:
        """Whether a run has ended and can be evaluated."""
        return self.run is not None and self.run.evaluation is not None
