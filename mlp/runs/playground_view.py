"""What one playground run shows, apart from how it trains (mlp.runs.playground): the plane's
shading over a lattice, each unit's map, dead units, confusion, curves, the numbers above the
plane, the banner naming what went wrong, the engines' gap — each read under the run's lock, so
from the weights of one step."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import torch

from mlp.data.features import with_features
from mlp.device import flush_denormals, torch_threads
from mlp.figures.plane import Shade
from mlp.lessons.playground import SMALL_NET_THREADS
from mlp.links.format import loss_text
from mlp.metrics import confusion_matrix
from mlp.model import MLP
from mlp.runs import diagnosis
from mlp.train import Trainer, eval_mode, evaluate, predict_outputs, predict_proba
from mlp.train.fastpath.choice import numpy_inference
from mlp.train.fastpath.columns import hidden_maxima, numpy_outputs, top_class
from mlp.train.penalty import penalty_of

if TYPE_CHECKING:
    from mlp.runs.playground import Playground

T = TypeVar("T")

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
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> T:
        with self.lock:
            return method(self, *args, **kwargs)

    return wrapper


class PlaygroundView:
    """What a run shows, read from its network as it is now: one job, drawing a run, never
    training it (every method holds the run's lock: nothing is read mid-step).

    The plane's lattice (`grid`, `neuron_grid` for the units' small maps) is made with the view,
    as the run's network and points are: a new network or set is a new run and a new view."""

    def __init__(self, run: Playground, grid_res: int | None = None) -> None:
        self.run, self.lock = run, run.lock
        s, points = run.settings, run.points
        res = grid_res or grid_resolution(tuple(run.model.config.widths))
        self.grid = PlaneGrid(points.extent, res, s.features)
        self.neuron_grid = PlaneGrid(points.extent, 28, s.features)
        self._train_columns: tuple[np.ndarray, np.ndarray] | None = None  # X_train, as float32 columns
        self._edited: tuple[Trainer, int] | None = None  # a weight set by hand: (its trainer, at step)

    @property
    def _set_eval(self) -> bool:
        return self.run.settings.dropout > 0

    @locked
    def grid_probs(self) -> np.ndarray:
        """Class probabilities over the plane, (res, res, K), row 0 at the bottom; a regression's
        predicted values, (res, res, 1)."""
        with torch_threads(SMALL_NET_THREADS):
            probs = plane_outputs(self.run.model, self.grid, self.run.points.task, self._set_eval)
        return probs.reshape(self.grid.res, self.grid.res, -1)

    @locked
    def grid_shade(self) -> Shade:
        """What a frame shades over the plane: each cell's top class and its probability, or a
        regression's value (cheaper than grid_probs: no (res, res, K) probabilities made)."""
        with torch_threads(SMALL_NET_THREADS), flush_denormals():
            return plane_shade(self.run.model, self.grid, self.run.points.task, self._set_eval)

    @locked
    @torch.inference_mode()
    def neuron_maps(self, layers: int = 2, max_units: int = 32) -> list[np.ndarray]:
        """What each hidden unit of the first `layers` layers outputs over the plane: (units, r, r) each."""
        r, model = self.neuron_grid.res, self.run.model
        with eval_mode(model, self._set_eval), torch_threads(SMALL_NET_THREADS):
            outputs = model.activations(self.neuron_grid.inputs)[:-1][:layers]
        return [a[:, :max_units].T.reshape(-1, r, r).numpy() for a in outputs]

    @locked
    def dead_units(self) -> list[tuple[int, int, int]]:
        """(layer, dead, units) per hidden layer; a unit is dead if it outputs 0 for every train point.

        Dead ReLUs pass no gradient back, so a layer of them stalls training with a finite loss
        the divergence check can't see. Too large a learning rate is the usual cause.
        """
        if self.run.settings.activation != "relu":
            return []
        X = self.run.inputs.X_train
        if self._train_columns is None or self._train_columns[0] is not X:
            self._train_columns = (X, np.ascontiguousarray(X.T, dtype=np.float32))
        with torch_threads(SMALL_NET_THREADS), flush_denormals():
            maxima = unit_maxima(self.run.model, X, self._train_columns[1])
        return [(i, int((m <= 0).sum()), len(m)) for i, m in enumerate(maxima, 1)]  # ReLU ≥ 0

    def mostly_dead(self, share: float = 0.9) -> list[tuple[int, int, int]]:
        """The hidden layers with at least `share` of their units dead."""
        return [(layer, dead, units) for layer, dead, units in self.dead_units() if dead >= share * units]

    @locked
    @torch.inference_mode()
    def confusion(self, which: str = "test") -> np.ndarray | None:
        """Counts (K, K): rows are the true class, columns the predicted one. None for a regression."""
        if (p := self.run.inputs).task == "regress":
            return None
        X, y = (p.X_test, p.y_test) if which == "test" else (p.X_train, p.y_train)
        predicted = predict_proba(self.run.model, X, set_eval=self._set_eval).argmax(1).numpy()
        return confusion_matrix(y, predicted, p.classes)

    @locked
    def curves(self, max_points: int = 400) -> dict[str, np.ndarray]:
        """Per-epoch train/test loss and accuracy, thinned to at most max_points for plotting."""
        return self.run.trainer.history.epoch_arrays(max_points)

    @locked
    def twin_curves(self, max_points: int = 400) -> dict[str, np.ndarray] | None:
        """The twin's curves, while the engines are compared."""
        twin = self.run.twin
        return twin.history.epoch_arrays(max_points) if twin is not None else None

    @locked
    def live_metrics(self) -> list[tuple[str, str]]:
        """(label, value) of the numbers above the plane: of the model the plane shows. (After a
        divergence that is the last good one, whose step and numbers are not the last epoch's.)"""
        return metrics_shown(*self._shown_numbers(), self.run.points.task)

    @locked
    def live_frame(self) -> LiveFrame:
        """The plane's probabilities, the numbers and the banner's kind, all of one step."""
        t, banner = self.run.trainer, self.banner()
        kind = banner[0] if banner else None
        return LiveFrame(t.step_count, self.grid_shade(), self.live_metrics(), kind, t.finished)

    @locked
    def banner(self) -> tuple[str, str] | None:
        """What the page must say about the run, if anything: ("error" | "warning" | "info",
        Markdown), naming the cause the run shows (mlp.runs.diagnosis)."""
        trainer, classes = self.run.trainer, self.run.points.classes
        last = trainer.history.epochs[-1] if trainer.history.epochs else None
        if trainer.status == "diverged":
            return "error", diagnosis.diverged_text(trainer.message, trainer.guard.checked_step)
        layers, dead = list(self.run.model.layers), self.mostly_dead()
        if dead or diagnosis.stalled(last and last.train_loss, trainer.epoch, classes):
            gain = diagnosis.signal_gain(layers)  # tiny: units look dead, or the loss sits at chance
            if gain < diagnosis.FADED:
                return "warning", diagnosis.faded_text(gain, len(layers) - 1, classes)
        if dead:
            return "warning", diagnosis.dead_text(dead, self.run.settings.activation)
        if trainer.status == "done":
            return "info", diagnosis.done_text(trainer.epoch)
        return None

    @locked
    def engine_gap(self) -> dict[str, float] | None:
        """How far apart the two engines are: largest loss and weight differences so far."""
        twin = self.run.twin
        return None if twin is None else trainers_gap(self.run.trainer, twin)

    @locked
    @torch.inference_mode()
    def score(self, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
        """Cross-entropy and accuracy of the network as it is now on points (x1, x2) that are not
        its data: a challenge's hidden part (mlp.curriculum.challenges.hidden_points)."""
        X_in = with_features(np.asarray(X, dtype=np.float32), self.run.settings.features)
        return evaluate(self.run.model, X_in, y, set_eval=self._set_eval)

    def weights_edited(self, edited: bool = True) -> None:
        """A weight was set by hand: until the next epoch's record, the numbers are measured anew.
        `edited=False`: every such weight is back as it was at that record, whose numbers hold again."""
        trainer = self.run.trainer
        self._edited = (trainer, trainer.step_count) if edited else None

    def _shown_numbers(self) -> tuple[int, int, float | None, float | None, float | None]:
        """(epoch, step, train loss, test loss, test accuracy) of the model the run holds: the last
        epoch's record, or, after a divergence or a weight set by hand since that record, the
        weights' own, measured now."""
        trainer, p, model = self.run.trainer, self.run.inputs, self.run.model
        last = trainer.history.epochs[-1] if trainer.history.epochs else None
        edited = (
            self._edited is not None
            and self._edited[0] is trainer
            and (last is None or last.step <= self._edited[1])
        )
        if trainer.status == "diverged" or edited:
            diverged, loss = trainer.status == "diverged", trainer.cfg.loss
            step = trainer.guard.checked_step if diverged else trainer.step_count  # the last good weights'
            # The train loss as training records it: with the L1 and L2 penalties (the test loss without).
            penalty = penalty_of(model, trainer.cfg.l1, trainer.cfg.l2)
            train_loss = evaluate(model, p.X_train, p.y_train, loss=loss)[0] + penalty
            test = evaluate(model, p.X_test, p.y_test, loss=loss) if len(p.y_test) else (None, None)
            epoch = step // trainer.steps_per_epoch if diverged else trainer.epoch
            return epoch, step, train_loss, *test
        if last is None:
            return trainer.epoch, trainer.step_count, None, None, None
        return trainer.epoch, trainer.step_count, last.train_loss, last.val_loss, last.val_acc


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
