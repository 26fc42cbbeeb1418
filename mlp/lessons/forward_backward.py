"""The forward & backward page's model: its settings, the batch, and one pass run both ways.

Everything the page shows is computed from `mlp.manual.forward_backward`'s steps, so the
lesson shows the numbers of the code that runs. `shapes` explains each step's shapes,
`checks` tests each step and the gradients, `tables` counts tensors and FLOPs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from mlp.data import KINDS, MAX_CLASSES, class_count, load_sample, make_2d, teacher_task
from mlp.links import settings as form
from mlp.links.settings import LinkNote
from mlp.manual import NEW, ForwardBackward, Step, derivative_name, forward_backward
from mlp.model import MAX_HIDDEN_LAYERS, MLP
from mlp.spec import Spec, WidthLimits, setting, specs_of
from mlp.train.config import TRAIN_SPECS

SOURCES = ("gaussian", "toy", "mnist", "teacher")  # N(0, 1) rows, a 2D toy set, digits, a teacher's labels
FIXED_D_IN = {"toy": 2, "mnist": 784, "teacher": 16}  # the inputs' width where the data decides it
FIXED_K = {"mnist": 10}  # the classes where the data decides them: ten digits
WIDTHS = WidthLimits(max_layers=4, max_width=1024, min_layers=1)
SOURCE_NAMES = {
    "gaussian": "Random numbers",
    "toy": "2D toy points",
    "mnist": "MNIST digits",
    "teacher": "Teacher network",  # short: a projector's sidebar shows ~16 characters
}
BATCH_AND_NETWORK = "Network and batch"


@dataclass(frozen=True)
class ForwardSettings:
    """The network and batch the lesson walks through. Each field is the one declaration of its
    setting (mlp.links.settings): default, link name, range, widget."""

    source: str = setting(
        "gaussian",
        Spec("input", choices=SOURCES, label="Input", section=BATCH_AND_NETWORK, names=SOURCE_NAMES),
    )
    toy_kind: str = setting("moons", Spec("toy", choices=KINDS, label="Toy set"))  # for source == "toy"
    n: int = setting(4, Spec("n", 1, 1024, label="Batch size N", section=BATCH_AND_NETWORK, widget="number"))
    d_in: int = setting(3, Spec("d_in", 1, 1024, label="Input width d_in", widget="number"))  # or the data's
    hidden: tuple[int, ...] = setting((5,), form.HIDDEN.like(widths=WIDTHS, section=BATCH_AND_NETWORK))
    k: int = setting(3, Spec("k", 2, 100, label="Classes K", widget="number"))  # or the data's (10 digits)
    activation: str = setting("relu", form.ACTIVATION.like(section=BATCH_AND_NETWORK))
    init: str = setting("kaiming", form.INIT.like(section=BATCH_AND_NETWORK))
    seed: int = setting(0, form.SEED.like(section=BATCH_AND_NETWORK))
    lr: float = setting(  # the update step at the end of the walk: W_new = W - lr * dW
        0.1,
        TRAIN_SPECS["lr"].like(
            stops=(0.01, 0.03, 0.1, 0.3, 1.0),
            section=BATCH_AND_NETWORK,
            help="The update at the end of the walk: every parameter moves by −lr × its gradient.",
        ),
    )
    break_grad: bool = setting(  # in the gradient-check tab: a wrong backprop, to see the check fail
        False,
        Spec(
            "break",
            choices=(False, True),
            label="Break the gradient (flip the activation mask in backprop)",
            help="Backprop then uses 1 − f′(z): for ReLU, gradient flows through the units that were off.",
        ),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        form.check(self, SPECS)


SPECS: dict[str, Spec] = specs_of(ForwardSettings)


def step_names(hidden_layers: int) -> list[str]:
    """The steps of mlp.manual.forward_backward for a network of this many hidden layers, in order:
    forward, backward, then the update and the loss it gives."""
    out = hidden_layers + 1  # the output layer's index
    forward = [name for i in range(1, out) for name in (f"z{i}", f"a{i}")] + [f"z{out}", "probs", "loss", "Y"]
    backward = [f"dz{out}", f"dW{out}", f"db{out}"]
    backward += [name for i in range(out - 1, 0, -1) for name in (f"da{i}", f"dz{i}", f"dW{i}", f"db{i}")]
    update = [f"{p}{l}{NEW}" for l in range(1, out + 1) for p in ("W", "b")] + [f"loss{NEW}"]
    return forward + backward + update


TABS = ("steps", "overview", "gradients", "init")  # the page's tabs, as a link names them
VIEW_SPECS: dict[str, Spec] = {
    "tab": Spec("tab", choices=TABS),
    "step": Spec("step", choices=tuple(step_names(WIDTHS.max_layers))),  # any network's step names
    "spread_depth": Spec("depth", 4, MAX_HIDDEN_LAYERS),  # the deepest stack an MLP may have
    "spread_width": Spec("width", stops=(64, 128, 256, 512)),
}
SPREAD_WIDTHS = VIEW_SPECS["spread_width"].stops  # the only widths: a link can't bring one between


@dataclass(frozen=True)
class ForwardView:
    """Where a visitor is on the page: the tab, the step, the initialisation tab's stack."""

    tab: str = "steps"  # one of TABS
    step: str = "z1"  # a step of the network shown
    spread_depth: int = 10  # the initialisation tab's stack: layers
    spread_width: int = 256  # and units per layer

    def __post_init__(self) -> None:
        form.check(self, VIEW_SPECS)
        if self.spread_width not in SPREAD_WIDTHS:
            allowed = ", ".join(map(str, SPREAD_WIDTHS))
            raise ValueError(f"spread_width must be one of {allowed}; got {self.spread_width}.")


def to_query(settings: ForwardSettings, view: ForwardView | None = None) -> dict[str, str]:
    """Every setting (and where the visitor is) as a string, keyed by its short link name."""
    return form.to_query(settings, SPECS) | (form.to_query(view, VIEW_SPECS) if view else {})


def from_query(query: Mapping[str, Any]) -> tuple[ForwardSettings, list[LinkNote]]:
    """Settings from a link's query; each bad parameter is skipped with a note (where the
    visitor is on the page is `view_from_query`'s)."""
    view_keys = {spec.key for spec in VIEW_SPECS.values()}
    settings_query = {k: v for k, v in query.items() if k not in view_keys}
    values, _, notes = form.read_link(settings_query, ForwardSettings(), SPECS)
    return ForwardSettings(**values), notes


def view_from_query(
    query: Mapping[str, Any], settings: ForwardSettings
) -> tuple[ForwardView, list[LinkNote]]:
    """Where a link opens the page (tab, step, the initialisation stack); bad values get notes."""
    view_keys = {spec.key for spec in VIEW_SPECS.values()}
    values, _, notes = form.read_link(
        {k: v for k, v in query.items() if k in view_keys}, ForwardView(), VIEW_SPECS
    )
    if values["step"] not in step_names(len(settings.hidden)):
        notes.append(LinkNote("step", values["step"], "this network has no such step"))
        values["step"] = ForwardView.step
    if values["spread_width"] not in SPREAD_WIDTHS:
        allowed = f"{', '.join(map(str, SPREAD_WIDTHS[:-1]))} or {SPREAD_WIDTHS[-1]}"
        notes.append(LinkNote("width", str(values["spread_width"]), f"width must be {allowed}"))
        values["spread_width"] = ForwardView.spread_width
    return ForwardView(**values), notes


def from_widgets(
    values: Mapping[str, Any], fallback: ForwardSettings
) -> tuple[ForwardSettings, list[ValueError]]:
    """Settings from the sidebar's values; what can't be used keeps `fallback`'s, with the reason."""
    return form.from_widgets(values, fallback, SPECS)


@dataclass
class Batch:
    """The batch the walk-through computes on: its inputs, labels and what it is."""

    X: np.ndarray  # (N, d_in) float32
    y: np.ndarray  # (N,) int64
    k: int  # classes the network predicts
    images: np.ndarray | None  # (N, 28, 28) uint8 for MNIST, else None
    note: str  # what the batch is, in a sentence


def make_batch(cfg: ForwardSettings) -> Batch:
    """The input batch the config asks for; same config, same batch."""
    rng = np.random.default_rng(cfg.seed)
    if cfg.source == "mnist":
        data = load_sample("it ships with the app")
        idx = rng.choice(len(data.y_test), size=min(cfg.n, len(data.y_test)), replace=False)
        images = data.x_test[idx]
        X = images.reshape(len(idx), -1).astype(np.float32) / 255.0
        note = f"{len(idx)} real MNIST digits, pixels scaled to [0, 1] and flattened to 784 numbers each."
        return Batch(X, data.y_test[idx], FIXED_K["mnist"], images, note)
    if cfg.source == "toy":
        classes = class_count(cfg.toy_kind, min(max(2, cfg.k), MAX_CLASSES))
        X, y = make_2d(cfg.toy_kind, max(cfg.n, 2 * classes), noise=0.1, classes=classes, seed=cfg.seed)
        note = f"{cfg.n} points of the '{cfg.toy_kind}' set: x1 and x2 are the 2 input features."
        return Batch(X[: cfg.n], y[: cfg.n], max(cfg.k, classes), None, note)
    if cfg.source == "teacher":
        X, y = teacher_task(cfg.n, FIXED_D_IN["teacher"], cfg.k, cfg.seed)
        note = (
            f"{cfg.n} rows of 16 numbers from N(0, 1), labelled 0..{cfg.k - 1} by a fixed random ReLU "
            "network (16 → 32 → K): the seed notes' teacher task."
        )
        return Batch(X, y, cfg.k, None, note)
    X = rng.standard_normal((cfg.n, cfg.d_in)).astype(np.float32)
    y = rng.integers(0, cfg.k, size=cfg.n)
    note = f"{cfg.n} rows of {cfg.d_in} numbers drawn from N(0, 1), with random labels in 0..{cfg.k - 1}."
    return Batch(X, y.astype(np.int64), cfg.k, None, note)


@dataclass
class Walkthrough:
    """One forward and backward pass, ready to be shown step by step."""

    cfg: ForwardSettings
    batch: Batch
    widths: list[int]  # [d_in, h1, ..., K]
    passes: dict[str, ForwardBackward]  # the same pass run by NumpyOps and by TorchOps
    backend_diff: float  # max |NumPy - PyTorch| over every step

    @property
    def result(self) -> ForwardBackward:
        return self.passes["numpy"]

    @property
    def steps(self) -> list[Step]:
        return self.result.steps

    def symbols(self, name: str) -> tuple[str, ...]:
        """The symbolic shape of a tensor: ('N', 'h1') for z1, ('h1', 'K') for W2 in a 1-hidden net."""
        if name.endswith(NEW):  # W1_new has W1's shape, z2_new z2's
            return self.symbols(name[: -len(NEW)])
        L = len(self.widths) - 1
        width_name = ["d_in", *[f"h{i}" for i in range(1, L)], "K"]
        stem = name.lstrip("d").rstrip("0123456789") if name not in ("X", "Y", "y") else name
        layer = int(name[len(name.rstrip("0123456789")) :] or 0)
        if name.startswith("f'("):  # f'(z1): the shape of z1
            return self.symbols(name[3:-1])
        if name in ("X",):
            return ("N", "d_in")
        if name in ("y",):
            return ("N",)
        if name in ("Y", "probs", "dprobs"):
            return ("N", "K")
        if name == "loss":
            return ()
        if stem == "W":
            return (width_name[layer - 1], width_name[layer])
        if stem == "b":
            return (width_name[layer],)
        return ("N", width_name[layer])  # z, a and their gradients


def operands(step: Step) -> list[str]:
    """The tensors a step reads, then the one it makes: what the page shows as numbers. dz of a
    hidden layer reads f'(z), the derivative it multiplies by, not z itself; the loss after the
    update shows beside the loss before it."""
    if step.name == f"loss{NEW}":
        return ["loss", step.name]
    inputs = [i for i in step.inputs if i != "y" or step.op == "one_hot"]
    if step.op == "preact_grad":
        inputs = [inputs[0], derivative_name(step.layer)]
    return [*inputs, step.name]


def run_lesson(cfg: ForwardSettings) -> Walkthrough:
    """Build the batch and the network, then run the manual pass, and the update, in both backends."""
    batch = make_batch(cfg)
    widths = [batch.X.shape[1], *cfg.hidden, batch.k]
    model = MLP(widths[0], widths[1:-1], widths[-1], activation=cfg.activation, init=cfg.init, seed=cfg.seed)
    params_np = model.to_manual("numpy")
    params_t = model.to_manual()
    X_t, y_t = torch.from_numpy(batch.X), torch.from_numpy(batch.y)
    how = {"break_grad": cfg.break_grad, "lr": cfg.lr}
    numpy_pass = forward_backward(params_np, batch.X, batch.y, cfg.activation, **how)
    torch_pass = forward_backward(params_t, X_t, y_t, cfg.activation, **how)
    diff = max(
        float(np.max(np.abs(np.asarray(a.value, dtype=np.float64) - b.value.double().numpy()), initial=0.0))
        for a, b in zip(numpy_pass.steps, torch_pass.steps, strict=True)
    )
    return Walkthrough(cfg, batch, widths, {"numpy": numpy_pass, "torch": torch_pass}, diff)
