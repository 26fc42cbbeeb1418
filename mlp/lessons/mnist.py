"""The MNIST page's model: its settings, one training run, its evaluation, and a visitor's runs.

`MnistSettings` is what the sidebar sets (and a link carries); `MnistRun` trains one model on
the training digits minus a validation share and evaluates it on the test digits;
`MnistSession` is one visitor's page: the current run, Start, Stop, the runs to compare.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import torch

from mlp.data import MnistData
from mlp.device import DEVICES
from mlp.io import architecture_json, model_from_bytes, model_to_bytes
from mlp.lessons import settings as form
from mlp.lessons.format import count_text, seconds_text
from mlp.lessons.settings import LinkNote, Spec, WidthLimits
from mlp.metrics import confusion_matrix, per_class, top_k
from mlp.model import ACTIVATIONS, INITS, MLP, ModelConfig
from mlp.train import OPTIMIZERS, SCHEDULERS, TrainConfig, Trainer, lr_factor, predict_proba

VAL_FRACTION = 0.1  # of the training digits, held out to watch over-fitting live
WIDTHS = WidthLimits(max_layers=4, max_width=2048, min_layers=0)
SPECS: dict[str, Spec] = {
    "hidden": Spec("hidden", widths=WIDTHS),
    "activation": Spec("act", choices=ACTIVATIONS),
    "init": Spec("init", choices=INITS),
    "dropout": Spec("dropout", 0.0, 0.8, step=0.05),
    "optimizer": Spec("opt", choices=OPTIMIZERS),
    "lr": Spec("lr", 1e-4, 0.3, stops=(1e-4, 3e-4, 1e-3, 2e-3, 3e-3, 0.01, 0.03, 0.1, 0.3)),
    "batch_size": Spec("bs", 16, 1024, stops=(16, 32, 64, 128, 256, 512, 1024)),
    "epochs": Spec("epochs", 1, 100),
    "weight_decay": Spec("wd", 0.0, 0.01, stops=(0.0, 1e-5, 1e-4, 1e-3, 1e-2)),
    "scheduler": Spec("sched", choices=SCHEDULERS),
    "warmup_epochs": Spec("warmup", 0.0, 10.0, step=0.5),
    "grad_clip": Spec("clip", 0.0, 100.0, step=0.5),
    "seed": Spec("seed", 0, 2**31 - 1),
    "device": Spec("device", choices=DEVICES),
    "amp": Spec("amp", choices=(False, True)),
    "compile": Spec("compile", choices=(False, True)),
}
SUMMARY_FIELDS = ("optimizer", "lr", "batch_size", "weight_decay", "scheduler", "grad_clip", "seed")


@dataclass(frozen=True)
class MnistSettings:
    """The network and how it trains on the digits."""

    hidden: tuple[int, ...] = (128,)  # 0 to 4 layers of 1 to 2048 units
    activation: str = "relu"
    init: str = "kaiming"
    dropout: float = 0.0
    optimizer: str = "adam"
    lr: float = 1e-3
    batch_size: int = 128
    epochs: int = 5
    weight_decay: float = 0.0
    scheduler: str = "none"
    warmup_epochs: float = 0.0
    grad_clip: float = 0.0  # 0 = off
    seed: int = 0
    device: str = "auto"  # "auto": CUDA, then Apple MPS, then the CPU
    amp: bool = False  # bf16 autocast (CUDA only)
    compile: bool = False  # CUDA graphs via torch.compile (CUDA only)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        form.check(self, SPECS)

    def model_config(self) -> ModelConfig:
        return ModelConfig(784, list(self.hidden), 10, self.activation, self.init, self.dropout)

    def train_config(self) -> TrainConfig:
        names = ("optimizer", "lr", "batch_size", "epochs", "weight_decay", "scheduler", "warmup_epochs")
        return TrainConfig(
            **{name: getattr(self, name) for name in names},
            grad_clip=self.grad_clip,
            seed=self.seed,
            device=self.device,
            amp=self.amp,
            compile=self.compile,
        )


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
            values["amp"] = values["compile"] = False

    return form.from_widgets(values, fallback, SPECS, fix)


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

    def row(self) -> dict[str, Any]:
        return {
            "run": self.name,
            **self.settings,
            "epochs": self.epochs,
            "val acc": self.val_accuracy,
            "test acc": self.test_accuracy,
            "seconds": round(self.seconds, 2),
        }


class MnistRun:
    """A model, its trainer on MNIST's training digits (minus a validation share), its results."""

    def __init__(self, data: MnistData, settings: MnistSettings, name: str = "run") -> None:
        self.name = name
        self.data = data
        self.settings = settings
        self.model = MLP.from_config(settings.model_config(), seed=settings.seed)
        (x_train, y_train), (x_val, y_val) = data.holdout(VAL_FRACTION)
        # About ten points per epoch on the live curves, whatever the data and batch size.
        steps_per_epoch = -(-len(y_train) // min(settings.batch_size, len(y_train)))
        self.train_cfg = replace(settings.train_config(), report_every=max(1, steps_per_epoch // 10))
        self.trainer = Trainer(self.model, (x_train, y_train), (x_val, y_val), self.train_cfg)
        self.evaluation: Evaluation | None = None

    @classmethod
    def from_model(cls, data: MnistData, model: MLP, name: str) -> MnistRun:
        """A finished run around a model that was trained elsewhere (an uploaded file)."""
        c = model.config
        settings = MnistSettings(tuple(c.hidden), c.activation, c.init, c.dropout, epochs=1, device="cpu")
        run = cls(data, settings, name=name)
        run.model.load_state_dict(model.state_dict())
        run.trainer.stop(f"Loaded from {name}.")
        return run

    # --- training ------------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        """Train for about `seconds` (one frame of the page)."""
        self.trainer.run_for(seconds)

    def stop(self) -> None:
        self.trainer.stop("Stopped: the model keeps what it learned so far.")

    @property
    def finished(self) -> bool:
        return self.trainer.finished

    # --- what the page shows -----------------------------------------------------------------

    def live_curves(self) -> dict[str, dict[str, np.ndarray]]:
        """Train curves from every report (within epochs) and validation curves per epoch."""
        history = self.trainer.history
        return {"train": history.report_arrays(), "val": history.epoch_arrays()}

    def live_metrics(self) -> list[tuple[str, str]]:
        """(label, value) of the numbers above the curves."""
        t = self.trainer
        reports, epochs = t.history.reports, t.history.epochs
        last = reports[-1] if reports else None
        val = [e.val_acc for e in epochs if e.val_acc is not None]
        return [
            ("Epoch", f"{t.epoch_progress:.2f} / {self.train_cfg.epochs}"),
            ("Samples / s", count_text(last.samples_per_sec) if last else "–"),
            ("Epoch time", seconds_text(epochs[-1].seconds) if epochs else "–"),
            ("ETA", seconds_text(last.eta) if last and not self.finished else "–"),
            ("Val. accuracy", f"{val[-1]:.2%}" if val else "–"),
        ]

    def status_line(self) -> str:
        """'running · step 120 of 1,410' (the run's name goes before it)."""
        t = self.trainer
        return f"{t.status} · step {t.step_count:,} of {t.total_steps:,}"

    def lr_schedule(self, points: int = 300) -> tuple[np.ndarray, np.ndarray]:
        """(fractional epoch, learning rate) over the whole run, from the same formula the trainer uses."""
        t = self.trainer
        steps = np.unique(np.linspace(0, max(0, t.total_steps - 1), points).round().astype(int))
        lrs = [self.train_cfg.lr * lr_factor(int(s), self.train_cfg, t.steps_per_epoch) for s in steps]
        return steps / t.steps_per_epoch, np.array(lrs)

    def evaluate(self) -> Evaluation:
        """Accuracy, loss, confusion and per-class scores on the test digits (cached until retrained)."""
        if self.evaluation is None:
            x, y = self.data.x_test, self.data.y_test
            probs = predict_proba(self.model, x).float().cpu().numpy()  # one pass over the test set
            predicted = probs.argmax(axis=1)
            accuracy = float(np.mean(predicted == y))
            loss = float(-np.log(np.maximum(probs[np.arange(len(y)), y].astype(np.float64), 1e-45)).mean())
            confusion = confusion_matrix(y, predicted, 10)
            self.evaluation = Evaluation(accuracy, loss, confusion, per_class(confusion), probs, predicted)
        return self.evaluation

    def predict(self, digit: np.ndarray) -> np.ndarray:
        """Probabilities (10,) for one 28×28 uint8 digit."""
        pixels = torch.from_numpy(np.asarray(digit, dtype=np.uint8)[None])
        return predict_proba(self.model, pixels)[0].cpu().numpy()

    def first_layer_weights(self, units: int = 64) -> np.ndarray:
        """The first layer's incoming weights of up to `units` units, each as a 28×28 image."""
        W = self.model.layers[0].weight.detach().float().cpu().numpy()  # (out, 784)
        return W[:units].reshape(-1, 28, 28)

    def downloads(self) -> list[tuple[str, Callable[[], bytes | str], str]]:
        """(button label, what makes the file, file name) for what a run can be saved as."""
        extra = {"test_accuracy": self.evaluation.accuracy if self.evaluation else None}
        return [
            ("Weights (.safetensors)", lambda: model_to_bytes(self.model, **extra), "mnist-mlp.safetensors"),
            ("Architecture (.json)", lambda: architecture_json(self.model, **extra), "mnist-mlp.json"),
        ]

    def summary(self) -> RunSummary:
        """This run as one row of the comparison table."""
        val = self.trainer.history.epoch_arrays()
        known = ~np.isnan(val["val_acc"])
        curve = (val["epoch"][known].astype(np.float32), val["val_acc"][known].astype(np.float32))
        settings = {"hidden": WIDTHS.text(self.settings.hidden), "activation": self.settings.activation}
        settings |= {k: v for k, v in asdict(self.settings).items() if k in SUMMARY_FIELDS}
        test = self.evaluation.accuracy if self.evaluation else None
        last_val = float(curve[1][-1]) if len(curve[1]) else None
        epochs = len(self.trainer.history.epochs)
        return RunSummary(self.name, settings, test, last_val, epochs, self.trainer.elapsed, curve)


class MnistSession:
    """One visitor's MNIST page: the current run, whether it trains, and every finished run."""

    def __init__(self) -> None:
        self.run: MnistRun | None = None
        self.running = False
        self.runs: list[RunSummary] = []
        self.loaded_file: str | None = None  # the id of the model file loaded last

    def start(self, data: MnistData, settings: MnistSettings) -> None:
        """A new run from these settings; ValueError or RuntimeError (e.g. out of GPU memory) if not."""
        self.run = MnistRun(data, settings, f"run {len(self.runs) + 1}")
        self.running = True

    def advance(self, seconds: float) -> bool:
        """Train the current run for about `seconds`; True when it has just finished."""
        if not self.running or self.run is None:
            return False
        self.run.advance(seconds)
        if self.run.finished:
            self.finish()
            return True
        return False

    def stop(self) -> None:
        """Stop the current run where it is, keeping what it learned, and evaluate it."""
        if self.run is not None and self.running:
            self.run.stop()
            self.finish()

    def finish(self) -> None:
        self.running = False
        self.run.evaluate()
        self.runs.append(self.run.summary())

    def load(self, data: MnistData, file: bytes, name: str, file_id: str) -> None:
        """A model file (made by this page) becomes the current run, finished and evaluated.

        ValueError, in words, for a file that isn't one; the current run stays then.
        """
        model, _ = model_from_bytes(file, expect_d_in=784, expect_d_out=10)
        self.run = MnistRun.from_model(data, model, name)
        self.loaded_file = file_id
        self.finish()

    @property
    def ready(self) -> bool:
        """Whether there is a finished run to evaluate and try."""
        return self.run is not None and self.run.finished
