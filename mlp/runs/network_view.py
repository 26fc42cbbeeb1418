"""What the playground's network view draws: every unit as a map over the plane, the weights
between the units shown, the dead ones; and, for a 2-unit last hidden layer, the plane as that
layer sees it (ConvNetJS's hidden-space view).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from mlp.data.features import input_labels, with_features
from mlp.device import torch_threads
from mlp.lessons.playground import SMALL_NET_THREADS
from mlp.runs.playground import Playground
from mlp.runs.playground_view import PlaneGrid
from mlp.train import eval_mode
from mlp.train.penalty import penalised, zero_count

MAX_UNITS = 16  # units drawn per layer; the rest are counted
REGRESSION_OUTPUT = "ŷ"  # a regression's one output unit, as the view labels it: the prediction


@dataclass
class NetworkPicture:
    """Layers from the inputs to the outputs; in each, the first `MAX_UNITS` units."""

    widths: list[int]  # every layer's true width: [2 + features, h1, ..., K]
    maps: list[np.ndarray]  # per layer, (shown, r, r): each shown unit's output over the plane
    weights: list[np.ndarray]  # per pair of layers, (shown_out, shown_in): the weights between them
    dead: list[np.ndarray]  # per layer, (shown,) bool: ReLU units that are 0 for every training point
    labels: list[list[str]]  # per layer, each shown unit's name
    zeros: str = ""  # "37 of 96 weights are exactly 0", with L1 on or any weight at 0; else ""


@torch.inference_mode()
def network_picture(run: Playground, max_units: int = MAX_UNITS) -> NetworkPicture:
    """The network as TensorFlow Playground draws it, from the run's current weights."""
    with run.lock, eval_mode(run.model, run.settings.dropout > 0), torch_threads(SMALL_NET_THREADS):
        grid = run.view.neuron_grid
        r = grid.res
        outputs = run.model.activations(grid.inputs)  # hidden layers, then the logits
        regress = run.points.task == "regress"  # one output unit, the value: no softmax
        if not regress:
            outputs[-1] = torch.softmax(outputs[-1], dim=1)  # the output units: each class's probability
        train = run.model.activations(torch.from_numpy(run.inputs.X_train))[:-1]
        weights = [layer.weight.detach().cpu().numpy() for layer in run.model.layers]
        zeros = zeros_line(*zero_count(penalised(run.model)), run.settings.l1 > 0)
    widths = [grid.inputs.shape[1], *(a.shape[1] for a in outputs)]
    shown = [min(w, max_units) for w in widths]
    maps = [grid.inputs.T.reshape(widths[0], r, r).numpy()]  # the inputs: x1, x2 and each feature
    maps += [a[:, :n].T.reshape(n, r, r).numpy() for a, n in zip(outputs, shown[1:], strict=True)]
    relu = run.settings.activation == "relu"
    dead = [np.zeros(widths[0], dtype=bool)]
    dead += [
        (~a[:, :n].any(dim=0)).numpy() if relu else np.zeros(n, dtype=bool)
        for a, n in zip(train, shown[1:-1], strict=True)
    ]
    dead.append(np.zeros(shown[-1], dtype=bool))
    labels = [input_labels(run.settings.features)]
    labels += [[f"{i + 1}" for i in range(n)] for n in shown[1:-1]]
    labels.append([REGRESSION_OUTPUT] if regress else [f"class {k}" for k in range(shown[-1])])
    pairs = [W[: shown[i + 1], : shown[i]] for i, W in enumerate(weights)]
    return NetworkPicture(widths, maps, pairs, dead, labels, zeros)


def zeros_line(zeros: int, total: int, l1_on: bool) -> str:
    """How many weights are exactly 0 (L1's doing), or "" when none is and L1 is off."""
    if not zeros and not l1_on:
        return ""
    verb = "is" if zeros == 1 else "are"
    return f"{zeros:,} of {total:,} weights {verb} exactly 0 (drawn dashed)."


@dataclass
class HiddenSpace:
    """The training points where the last hidden layer (2 units) puts them, the output layer's
    regions in that space, and the plane's grid lines bent by the layers before."""

    points: np.ndarray  # (n, 2): (h1, h2) of each training point
    labels: np.ndarray  # (n,)
    probs: np.ndarray  # (res, res, K): the output layer's class probabilities over the space
    extent: tuple[float, float, float, float]  # x0, x1, y0, y1 of that space's view
    lines: list[np.ndarray]  # each (m, 2): a grid line of the input plane, mapped into the space


@torch.inference_mode()
def hidden_space(run: Playground, res: int = 80, lines: int = 9) -> HiddenSpace | None:
    """The plane as a 2-unit last hidden layer sees it; None when that layer isn't 2 units wide, or
    for a regression (no classes for the output layer to split that plane into)."""
    if not run.settings.hidden or run.settings.hidden[-1] != 2 or run.points.task == "regress":
        return None
    x0, x1, y0, y1 = run.points.extent
    ticks_x, ticks_y = np.linspace(x0, x1, lines), np.linspace(y0, y1, lines)
    fine_x, fine_y = np.linspace(x0, x1, 60), np.linspace(y0, y1, 60)
    grid_lines = [np.stack([np.full_like(fine_y, t), fine_y], 1) for t in ticks_x]
    grid_lines += [np.stack([fine_x, np.full_like(fine_x, t)], 1) for t in ticks_y]
    with run.lock, eval_mode(run.model, run.settings.dropout > 0), torch_threads(SMALL_NET_THREADS):
        X = torch.from_numpy(run.inputs.X_train)
        h = run.model.activations(X)[-2].numpy()  # (n, 2)
        bent = [
            run.model.activations(
                with_features(torch.tensor(line, dtype=torch.float32), run.settings.features)
            )[-2].numpy()
            for line in grid_lines
        ]
        lo, hi = h.min(axis=0), h.max(axis=0)
        pad = 0.1 * np.maximum(hi - lo, 1e-3)
        extent = (float(lo[0] - pad[0]), float(hi[0] + pad[0]), float(lo[1] - pad[1]), float(hi[1] + pad[1]))
        space = PlaneGrid(extent, res)
        probs = torch.softmax(run.model.layers[-1](space.points), dim=1).numpy().reshape(res, res, -1)
    return HiddenSpace(h, run.points.y_train, probs, extent, bent)
