"""A playground run as a notebook that stands alone: its data, its network, its training, in
plain PyTorch and NumPy, giving the page's numbers.

Generated points are made by the page's own generator, its source embedded (mlp.data.toy's kind,
make_2d's skeleton, the split): the same seed, the same points. Points from a file or edited by
clicks are embedded as they are, train and test.
"""

from __future__ import annotations

import base64
import inspect
from typing import TYPE_CHECKING

import numpy as np

import mlp.export.pieces as pieces
from mlp.data import MULTICLASS_KINDS, teacher, toy
from mlp.data.features import FEATURES
from mlp.export.notebook import Notebook, fill, literal, md_link, md_text, settings_dict

if TYPE_CHECKING:
    from mlp.runs.playground import Playground


def playground_notebook(run: Playground, link: str) -> Notebook:
    """The run as a notebook; `link` is the page's link to the same setup."""
    s, points, config = run.settings, run.points, run.model.config
    cfg = run.train_config(s)
    embedded = bool(run.edits) or run.data_key != s.data_key  # clicked or uploaded points
    regress = cfg.loss == "mse"
    classes = not embedded and s.kind in MULTICLASS_KINDS  # a count the generator takes
    data = () if embedded else ("n", "noise", *(("classes",) * classes), "test_fraction", "data_seed")
    values = {k: getattr(s, k) for k in data}
    if s.features:
        values["features"] = s.features
    values |= {"hidden": s.hidden, "activation": s.activation}
    values |= {"dropout": s.dropout} if s.dropout else {}
    values |= {"seed": s.seed} | pieces.train_settings(cfg, s.batch_size)
    outputs = "1" if regress else 'SETTINGS["classes"]' if classes else str(points.classes)
    shape = "-".join(str(w) for w in config.widths)
    nb = Notebook()
    nb.md(
        f"# A {shape} network on {md_text(points.name)}\n\n"
        "The 2D playground's run, in plain PyTorch and NumPy: the same points, the same initial "
        "weights, the same batches and updates, so it ends on the numbers the page showed. "
        "Change a setting below and run all the cells again. (The page trains a small network with "
        "NumPy, whose last bits round differently from PyTorch's: on a chaotic run, a very large "
        "step, the numbers can part.)\n\n"
        f"The same setup on the page: {md_link(link)}"
        + (
            f"\n\nThe page's run went on after: {run.altered}; this notebook trains from the start."
            if run.altered
            else ""
        )
        + (
            f"\n\nThe page trained with {ENGINES.get(s.engine, s.engine)}; this notebook with "
            "autograd: the numbers agree to about 1e-6."
            if s.engine != "autograd"
            else ""
        )
    )
    nb.code(imports(regress, embedded))
    nb.code(settings_dict("SETTINGS", values) + f"\nLINK = {literal(link)}  # the page, set up the same")
    nb.md(data_markdown(s.kind, embedded, md_text(points.name)))
    nb.code(data_cell(s.kind, embedded, points, regress))
    if s.features:
        nb.md("Besides x1 and x2, the network takes the features chosen: each a function of the point.")
    nb.code(inputs_cell(bool(s.features), regress))
    nb.md(
        "## The model\n\n"
        "Each hidden layer computes `Z = X W + b` and its activation; the last layer's outputs are "
        + (
            "the prediction: one real value."
            if regress
            else "the logits, one per class; softmax turns them into probabilities."
        )
    )
    nb.code(pieces.model_cell(config, "train_inputs.shape[1]", outputs))
    nb.md(
        LOSS_MD["mse" if regress else "cross_entropy"]
        + (" Plus L2's penalty λ₂·Σw² over the weights." if cfg.l2 else "")
        + (" With L1, each step ends with L1's shrink of the weights (below)." if cfg.l1 else "")
        + (
            " The train loss printed includes the penalties; the test loss is the data loss alone, "
            "as on the page."
            if cfg.l1 or cfg.l2
            else ""
        )
    )
    pieces.add_training(nb, cfg, bool(s.dropout), cfg.threads, "points")
    nb.md(
        "## What it learned\n\n"
        + (
            "The network's value across the plane, and the points."
            if regress
            else "The network's class across the plane (its decision boundary), and the points."
        )
    )
    nb.code(boundary_cell(regress, bool(s.features)))
    nb.md("The numbers the page shows for this run:")
    nb.code(pieces.shown_cell(regress))
    return nb


ENGINES = {"manual": "backprop written by hand (the manual engine)"}
LOSS_MD = {
    "cross_entropy": "## The loss\n\nSoftmax cross-entropy: −log of the probability the network gives "
    "the right class, averaged over the batch.",
    "mse": "## The loss\n\nThe mean squared error between the network's output and each point's value.",
}


def imports(regress: bool, embedded: bool) -> str:
    lines = ["import base64" if embedded else None, "import math", "import sys"]
    lines += ["from itertools import pairwise", "", "import numpy as np"]
    lines += [
        "import plotly.graph_objects as go",
        "import torch",
        None if regress else "import torch.nn.functional as F",
        "from torch import nn",
    ]
    return "\n".join(line for line in lines if line is not None)


def data_markdown(kind: str, embedded: bool, name: str) -> str:
    if embedded:
        return (
            f"## The data\n\n{name}: the points the page trained on (from a file, or placed and erased by "
            "clicks), embedded below as they were, split into training and test points."
        )
    return (
        f"## The data\n\nThe page's own generator for {kind}, seeded: the same points, the same "
        "train/test split (stratified: each class keeps its share of both)."
    )


def data_cell(kind: str, embedded: bool, points, regress: bool) -> str:
    if embedded:
        return "\n".join(
            [
                UNPACK,
                "",
                "",
                unpacked("X_train", points.X_train, "np.float32, 2"),
                unpacked("y_train", points.y_train, "np.float32" if regress else "np.int64"),
                unpacked("X_test", points.X_test, "np.float32, 2"),
                unpacked("y_test", points.y_test, "np.float32" if regress else "np.int64"),
                'print(f"{len(y_train)} training points, {len(y_test)} test points")',
            ]
        )
    sources, maker = generator_code(kind)
    count = 'SETTINGS["classes"]' if kind in MULTICLASS_KINDS else "2"  # the classes the set can have
    split = [inspect.getsource(toy.task_of_labels).strip(), "", "", inspect.getsource(toy.split).strip()]
    return "\n".join(
        [
            *sources,
            "",
            "",
            maker.strip(),
            "",
            "",
            *split,
            "",
            "",
            f'X, y = make_2d(SETTINGS["n"], SETTINGS["noise"], {count}, SETTINGS["data_seed"])',
            'train, test = split(X, y, SETTINGS["test_fraction"], seed=SETTINGS["data_seed"])',
            "(X_train, y_train), (X_test, y_test) = train, test",
            'print(f"{len(y_train)} training points, {len(y_test)} test points")',
        ]
    )


def generator_code(kind: str) -> tuple[list[str], str]:
    """(the lines defining `kind`'s generator, from the library's own source; `make_2d(n, noise,
    classes, seed)`, make_2d's skeleton around it): the page's points, made the same way."""
    if kind in toy.REGRESSION_KINDS:
        sources = [
            "# TensorFlow Playground's regression sets' constants",
            f"GAUSSIANS = {toy.GAUSSIANS!r}",
            f"TF_RADIUS = {toy.TF_RADIUS!r}",
            "",
            "",
            inspect.getsource(toy._regression).strip(),
        ]
        maker = fill(
            '''
def make_2d(n, noise, classes, seed):
    """`n` points and their values, as the page makes them."""
    return _regression("$kind", n, noise, np.random.default_rng(seed))
''',
            kind=kind,
        )
    else:
        sources = []
        if kind == "teacher":
            sources += [
                f"TEACHER_HIDDEN = {teacher.TEACHER_HIDDEN}",
                f"BALANCE_ROUNDS = {teacher.BALANCE_ROUNDS}",
                "",
            ]
            for fn in (teacher.inputs, teacher.teacher_network, teacher.teacher_labels, teacher.teacher_task):
                sources += ["", inspect.getsource(fn).strip(), ""]
            sources.append("")
        sources.append(inspect.getsource(toy.GENERATORS[kind]).strip())
        maker = fill(
            '''
def make_2d(n, noise, classes, seed):
    """`n` points and their labels, as the page makes them."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes  # balanced: class sizes differ by at most one
    u = rng.uniform(size=n)  # one uniform draw per point
    X, y = $kind(y, u, noise, classes, seed, rng)
    order = rng.permutation(n)  # shuffled
    return X[order].astype(np.float32), y[order].astype(np.int64)
''',
            kind=kind,
        )
    return sources, maker


UNPACK = '''def unpack(text, dtype, columns=None):
    """An array the page embedded: its bytes in base64."""
    array = np.frombuffer(base64.b64decode(text), dtype=dtype).copy()  # writable
    return array if columns is None else array.reshape(-1, columns)'''  # what `unpacked` calls


def unpacked(name: str, array: np.ndarray, args: str) -> str:
    """`name = unpack("<base64 of the array's bytes>", args)`, in lines a reader's editor can take."""
    text = base64.b64encode(np.ascontiguousarray(array).tobytes()).decode()
    rows = "\n".join(f'    "{text[i : i + 76]}"' for i in range(0, len(text), 76)) or '    ""'
    return f"{name} = unpack(\n{rows},\n" + "".join(f"    {arg.strip()},\n" for arg in args.split(",")) + ")"


def inputs_cell(features: bool, regress: bool) -> str:
    lines = []
    if features:
        rows = "\n".join(f'    "{name}": lambda x1, x2: {f.code},' for name, f in FEATURES.items())
        lines += [
            f"FEATURES = {{  # each a function of the point (x1, x2)\n{rows}\n}}",
            "",
            "",
            "def with_features(X):",
            '    """(N, 2) points -> the network\'s inputs: x1, x2, then each chosen feature."""',
            "    x1, x2 = X[:, 0], X[:, 1]",
            '    extra = [FEATURES[name](x1, x2) for name in SETTINGS["features"]]',
            "    return np.column_stack([X, *extra]).astype(X.dtype, copy=False)",
            "",
            "",
        ]
    inputs = "with_features({})" if features else "{}"
    lines += [
        f"train_inputs = torch.from_numpy({inputs.format('X_train')})",
        f"test_inputs = torch.from_numpy({inputs.format('X_test')})",
        "train_labels, test_labels = torch.from_numpy(y_train), torch.from_numpy(y_test)",
        pieces.sizes_code(),
    ]
    return "\n".join(lines)


def boundary_cell(regress: bool, features: bool) -> str:
    z = (
        "z = model(grid_inputs)[:, 0].numpy()  # the value at each grid point"
        if regress
        else "z = model(grid_inputs).argmax(1).numpy()  # the class at each grid point"
    )
    heat = (
        "fig = go.Figure(\n"
        '    go.Heatmap(x=side, y=side, z=z.reshape(len(side), -1), colorscale="RdBu", zmid=0, opacity=0.6)\n'
        ")"
        if regress
        else "fig = go.Figure(\n"
        '    go.Heatmap(x=side, y=side, z=z.reshape(len(side), -1), colorscale="Turbo", showscale=False, '
        "opacity=0.35)\n"
        ")"
    )
    points = (
        "fig.add_scatter(\n"
        "    x=X_train[:, 0],\n"
        "    y=X_train[:, 1],\n"
        '    mode="markers",\n'
        '    name="train",\n'
        '    marker={"color": y_train, "colorscale": "RdBu", "cmid": 0},\n'
        ")"
        if regress
        else "for k in range(int(y_train.max()) + 1):\n"
        "    mine = y_train == k\n"
        '    fig.add_scatter(x=X_train[mine, 0], y=X_train[mine, 1], mode="markers", name=f"class {k}")'
    )
    inputs = "with_features(grid)" if features else "grid"
    return fill(
        """
extent = 1.1 * float(np.abs(np.concatenate([X_train, X_test])).max())
side = np.linspace(-extent, extent, 150, dtype=np.float32)
grid = np.stack(np.meshgrid(side, side), axis=-1).reshape(-1, 2)  # (150², 2): every point of the plane
grid_inputs = torch.from_numpy($inputs)
model.eval()
with torch.no_grad():
    $z
$heat
$points
$title
fig.update_layout(width=600, height=600, title=title)
"""
        + pieces.SHOW_FIGURE,
        inputs=inputs,
        z=z,
        heat=heat,
        points=points,
        title=(
            'title = "the loss exploded" if shown is None else '
            + (
                'f"epoch {len(history)}: test MSE {shown[1]:.4f}"'
                if regress
                else 'f"epoch {len(history)}: test accuracy {shown[2]:.1%}"'
            )
        ),
        name="boundary.html",
    )
