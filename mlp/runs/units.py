"""One unit of a playground run up close: its output over the plane, its computation at a point
with the real numbers (z = Σ wᵢ·aᵢ + b, a = f(z), then the units it feeds, up to the output),
and one weight set by hand and put back (TensorFlow Playground's users asked for it; CNN
Explainer shows a unit's arithmetic the same way)."""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from mlp.activations import ACTIVATIONS
from mlp.data.features import input_labels, with_features
from mlp.device import torch_threads
from mlp.errors import InputError
from mlp.lessons.playground import SMALL_NET_THREADS
from mlp.runs.playground import HAND_SET, Playground
from mlp.train import Trainer, eval_mode

MAX_WEIGHT = 100.0  # a weight typed by hand: beyond this the plane is one colour and nothing is learnt
MAX_FEEDS = 6  # the units of the next layer shown, the largest contributions first

Unit = tuple[int, int]  # (layer, unit): layer 1 is the first hidden layer; the last is the output


@dataclass(frozen=True)
class Edge:
    """The weight into unit `out` of layer `layer` from unit `inp` of the layer before."""

    layer: int  # 1 = the first hidden layer's weights (from the inputs)
    out: int
    inp: int


@dataclass(frozen=True)
class Term:
    """One input's share of a unit's pre-activation: w · a."""

    name: str  # the input unit's name: "x1", "sin x2", "layer 1, unit 3"
    w: float
    a: float

    @property
    def wa(self) -> float:
        return self.w * self.a


@dataclass(frozen=True)
class UnitStep:
    """z = Σ wᵢ·aᵢ + b and a = f(z) of one unit at one point; `f` is "softmax" for an output unit
    (then `a` is its class's probability)."""

    layer: int
    unit: int
    name: str
    terms: list[Term]  # every input of the unit, in the network's order
    b: float
    z: float
    a: float
    f: str


@dataclass(frozen=True)
class Feed:
    """What the chosen unit gives a unit of the next layer (w · a), and that unit's z and a."""

    name: str
    w: float  # the weight from the chosen unit
    wa: float  # w · a_chosen: the chosen unit's contribution to z
    z: float
    a: float


@dataclass(frozen=True)
class UnitComputation:
    """A unit's computation at a point of the plane, and the path from it to the output."""

    point: tuple[float, float]
    step: int  # the optimizer step of the weights used
    unit: UnitStep
    feeds: list[Feed]  # the next layer's units it feeds, largest |w · a| first (at most MAX_FEEDS)
    more_feeds: int  # the next layer's units not shown
    next_f: str  # the next layer's activation ("softmax" when it is the output, "identity" in a regression)
    logits: list[float]  # the output's z at the point
    probs: list[float]  # softmax(logits); in a regression ŷ = z itself


def plane_caption(run: Playground, unit: Unit) -> str:
    """What the plane says it shows while a unit is on it."""
    layer, j = unit
    if layer == layer_count(run) and _regression(run):
        return "Output ŷ: the value it predicts over the plane. Click a point for its numbers."
    if layer == layer_count(run):
        return f"Output, class {j}: its probability over the plane. Click a point for its numbers."
    return (
        f"Layer {layer}, unit {j + 1}: its output a over the plane ({_colours(run)}). "
        "Click a point for its numbers."
    )


def _colours(run: Playground) -> str:
    """What a hidden unit's map's colours mean under the run's activation."""
    if run.settings.activation == "relu":
        return "orange > 0, clear at 0: a ReLU is never below 0"
    return "orange > 0, blue < 0, clear at 0"


def layer_count(run: Playground) -> int:
    """Layers with weights: the hidden layers and the output."""
    return len(run.model.layers)


def unit_name(run: Playground, unit: Unit) -> str | None:
    """ "layer 1, unit 3" or "output: class 2"; None when the run's network has no such unit."""
    layer, j = unit
    if not 1 <= layer <= layer_count(run) or not 0 <= j < run.model.layers[layer - 1].out_features:
        return None
    if layer < layer_count(run):
        return f"layer {layer}, unit {j + 1}"
    return "output: ŷ" if _regression(run) else f"output: class {j}"


def input_names(run: Playground, layer: int) -> list[str]:
    """The names of the inputs of layer `layer`'s units: the network's inputs, or the layer before's units."""
    if layer == 1:
        return input_labels(run.settings.features)
    return [f"layer {layer - 1}, unit {i + 1}" for i in range(run.model.layers[layer - 1].in_features)]


def _activation(run: Playground, layer: int) -> str:
    """A layer's f: the settings' for a hidden layer; the output's is softmax, or for a
    regression the identity (ŷ = z)."""
    if layer < layer_count(run):
        return run.settings.activation
    return "identity" if _regression(run) else "softmax"


def _regression(run: Playground) -> bool:
    return run.points.task == "regress"


def _output(run: Playground, z: torch.Tensor) -> torch.Tensor:
    """The output layer's a from its z: class probabilities, or a regression's value itself."""
    return z if _regression(run) else torch.softmax(z, dim=1)


@torch.inference_mode()
def unit_plane(run: Playground, unit: Unit) -> np.ndarray:
    """The unit's output over the plane's grid, (res, res), row 0 at the bottom: its a for a
    hidden unit, its class's probability for an output unit."""
    layer, j = unit
    f = ACTIVATIONS[run.settings.activation].torch
    with run.lock, eval_mode(run.model, run.settings.dropout > 0), torch_threads(SMALL_NET_THREADS):
        a = run.view.grid.inputs  # (res², d_in)
        for i, linear in enumerate(run.model.layers[:layer], start=1):  # only as far as the unit's layer
            z = linear(a)  # (res², n_in) @ (n_in, n_out) + (n_out,)
            a = _output(run, z) if i == layer_count(run) else f(z)
        return a[:, j].reshape(run.view.grid.res, run.view.grid.res).numpy().copy()


@torch.inference_mode()
def unit_computation(run: Playground, unit: Unit, point: tuple[float, float]) -> UnitComputation:
    """The unit's z and a at `point` (x1, x2) with every term, the next layer's units it feeds
    and the output there: the model's own forward pass, in eval mode, step by step."""
    if unit_name(run, unit) is None:
        raise ValueError(f"This network has no unit {unit[1] + 1} in layer {unit[0]}.")
    layer, j = unit
    last = layer_count(run)
    x = torch.tensor([point], dtype=torch.float32)  # (1, 2)
    with run.lock, eval_mode(run.model, run.settings.dropout > 0), torch_threads(SMALL_NET_THREADS):
        step = run.trainer.step_count
        a_prev = inputs = with_features(x, run.settings.features)  # (1, d_in): x1, x2, the features
        f = ACTIVATIONS[run.settings.activation].torch
        zs, acts = [], []
        for i, linear in enumerate(run.model.layers, start=1):  # as MLP.forward, keeping every z
            z = F.linear(a_prev, linear.weight, linear.bias)  # (1, n_in) @ (n_in, n_out) + (n_out,)
            a = _output(run, z) if i == last else f(z)
            zs.append(z[0].double().numpy())
            acts.append(a[0].double().numpy())
            a_prev = a
        weights = [
            (m.weight.double().numpy().copy(), m.bias.double().numpy().copy()) for m in run.model.layers
        ]
    a_in = inputs[0].double().numpy() if layer == 1 else acts[layer - 2]
    W, b = weights[layer - 1]
    names = input_names(run, layer)
    terms = [Term(n, float(w), float(a)) for n, w, a in zip(names, W[j], a_in, strict=True)]
    chosen = UnitStep(
        layer,
        j,
        unit_name(run, unit) or "",
        terms,
        float(b[j]),
        float(zs[layer - 1][j]),
        float(acts[layer - 1][j]),
        _activation(run, layer),
    )
    feeds, more, next_f = [], 0, ""
    if layer < last:
        W_next = weights[layer][0]  # (n_next, n_this)
        next_f = _activation(run, layer + 1)
        feeds = [
            Feed(
                unit_name(run, (layer + 1, k)) or "",
                float(W_next[k, j]),
                float(W_next[k, j] * chosen.a),
                float(zs[layer][k]),
                float(acts[layer][k]),
            )
            for k in range(W_next.shape[0])
        ]
        feeds.sort(key=lambda f: -abs(f.wa))
        more, feeds = max(0, len(feeds) - MAX_FEEDS), feeds[:MAX_FEEDS]
    return UnitComputation(point, step, chosen, feeds, more, next_f, zs[-1].tolist(), acts[-1].tolist())


# --- a weight set by hand ------------------------------------------------------------------------

# The value each edited weight had before its first edit ("the trained value"), per model, for
# Reset; kept per trainer, so a run's Reset or a new run forgets them.
_trained: weakref.WeakKeyDictionary[Trainer, dict[Edge, list[float]]] = weakref.WeakKeyDictionary()
_first_edit: weakref.WeakKeyDictionary[Trainer, int] = weakref.WeakKeyDictionary()  # its step


def parse_weight(text: str) -> float:
    """A weight typed by hand, or ValueError with a sentence saying what is allowed."""
    cleaned = text.strip().replace("−", "-").replace(",", ".")
    if not cleaned:
        raise ValueError("Type the weight's new value: a number, such as 0.5 or -1.2.")
    try:
        value = float(cleaned)
    except ValueError:
        raise InputError("A weight is a number, such as 0.5 or -1.2; {} is not one.", text.strip()) from None
    if not math.isfinite(value):  # "nan", "inf": float() reads them, a weight can't be them
        raise InputError("A weight is a finite number, such as 0.5 or -1.2; {} is not one.", text.strip())
    if abs(value) > MAX_WEIGHT:
        raise ValueError(f"A weight must be a number between -{MAX_WEIGHT:g} and {MAX_WEIGHT:g}.")
    return value


def check_edge(run: Playground, edge: Edge) -> None:
    """ValueError unless the run's network has this weight."""
    layers = run.model.layers
    if not 1 <= edge.layer <= len(layers):
        raise ValueError(f"This network has no layer {edge.layer}.")
    linear = layers[edge.layer - 1]
    if not (0 <= edge.out < linear.out_features and 0 <= edge.inp < linear.in_features):
        raise ValueError("This network has no such weight: its layers have changed since.")


def _models(run: Playground) -> list[torch.nn.Module]:
    """The run's network and its twin's: a weight set by hand is set in both, so they stay comparable."""
    return [run.model] + ([run.twin.model] if run.twin is not None else [])


def weight(run: Playground, edge: Edge) -> float:
    """The weight's value now."""
    check_edge(run, edge)
    with run.lock:
        return float(run.model.layers[edge.layer - 1].weight.detach()[edge.out, edge.inp])


def trained_value(run: Playground, edge: Edge) -> float | None:
    """The value the weight had before it was first set by hand, if it was."""
    with run.lock:
        before = _trained.get(run.trainer, {}).get(edge)
    return before[0] if before else None


def set_weight(run: Playground, edge: Edge, value: float) -> None:
    """Set the weight (in the twin too, if one trains alongside); training goes on from it, the
    optimizer's state as it was. The numbers above the plane are measured anew
    (PlaygroundView.weights_edited)."""
    check_edge(run, edge)
    if not math.isfinite(value) or abs(value) > MAX_WEIGHT:
        raise ValueError(f"A weight must be a number between -{MAX_WEIGHT:g} and {MAX_WEIGHT:g}.")
    with run.lock, torch.no_grad():
        models = _models(run)
        edits = _trained.setdefault(run.trainer, {})
        if not edits:
            _first_edit[run.trainer] = run.trainer.step_count
        if edge not in edits:
            edits[edge] = [float(m.layers[edge.layer - 1].weight[edge.out, edge.inp]) for m in models]
        for m in models:
            m.layers[edge.layer - 1].weight[edge.out, edge.inp] = value
        run.view.weights_edited()
        run.altered = run.altered or HAND_SET  # the link can't set it: off a class board until Reset


def reset_weight(run: Playground, edge: Edge) -> bool:
    """Put back the value the weight had before it was set by hand; False if it never was."""
    check_edge(run, edge)
    with run.lock, torch.no_grad():
        before = _trained.get(run.trainer, {}).pop(edge, None)
        if before is None:
            return False
        for m, value in zip(_models(run), before, strict=False):
            m.layers[edge.layer - 1].weight[edge.out, edge.inp] = value
        # Every weight back, and no step taken since the first edit: the weights are the trained
        # ones, and so are the numbers of the last record.
        untouched = not _trained[run.trainer] and _first_edit.get(run.trainer) == run.trainer.step_count
        run.view.weights_edited(not untouched)
        if untouched and run.altered == HAND_SET:  # nothing trained on the weight as set: as the link has it
            run.altered = None
    return True
