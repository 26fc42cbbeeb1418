"""Forward & backward's walk as a notebook that stands alone: the page's batch and network, every
step of the forward pass and of backprop written out in PyTorch (no autograd), checked against
autograd, then one step of gradient descent; it prints the page's numbers.

The activation and its derivative are the manual engine's own code (mlp.activations), which the
page shows beside its numbers; the batch is made by the page's code where it can be (random rows,
a toy set's generator, the teacher network) and embedded where it can't (MNIST digits).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

import mlp.activations as activations
import mlp.export.pieces as pieces
from mlp.data import MAX_CLASSES, class_count, teacher
from mlp.export.notebook import Notebook, fill, literal, md_link, settings_dict
from mlp.export.playground import UNPACK, generator_code, unpacked

if TYPE_CHECKING:
    from mlp.lessons.forward_backward import Walkthrough

SHOWN = 4  # how many entries of a row the notebook prints (the page shows them in its tables)


def walk_notebook(walk: Walkthrough, link: str) -> Notebook:
    """The walk-through as a notebook; `link`: the page's, set up the same."""
    cfg, batch, widths = walk.cfg, walk.batch, walk.widths
    values: dict[str, object] = {} if cfg.source == "mnist" else {"n": len(batch.y)}  # digits: embedded
    values |= {"d_in": cfg.d_in} if cfg.source == "gaussian" else {}
    values |= {"hidden": cfg.hidden} | ({} if cfg.source == "mnist" else {"k": cfg.k})
    values |= {"seed": cfg.seed, "lr": cfg.lr}
    nb = Notebook()
    nb.md(
        f"# Forward & backward, step by step: a {'-'.join(map(str, widths))} network\n\n"
        "The page's walk in plain PyTorch: the same batch, the same initial weights, every step of "
        "the forward pass and of backprop written out by hand (layer by layer `z = a_prev @ W + b`, "
        "…, then `dz_L = (P − Y) / N`, `dW = a_prevᵀ dz`, …), checked against autograd, then one "
        "step of gradient descent. It prints the numbers the page shows.\n\n"
        f"The same setup on the page: {md_link(link)}"
    )
    first = ("import base64\n" if cfg.source == "mnist" else "") + (
        "import math\n" if cfg.init == "pytorch" else ""
    )
    nb.code(first + IMPORTS.strip())
    nb.code(settings_dict("SETTINGS", values) + f"\nLINK = {literal(link)}  # the page, set up the same")
    nb.md(f"## The batch\n\n{batch.note}")  # the page's own sentence
    nb.code(batch_cell(walk))
    nb.md(
        "## The network\n\n"
        "Initialised as the page initialises it. The notes write each layer's weights as W of shape "
        "(in, out), so that a layer is `X @ W + b`: `nn.Linear` keeps W transposed."
    )
    outputs = {"mnist": "10", "toy": 'max(SETTINGS["k"], CLASSES)'}.get(cfg.source, 'SETTINGS["k"]')
    model = pieces.model_cell(walk_config(walk), "X.shape[1]", outputs, choose=False)
    nb.code(
        model
        + "\n\n"
        + "linears = [layer for layer in model if isinstance(layer, nn.Linear)]\n"
        + "params = [(layer.weight.detach().T, layer.bias.detach()) for layer in linears]  # W (in, out)\n"
        + "L = len(params)  # layers with weights\n"
        + "for l, (W, b) in enumerate(params, start=1):\n"
        + '    print(f"W{l}: {tuple(W.shape)}, b{l}: {tuple(b.shape)}")'
    )
    nb.md(
        "## The activation and its derivative\n\n"
        "The page's own code for f and f′, the same for NumPy and PyTorch (`xp(z)` is the array's own "
        "module): the forward pass calls f, backprop f′."
    )
    nb.code(activation_cell(cfg.activation))
    nb.md(
        "## Forward\n\n"
        "Each layer `z = a_prev @ W + b` (a_0 is X), then `a = f(z)` for a hidden layer; the last z "
        "are the logits. Softmax turns them into probabilities, and the loss is the mean of −log p[y]."
    )
    nb.code(FORWARD)
    nb.md(
        "## Backward\n\n"
        "`dz_L = (P − Y) / N`; then each layer `dW = a_prevᵀ dz`, `db = Σ dz` over the batch, "
        "`da_prev = dz Wᵀ`, and `dz_prev = da_prev * f′(z_prev)`."
    )
    nb.code(BACKWARD)
    nb.md(
        "## Checked against autograd\n\n"
        "The same loss through `nn.Sequential`, `loss.backward()`: the gradients agree."
    )
    nb.code(AUTOGRAD)
    nb.md(
        "## One step of gradient descent\n\n"
        "Every parameter moves by −lr × its gradient; the same batch, the new loss."
    )
    nb.code(UPDATE)
    nb.md("## The numbers the page shows\n\nA few entries of each, as its tables show them.")
    nb.code(fill(SHOW, shown=SHOWN))
    return nb


def walk_config(walk: Walkthrough):
    from mlp.model import ModelConfig

    return ModelConfig(
        walk.widths[0], list(walk.cfg.hidden), walk.widths[-1], walk.cfg.activation, walk.cfg.init
    )


IMPORTS = """
from itertools import pairwise

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
"""


def batch_cell(walk: Walkthrough) -> str:
    cfg, batch = walk.cfg, walk.batch
    if cfg.source == "gaussian":
        return "\n".join(
            [
                'rng = np.random.default_rng(SETTINGS["seed"])',
                'X = rng.standard_normal((SETTINGS["n"], SETTINGS["d_in"])).astype(np.float32)',
                'y = rng.integers(0, SETTINGS["k"], size=SETTINGS["n"]).astype(np.int64)  # random labels',
            ]
        )
    if cfg.source == "toy":
        sources, maker = generator_code(cfg.toy_kind)
        classes = (  # as the page's batch asks: K classes where the set can have them, else 2
            f'min(max(2, SETTINGS["k"]), {MAX_CLASSES})' if class_count(cfg.toy_kind, 3) == 3 else "2"
        )
        return "\n".join(
            [
                *sources,
                "",
                "",
                maker.strip(),
                "",
                "",
                f"CLASSES = {classes}  # the {cfg.toy_kind} set's classes",
                'X, y = make_2d(max(SETTINGS["n"], 2 * CLASSES), 0.1, CLASSES, SETTINGS["seed"])',
                'X, y = X[: SETTINGS["n"]], y[: SETTINGS["n"]]  # the first N points',
            ]
        )
    if cfg.source == "teacher":
        lines = [f"TEACHER_HIDDEN = {teacher.TEACHER_HIDDEN}", f"BALANCE_ROUNDS = {teacher.BALANCE_ROUNDS}"]
        for fn in (teacher.inputs, teacher.teacher_network, teacher.teacher_labels, teacher.teacher_task):
            lines += ["", "", inspect.getsource(fn).strip()]
        lines += ["", "", 'X, y = teacher_task(SETTINGS["n"], 16, SETTINGS["k"], SETTINGS["seed"])']
        return "\n".join(lines)
    return "\n".join(
        [
            UNPACK,
            "",
            "",
            "# The page's digits: MNIST test digits it drew at random, embedded (784 pixels a row)",
            unpacked("images", batch.images.reshape(len(batch.y), -1), "np.uint8, 784"),
            unpacked("y", batch.y, "np.int64"),
            "X = images.astype(np.float32) / 255.0  # pixels in [0, 1]",
        ]
    )


def activation_cell(name: str) -> str:
    row = activations.ACTIVATIONS[name]
    constants = {
        "leaky_relu": [f"LEAKY_SLOPE = {activations.LEAKY_SLOPE}"],
        "gelu": [f"GELU_C, GELU_K = {activations.GELU_C!r}, {activations.GELU_K!r}"],
    }.get(name, [])
    lines = [XP.strip(), "", "", *constants, *([""] * 2 * bool(constants))]
    lines += [inspect.getsource(row.f).strip(), "", "", inspect.getsource(row.grad).strip(), "", ""]
    lines.append(f"f, f_prime = {row.f.__name__}, {row.grad.__name__}")
    return "\n".join(lines)


XP = f'''
def xp(a):
    """{inspect.getdoc(activations.xp)}"""
    return torch if torch.is_tensor(a) else np
'''

FORWARD = """
X_t, y_t = torch.from_numpy(X), torch.from_numpy(y)
N = len(y_t)
z, a = {}, {0: X_t}  # z[l], a[l] of each layer l; a[0] is the batch
for l, (W, b) in enumerate(params, start=1):
    z[l] = a[l - 1] @ W + b  # (N, n_in) @ (n_in, n_out) + (n_out,) -> (N, n_out)
    if l < L:
        a[l] = f(z[l])
logits = z[L]
shifted = logits - logits.amax(dim=1, keepdim=True)  # exp never overflows
probs = torch.exp(shifted) / torch.exp(shifted).sum(dim=1, keepdim=True)  # (N, K): rows sum to 1
log_probs = shifted - torch.log(torch.exp(shifted).sum(dim=1, keepdim=True))  # log-softmax
loss = -log_probs[torch.arange(N), y_t].mean()
print(f"loss: {loss.item():.4f}")
"""

BACKWARD = """
Y = torch.zeros_like(probs)
Y[torch.arange(N), y_t] = 1  # one-hot labels (N, K)
dz, dW, db = {L: (probs - Y) / N}, {}, {}
for l in range(L, 0, -1):
    W = params[l - 1][0]
    dW[l] = a[l - 1].T @ dz[l]  # (n_in, N) @ (N, n_out) -> (n_in, n_out)
    db[l] = dz[l].sum(dim=0)  # the bias touched every row
    if l > 1:
        da = dz[l] @ W.T  # (N, n_out) @ (n_out, n_in) -> (N, n_in)
        dz[l - 1] = da * f_prime(z[l - 1])  # the chain rule through the activation
"""

AUTOGRAD = """
model.zero_grad()
F.cross_entropy(model(X_t), y_t).backward()
gap = max(
    max((dW[l] - layer.weight.grad.T).abs().max().item(), (db[l] - layer.bias.grad).abs().max().item())
    for l, layer in enumerate(linears, start=1)
)
print(f"largest difference from autograd's gradients: {gap:.1e}")
"""

UPDATE = """
lr = SETTINGS["lr"]
new_params = [(W - lr * dW[l], b - lr * db[l]) for l, (W, b) in enumerate(params, start=1)]
h = X_t
for l, (W, b) in enumerate(new_params, start=1):
    h = h @ W + b
    if l < L:
        h = f(h)
shifted = h - h.amax(dim=1, keepdim=True)
log_probs_new = shifted - torch.log(torch.exp(shifted).sum(dim=1, keepdim=True))
loss_new = -log_probs_new[torch.arange(N), y_t].mean()
"""

SHOW = """
def entries(tensor):
    \"\"\"The first row's first few entries, as the page shows them.\"\"\"
    return ", ".join(f"{v:.4f}" for v in tensor[0, :$shown].tolist())


print(f"z1[0]: {entries(z[1])}")
print(f"dW{L}[0]: {entries(dW[L])}")
print(f"dW1[0]: {entries(dW[1])}")
print(f"loss after the step: {loss_new.item():.4f}")
print(f"loss: {loss.item():.4f}")
"""
