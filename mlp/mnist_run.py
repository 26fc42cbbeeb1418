"""Training and inspecting an MLP on MNIST: one run's model, trainer, curves and evaluation.

The page trains a run a fraction of a second per frame (`advance`), so Stop answers within
a fraction of an epoch, and evaluates it when training ends.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import torch

from mlp.metrics import confusion_matrix, per_class, top_k
from mlp.mnist import MnistData
from mlp.model import MLP, ModelConfig
from mlp.train import TrainConfig, Trainer, lr_factor, predict_proba

VAL_FRACTION = 0.1  # of the training digits, held out to watch over-fitting live


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

    def __init__(
        self, data: MnistData, model_cfg: ModelConfig, train_cfg: TrainConfig, name: str = "run"
    ) -> None:
        if model_cfg.d_in != 784 or model_cfg.d_out != 10:
            raise ValueError("An MNIST model takes 784 inputs and predicts 10 classes.")
        self.name = name
        self.data = data
        self.model = MLP.from_config(model_cfg, seed=train_cfg.seed)
        (x_train, y_train), (x_val, y_val) = data.holdout(VAL_FRACTION)
        # About ten points per epoch on the live curves, whatever the data and batch size.
        steps_per_epoch = -(-len(y_train) // min(train_cfg.batch_size, len(y_train)))
        self.model_cfg = model_cfg
        self.train_cfg = replace(train_cfg, report_every=max(1, steps_per_epoch // 10))
        self.trainer = Trainer(self.model, (x_train, y_train), (x_val, y_val), self.train_cfg)
        self.evaluation: Evaluation | None = None

    @classmethod
    def from_model(cls, data: MnistData, model: MLP, name: str) -> MnistRun:
        """A finished run around a model that was trained elsewhere (an uploaded file)."""
        run = cls(data, model.config, TrainConfig(epochs=1, device="cpu"), name=name)
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

    def live_curves(self) -> dict[str, np.ndarray]:
        """Train curves from every report (within epochs) and validation curves per epoch."""
        reports, epochs = self.trainer.history.reports, self.trainer.history.epochs
        with_val = [e for e in epochs if e.val_loss is not None]
        return {
            "report_epoch": np.array([r.epoch for r in reports], dtype=np.float32),
            "train_loss": np.array([r.train_loss for r in reports], dtype=np.float32),
            "train_acc": np.array([r.train_acc for r in reports], dtype=np.float32),
            "val_epoch": np.array([e.epoch for e in with_val], dtype=np.float32),
            "val_loss": np.array([e.val_loss for e in with_val], dtype=np.float32),
            "val_acc": np.array([e.val_acc for e in with_val], dtype=np.float32),
        }

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
        return (
            predict_proba(self.model, torch.from_numpy(np.asarray(digit, dtype=np.uint8)[None]))[0]
            .cpu()
            .numpy()
        )

    def first_layer_weights(self, units: int = 64) -> np.ndarray:
        """The first layer's incoming weights of up to `units` units, each as a 28×28 image."""
        W = self.model.layers[0].weight.detach().float().cpu().numpy()  # (out, 784)
        return W[:units].reshape(-1, 28, 28)

    def summary(self) -> RunSummary:
        """This run as one row of the comparison table."""
        epochs = self.trainer.history.epochs
        val = [(e.epoch, e.val_acc) for e in epochs if e.val_acc is not None]
        curve = (
            np.array([v[0] for v in val], dtype=np.float32),
            np.array([v[1] for v in val], dtype=np.float32),
        )
        settings = {
            "hidden": "-".join(map(str, self.model_cfg.hidden)) or "none",
            "activation": self.model_cfg.activation,
        }
        settings |= {k: v for k, v in asdict(self.train_cfg).items() if k in SUMMARY_KEYS}
        test = self.evaluation.accuracy if self.evaluation else None
        return RunSummary(
            self.name, settings, test, val[-1][1] if val else None, len(epochs), self.trainer.elapsed, curve
        )


SUMMARY_KEYS = ("optimizer", "lr", "batch_size", "weight_decay", "scheduler", "grad_clip", "seed")
