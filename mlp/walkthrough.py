"""The forward and backward pass as a lesson: the batch, each step's shapes, checks and costs.

Everything here is computed from `mlp.manual.forward_backward`'s steps, so the lesson shows
the numbers of the code that runs. The page only lays it out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np
import torch

from mlp.data import KINDS, make_2d
from mlp.gradcheck import Comparison, FiniteDifference, autograd_grads, compare_grads, finite_differences
from mlp.manual import ForwardBackward, Step, forward_backward
from mlp.mnist import load_sample
from mlp.model import ACTIVATIONS, INITS, MLP

SOURCES = ("gaussian", "toy", "mnist")  # random N(0, 1) rows, a 2D toy set, real digits
MAX_BATCH = 1024
MAX_WIDTH = 1024
MAX_HIDDEN = 4


@dataclass
class LessonConfig:
    """The network and batch the lesson walks through."""

    n: int = 4  # batch size N
    d_in: int = 3  # input width (fixed to 2 for toy data and 784 for MNIST)
    hidden: list[int] = field(default_factory=lambda: [5])  # 1 to 4 hidden widths
    k: int = 3  # classes K (10 for MNIST; at least the toy set's classes)
    activation: str = "relu"
    init: str = "kaiming"
    seed: int = 0
    source: str = "gaussian"  # one of SOURCES
    toy_kind: str = "moons"  # for source == "toy"
    break_grad: bool = False  # flip the activation mask in backprop, to see the check fail

    def __post_init__(self) -> None:
        checks = [
            (1 <= self.n <= MAX_BATCH, f"Batch size N must be between 1 and {MAX_BATCH}; got {self.n}."),
            (1 <= self.d_in <= MAX_WIDTH, f"Input width must be between 1 and {MAX_WIDTH}; got {self.d_in}."),
            (2 <= self.k <= 100, f"Classes K must be between 2 and 100; got {self.k}."),
            (
                1 <= len(self.hidden) <= MAX_HIDDEN,
                f"Use 1 to {MAX_HIDDEN} hidden layers; got {len(self.hidden)}.",
            ),
            (
                all(1 <= h <= MAX_WIDTH for h in self.hidden),
                f"Widths must be 1 to {MAX_WIDTH}; got {self.hidden}.",
            ),
            (self.activation in ACTIVATIONS, f"Unknown activation {self.activation!r}."),
            (self.init in INITS, f"Unknown init {self.init!r}."),
            (self.source in SOURCES, f"Unknown input {self.source!r}; choose one of {', '.join(SOURCES)}."),
            (self.toy_kind in KINDS, f"Unknown toy set {self.toy_kind!r}."),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)


def parse_widths(text: str, max_layers: int = MAX_HIDDEN, max_width: int = MAX_WIDTH) -> list[int]:
    """'256, 128' -> [256, 128]; anything else is a ValueError a student can act on."""
    parts = [p for p in text.replace(";", ",").replace(" ", ",").split(",") if p.strip()]
    if not parts:
        raise ValueError(
            f"Give 1 to {max_layers} hidden widths separated by commas, e.g. '16' or '256, 128'."
        )
    widths = []
    for part in parts:
        try:
            widths.append(int(part))
        except ValueError:
            raise ValueError(
                f"'{part.strip()}' is not a whole number; write widths like '256, 128'."
            ) from None
    if len(widths) > max_layers:
        raise ValueError(f"At most {max_layers} hidden layers here; got {len(widths)}.")
    bad = [w for w in widths if not 1 <= w <= max_width]
    if bad:
        raise ValueError(f"Each width must be between 1 and {max_width}; got {bad[0]}.")
    return widths


@dataclass
class Batch:
    X: np.ndarray  # (N, d_in) float32
    y: np.ndarray  # (N,) int64
    k: int  # classes the network predicts
    images: np.ndarray | None  # (N, 28, 28) uint8 for MNIST, else None
    note: str  # what the batch is, in a sentence


def make_batch(cfg: LessonConfig) -> Batch:
    """The input batch the config asks for; same config, same batch."""
    rng = np.random.default_rng(cfg.seed)
    if cfg.source == "mnist":
        data = load_sample("it ships with the app")
        idx = rng.choice(len(data.y_test), size=min(cfg.n, len(data.y_test)), replace=False)
        images = data.x_test[idx]
        X = images.reshape(len(idx), -1).astype(np.float32) / 255.0
        note = f"{len(idx)} real MNIST digits, pixels scaled to [0, 1] and flattened to 784 numbers each."
        return Batch(X, data.y_test[idx], 10, images, note)
    if cfg.source == "toy":
        classes = min(max(2, cfg.k), 5) if cfg.toy_kind in ("blobs", "spiral") else 2
        X, y = make_2d(cfg.toy_kind, max(cfg.n, 2 * classes), noise=0.1, classes=classes, seed=cfg.seed)
        note = f"{cfg.n} points of the '{cfg.toy_kind}' set: x1 and x2 are the 2 input features."
        return Batch(X[: cfg.n], y[: cfg.n], max(cfg.k, classes), None, note)
    X = rng.standard_normal((cfg.n, cfg.d_in)).astype(np.float32)
    y = rng.integers(0, cfg.k, size=cfg.n)
    note = f"{cfg.n} rows of {cfg.d_in} numbers drawn from N(0, 1), with random labels in 0..{cfg.k - 1}."
    return Batch(X, y.astype(np.int64), cfg.k, None, note)


@dataclass
class Lesson:
    """One forward and backward pass, ready to be shown step by step."""

    cfg: LessonConfig
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
        L = len(self.widths) - 1
        width_name = ["d_in", *[f"h{i}" for i in range(1, L)], "K"]
        stem = name.lstrip("d").rstrip("0123456789") if name not in ("X", "Y", "y") else name
        layer = int(name[len(name.rstrip("0123456789")) :] or 0)
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


def shape_text(shape: Sequence) -> str:
    """Python's way of writing a shape: (N, d_in), (K,), ()."""
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(s) for s in shape) + ")"


def run_lesson(cfg: LessonConfig) -> Lesson:
    """Build the batch and the network, then run the manual pass in both backends."""
    batch = make_batch(cfg)
    widths = [batch.X.shape[1], *cfg.hidden, batch.k]
    model = MLP(widths[0], widths[1:-1], widths[-1], activation=cfg.activation, init=cfg.init, seed=cfg.seed)
    params_np = model.to_manual("numpy")
    params_t = model.to_manual()
    X_t, y_t = torch.from_numpy(batch.X), torch.from_numpy(batch.y)
    numpy_pass = forward_backward(params_np, batch.X, batch.y, cfg.activation, break_grad=cfg.break_grad)
    torch_pass = forward_backward(params_t, X_t, y_t, cfg.activation, break_grad=cfg.break_grad)
    diff = max(
        float(np.max(np.abs(np.asarray(a.value, dtype=np.float64) - b.value.double().numpy()), initial=0.0))
        for a, b in zip(numpy_pass.steps, torch_pass.steps, strict=True)
    )
    return Lesson(cfg, batch, widths, {"numpy": numpy_pass, "torch": torch_pass}, diff)


# --- what each step shows ----------------------------------------------------------------


@dataclass(frozen=True)
class Operand:
    name: str  # as in the code: "X", "W1", "dz2"; a trailing ᵀ marks a transpose
    shape: tuple[int, ...]
    symbols: tuple[str, ...]  # ("N", "d_in")


@dataclass(frozen=True)
class ShapeStory:
    """Operands, the operator between them, the result, and what the shapes mean."""

    operands: list[Operand]
    operators: list[str]  # between consecutive operands: "@", "+", "−", "⊙", "f", "Σ rows", ...
    result: Operand
    inner: str | None  # the symbol matched by a matmul ("d_in") or summed over ("N")
    broadcast: str | None  # the operand added to every row, if any
    sentence: str  # the shape rule in words


def _operand(lesson: Lesson, name: str, transpose: bool = False) -> Operand:
    value = lesson.result.tensors[name]
    shape, symbols = tuple(np.shape(value)), lesson.symbols(name)
    if transpose:
        return Operand(f"{name}ᵀ", shape[::-1], symbols[::-1])
    return Operand(name, shape, symbols)


def shape_story(lesson: Lesson, step: Step) -> ShapeStory:
    """How the operands' shapes make the result's shape, for one step."""
    result = _operand(lesson, step.name)
    ins = step.inputs
    op = step.op
    n = result.shape[0] if result.shape else lesson.batch.X.shape[0]
    if op == "affine":
        a, W, b = (_operand(lesson, i) for i in ins)
        inner = a.symbols[1]
        sentence = (
            f"{a.name} {a.shape} @ {W.name} {W.shape}: the inner sizes ({inner} = {a.shape[1]}) must match; "
            f"each of the {n} rows of {a.name} is dotted with each of the {W.shape[1]} columns of {W.name}. "
            f"{b.name} {b.shape} is broadcast: the same row is added to all {n} rows."
        )
        return ShapeStory([a, W, b], ["@", "+"], result, inner, b.name, sentence)
    if op == "weight_grad":
        a, dz = _operand(lesson, ins[0], transpose=True), _operand(lesson, ins[1])
        sentence = (
            f"{a.name} {a.shape} @ {dz.name} {dz.shape}: the inner size is the batch (N = {dz.shape[0]}), "
            f"so this matmul sums every example's contribution into one gradient with {step.name}'s "
            f"shape {result.shape}, the shape of W{step.layer}."
        )
        return ShapeStory([a, dz], ["@"], result, "N", None, sentence)
    if op == "input_grad":
        dz, W = _operand(lesson, ins[0]), _operand(lesson, ins[1], transpose=True)
        sentence = (
            f"{dz.name} {dz.shape} @ {W.name} {W.shape}: the inner size ({dz.symbols[1]} = {dz.shape[1]}) "
            f"matches; the gradient flows back through W{step.layer} to the {result.shape[1]} units below."
        )
        return ShapeStory([dz, W], ["@"], result, dz.symbols[1], None, sentence)
    if op == "bias_grad":
        dz = _operand(lesson, ins[0])
        sentence = (
            f"Summing {dz.name} {dz.shape} over its {dz.shape[0]} rows gives {step.name} {result.shape}: "
            "the bias was added to every row, so every row's gradient flows back to it."
        )
        return ShapeStory([dz], ["Σ rows"], result, "N", None, sentence)
    if op == "softmax":
        z = _operand(lesson, ins[0])
        sentence = f"Softmax works row by row: {z.shape} in, {result.shape} out, each row now sums to 1."
        return ShapeStory([z], ["softmax"], result, None, None, sentence)
    if op == "cross_entropy":
        z, y = _operand(lesson, ins[0]), _operand(lesson, "y")
        sentence = (
            f"One number per example, -log P[i, y_i], averaged over the {z.shape[0]} rows into a scalar."
        )
        return ShapeStory([z, y], ["with"], result, "N", None, sentence)
    if op == "one_hot":
        y = _operand(lesson, "y")
        sentence = (
            f"Each label becomes a row of {result.shape[1]} with a single 1: {y.shape} → {result.shape}."
        )
        return ShapeStory([y], ["one-hot"], result, None, None, sentence)
    if op == "dlogits":
        P, Y = _operand(lesson, "probs"), _operand(lesson, "Y")
        sentence = (
            f"(P − Y) / N, element by element: {P.shape} − {Y.shape} → {result.shape}. "
            "Dividing by N is the mean in the loss."
        )
        return ShapeStory([P, Y], ["−"], result, None, None, sentence)
    if op == "preact_grad":
        da, z = _operand(lesson, ins[0]), _operand(lesson, ins[1])
        sentence = (
            f"Element by element: {da.name} {da.shape} ⊙ f'({z.name}) {z.shape} → {result.shape}. "
            "Where the activation was flat, the gradient stops."
        )
        return ShapeStory(
            [da, Operand(f"f'({z.name})", z.shape, z.symbols)], ["⊙"], result, None, None, sentence
        )
    z = _operand(lesson, ins[0])  # an activation
    sentence = f"Applied element by element: {z.shape} in, {result.shape} out."
    return ShapeStory([z], ["f"], result, None, None, sentence)


@dataclass(frozen=True)
class Check:
    label: str
    ok: bool | None  # None: a note worth reading, not a pass/fail test
    detail: str


def step_checks(lesson: Lesson, step: Step) -> list[Check]:
    """The sanity checks that apply to one step."""
    value = np.asarray(step.value.cpu() if torch.is_tensor(step.value) else step.value, dtype=np.float64)
    checks = [Check("finite", bool(np.isfinite(value).all()), "no NaN or infinity")]
    if step.op == "softmax":
        worst = float(np.max(np.abs(value.sum(axis=1) - 1)))
        checks.append(Check("rows sum to 1", worst < 1e-5, f"max |row sum − 1| = {worst:.1e}"))
        checks.append(Check("probabilities in [0, 1]", bool((value >= 0).all() and (value <= 1).all()), ""))
    if step.op == "relu":
        dead = float(np.mean(np.all(value == 0, axis=0)))
        checks.append(Check("outputs ≥ 0", bool((value >= 0).all()), f"min = {value.min():.3g}"))
        dead_text = f"{dead:.0%} of the {value.shape[1]} units output 0 for every example"
        checks.append(Check("dead units", None, dead_text))
    if step.op == "cross_entropy":
        k = lesson.widths[-1]
        uniform = f"a network guessing uniformly scores ln {k} = {math.log(k):.4f}"
        checks.append(Check("compare with ln K", None, f"loss = {float(value):.4f}; {uniform}"))
    if step.op == "dlogits":
        worst = float(np.max(np.abs(value.sum(axis=1))))
        checks.append(
            Check("rows sum to 0", worst < 1e-6, f"P and Y rows both sum to 1; max |row sum| = {worst:.1e}")
        )
    if step.op in ("weight_grad", "bias_grad"):
        param = f"{'W' if step.op == 'weight_grad' else 'b'}{step.layer}"
        expected = tuple(np.shape(lesson.result.tensors[param]))
        checks.append(
            Check(f"same shape as {param}", value.shape == expected, f"{value.shape} vs {expected}")
        )
    return checks


def role_of(name: str) -> str:
    """'parameter' (W, b), 'input' (X, y), 'gradient' (d...) or 'activation' (z, a, probs, ...)."""
    if name in ("X", "y"):
        return "input"
    if name[0] in "Wb":
        return "parameter"
    return "gradient" if name.startswith("d") else "activation"


def tensor_table(lesson: Lesson) -> list[dict]:
    """Every tensor of the pass: name, role, shape, elements and bytes."""
    rows = []
    for name, value in lesson.result.tensors.items():
        array = np.asarray(value)
        rows.append(
            {
                "tensor": name,
                "role": role_of(name),
                "shape": shape_text(lesson.symbols(name)),
                "size": shape_text(array.shape),
                "elements": array.size,
                "bytes": array.nbytes,
            }
        )
    return rows


def layer_table(widths: Sequence[int], n: int) -> list[dict]:
    """Per layer: parameters (n_in + 1) × n_out and forward FLOPs 2 · N · n_in · n_out."""
    rows = []
    for layer, (n_in, n_out) in enumerate(pairwise(widths), start=1):
        rows.append(
            {
                "layer": layer,
                "n_in": n_in,
                "n_out": n_out,
                "parameters": (n_in + 1) * n_out,
                "formula": f"({n_in} + 1) × {n_out}",
                "forward FLOPs": 2 * n * n_in * n_out,
                "backward FLOPs": 4 * n * n_in * n_out,  # dW = aᵀ dz and da = dz Wᵀ: two matmuls
            }
        )
    return rows


FD_TOLERANCE = 1e-4  # relative error that a central difference in float64 comfortably beats


@dataclass
class GradientReport:
    against_autograd: list[Comparison]
    finite_diffs: list[FiniteDifference]
    autograd_loss: float

    @property
    def ok(self) -> bool:
        return all(c.close for c in self.against_autograd) and all(
            f.rel_error < FD_TOLERANCE for f in self.finite_diffs
        )

    def autograd_rows(self) -> list[dict]:
        """One row per gradient: pass/FAIL, shape, exactness and the largest difference."""
        return [
            {
                "gradient": c.name,
                "status": "pass" if c.close else "FAIL",
                "shape matches": c.shape_ok,
                "bit-exact": c.exact,
                "max |manual − autograd|": f"{c.max_diff:.2e}",
            }
            for c in self.against_autograd
        ]

    def finite_difference_rows(self) -> list[dict]:
        """One row per sampled entry: the manual gradient against the central difference."""
        return [
            {
                "parameter": f.name,
                "entry": str(f.index),
                "status": "pass" if f.rel_error < FD_TOLERANCE else "FAIL",
                "manual": f"{f.analytic:.6g}",
                "finite difference": f"{f.numeric:.6g}",
                "relative error": f"{f.rel_error:.1e}",
            }
            for f in self.finite_diffs
        ]


def gradient_report(lesson: Lesson, per_param: int = 3) -> GradientReport:
    """The lesson's manual gradients against autograd and central differences, in float64.

    The manual pass is rerun in float64 (with the same break toggle) so the comparison measures
    the math, not float32 rounding.
    """
    cfg = lesson.cfg
    params = [
        (np.asarray(W, dtype=np.float64), np.asarray(b, dtype=np.float64)) for W, b in _params_np(lesson)
    ]
    X, y = lesson.batch.X.astype(np.float64), lesson.batch.y
    manual = forward_backward(params, X, y, cfg.activation, break_grad=cfg.break_grad)
    loss, reference = autograd_grads(params, X, y, cfg.activation)
    rows = compare_grads(manual.grads, reference, atol=1e-10, rtol=1e-7)
    fd = finite_differences(
        params, X, y, cfg.activation, grads=manual.grads, per_param=per_param, seed=cfg.seed
    )
    return GradientReport(rows, fd, loss)


def _params_np(lesson: Lesson) -> list[tuple[np.ndarray, np.ndarray]]:
    t = lesson.result.tensors
    L = len(lesson.widths) - 1
    return [(_np(t[f"W{l}"]), _np(t[f"b{l}"])) for l in range(1, L + 1)]


def _np(x) -> np.ndarray:
    return x.detach().cpu().numpy() if torch.is_tensor(x) else np.asarray(x)


def activation_spread(
    inits: Sequence[str] = ("kaiming", "xavier", "normal"),
    activation: str = "relu",
    depth: int = 10,
    width: int = 256,
    n: int = 1000,
    seed: int = 0,
) -> dict[str, list[float]]:
    """Std of each hidden layer's activations in a deep stack, per init scheme, on N(0, 1) input."""
    X = torch.randn(n, width, generator=torch.Generator().manual_seed(seed))
    spread = {}
    with torch.no_grad():
        for init in inits:
            model = MLP(width, [width] * depth, 10, activation=activation, init=init, seed=seed)
            spread[init] = [float(a.std()) for a in model.activations(X)[:-1]]
    return spread


def spread_summary(spread: dict[str, list[float]], activation: str) -> str:
    """What the init plot shows, in two sentences that follow the numbers."""
    labels = {"kaiming": "He", "xavier": "Xavier", "normal": "N(0, 0.02)"}
    change = {init: stds[-1] / stds[0] for init, stds in spread.items()}
    parts = ", ".join(f"×{ratio:.2g} with {labels.get(init, init)}" for init, ratio in change.items())
    stable = [labels.get(i, i) for i, ratio in change.items() if 0.5 <= ratio <= 2]
    depth = len(next(iter(spread.values())))
    why = (
        "He's Var(W) = 2 / fan_in makes up for ReLU-like units zeroing about half their inputs."
        if activation in ("relu", "leaky_relu", "gelu")
        else "Xavier's Var(W) = 2 / (fan_in + fan_out) suits units that are linear near 0, like tanh."
    )
    verdict = (
        f"{' and '.join(stable)} keep{'s' if len(stable) == 1 else ''} the scale stable, so signals and "
        "gradients neither vanish nor explode on their way through the stack."
        if stable
        else "No scheme keeps the scale within ×2 here."
    )
    return f"Across {depth} {activation} layers the activations' std changes {parts}. {verdict} {why}"
