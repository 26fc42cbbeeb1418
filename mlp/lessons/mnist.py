"""The MNIST page's model: its settings (and their link form), and one visitor's session.

`MnistSettings` is what the sidebar sets and a link carries; `MnistSession` is one visitor's
page: Start queues a run (mlp.lessons.mnist_run) on the executor, Stop ends it, finished runs
are kept to compare.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mlp.data import MnistData
from mlp.device import DEVICES
from mlp.io import max_file_bytes, model_from_bytes, read_metadata
from mlp.lessons import settings as form
from mlp.lessons.mnist_run import SUMMARY_FIELDS, MnistRun, RunSummary, RunView, predictor
from mlp.lessons.settings import LinkNote, Spec, WidthLimits, setting
from mlp.model import MLP, ModelConfig
from mlp.train import TrainConfig
from mlp.train.jobs import Executor, Job

WIDTHS = WidthLimits(max_layers=4, max_width=2048, min_layers=0)
LARGEST = ModelConfig(784, [WIDTHS.max_width] * WIDTHS.max_layers, 10)  # the widest, deepest it trains
# Its uploader's limit: the largest model file this page writes (784-2048×4-10: 56.9 MB), in the
# MB Streamlit's uploader counts in the browser (10^6 bytes; 2^20 on Windows and on the server,
# which only admits more).
MAX_MODEL_MB = math.ceil(max_file_bytes(LARGEST) / 10**6)
DEVICE = "Device"
CUDA_ONLY = ("amp", "compile")  # shown, and applied, only on a CUDA device


@dataclass(frozen=True)
class MnistSettings:
    """The network and how it trains on the digits. Each field is the one declaration of its
    setting (mlp.lessons.settings): default, link name, range, widget."""

    hidden: tuple[int, ...] = setting((128,), form.HIDDEN.like(widths=WIDTHS))
    activation: str = setting("relu", form.ACTIVATION)
    init: str = setting("kaiming", form.INIT)
    dropout: float = setting(0.0, form.DROPOUT.like(high=0.8))
    optimizer: str = setting("adam", form.OPTIMIZER)
    momentum: float = setting(0.9, form.MOMENTUM)
    lr: float = setting(1e-3, form.LR.like(stops=(1e-4, 3e-4, 1e-3, 2e-3, 3e-3, 0.01, 0.03, 0.1, 0.3)))
    batch_size: int = setting(128, form.BATCH.like(stops=(*form.BATCH.stops, 512, 1024)))
    epochs: int = setting(5, form.EPOCHS)
    weight_decay: float = setting(0.0, form.WEIGHT_DECAY)
    scheduler: str = setting("none", form.SCHEDULE)
    warmup_epochs: float = setting(0.0, form.WARMUP)
    grad_clip: float = setting(
        0.0, Spec("clip", 0.0, 100.0, step=0.5, label="Gradient clipping (max norm, 0 = off)",
                  section=form.TRAINING, widget="number"),
    )  # fmt: skip
    seed: int = setting(0, form.SEED.like(section=form.TRAINING))
    amp: bool = setting(
        False, Spec("amp", choices=(False, True), label="bf16 autocast", section=form.TRAINING,
                    help="Matmuls in bfloat16; weights stay float32."),
    )  # fmt: skip
    compile: bool = setting(
        False, Spec("compile", choices=(False, True), label="CUDA graphs (torch.compile)",
                    section=form.TRAINING, help="Compiles, then one launch a step."),
    )  # fmt: skip
    device: str = setting(  # drawn first, under its own heading
        "auto",
        Spec(
            "device",
            choices=DEVICES,
            label="Train on",
            section=DEVICE,
            help="auto: CUDA, then Apple MPS, then CPU.",
        ),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        form.check(self, SPECS)

    def model_config(self) -> ModelConfig:
        return ModelConfig(784, list(self.hidden), 10, self.activation, self.init, self.dropout)

    def train_config(self) -> TrainConfig:
        return TrainConfig(**form.matching(self, TrainConfig))  # every setting TrainConfig has


SPECS: dict[str, Spec] = form.specs_of(MnistSettings)


def to_query(settings: MnistSettings) -> dict[str, str]:
    """Every setting as a string, keyed by its short link name."""
    return form.to_query(settings, SPECS)


def from_query(query: Mapping[str, Any]) -> tuple[MnistSettings, list[LinkNote]]:
    """Settings from a link's query; each bad parameter is skipped with a note."""
    values, _, notes = form.read_link(query, MnistSettings(), SPECS)
    return MnistSettings(**values), notes


def from_widgets(
    values: Mapping[str, Any], fallback: MnistSettings, device_kind: str
) -> tuple[MnistSettings, list[ValueError]]:
    """Settings from the sidebar's values; bf16 and CUDA graphs only where the device is CUDA."""

    def fix(values: dict[str, Any]) -> None:
        if device_kind != "cuda":
            values.update(dict.fromkeys(CUDA_ONLY, False))

    return form.from_widgets(values, fallback, SPECS, fix)


RECORDED = (*SUMMARY_FIELDS, "epochs_trained")  # what a model file may say of its training
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,23}")


def recorded_training(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    """How a model file says it trained, keeping only what this page writes there: known keys,
    with finite numbers or short names as values. A file can say anything; the rest is dropped
    (it would reach the screen)."""
    training = meta.get("training")
    if not isinstance(training, dict):
        return None
    kept = {}
    for key in RECORDED:
        value = training.get(key)
        number = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        if number or (isinstance(value, str) and _WORD.fullmatch(value)):
            kept[key] = value
    return kept or None


def declared_hidden(file: bytes) -> list[int] | None:
    """The hidden widths a model file's architecture declares, unchecked; None if it declares
    none that can be read (model_from_bytes then says what is wrong with it)."""
    try:
        hidden = json.loads(read_metadata(file)["architecture"])["model"]["hidden"]
    except (KeyError, TypeError, ValueError, RecursionError):
        return None
    whole = isinstance(hidden, list) and all(isinstance(h, int) and not isinstance(h, bool) for h in hidden)
    return hidden if whole else None


def page_refuses(file: bytes) -> str | None:
    """Why this page can't take a model file's hidden layers, in its own limits (not the
    library's far larger ones a loader would name), or None."""
    hidden = declared_hidden(file)
    if hidden is None or (problem := WIDTHS.problem(hidden)) is None:
        return None
    return f"This model doesn't fit this page: {problem[0].lower()}{problem[1:]}"


def loaded_sentence(config: Any, training: dict[str, Any] | None) -> str:
    """What a loaded model is, in a line: its architecture and how its file says it trained."""
    widths = " → ".join(map(str, (config.d_in, *config.hidden, config.d_out)))
    arch = f"{widths} · {config.activation} · {config.init} init"
    if not training:
        return f"{arch}; its file does not record how it was trained."
    keys = ("optimizer", "lr", "batch_size", "epochs_trained", "weight_decay", "scheduler")
    return (
        f"{arch}; trained with "
        + ", ".join(f"{k.replace('_', ' ')} {training[k]}" for k in keys if k in training)
        + "."
    )


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
