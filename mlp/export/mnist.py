"""An MNIST run as a notebook that stands alone: the run's own digits, its network, its training.

The bundled sample's two files are embedded as they ship (gzip, base64, each with its MD5) and
split as the app splits them; the full set is fetched from the app's mirrors, each file's MD5
checked, into a folder beside the notebook, with a sentence saying what to do when offline.
"""

from __future__ import annotations

import base64
import inspect
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

import mlp.export.pieces as pieces
from mlp.data import mnist, toy
from mlp.data.download import RemoteFile
from mlp.data.mnist import VAL_FRACTION
from mlp.export.notebook import Notebook, fill, literal, md_link, settings_dict

if TYPE_CHECKING:
    from mlp.runs.mnist import MnistRun


def mnist_notebook(
    run: MnistRun,
    link: str,
    mirrors: Sequence[str] = mnist.MIRRORS,
    files: Mapping[str, RemoteFile] = mnist.MNIST_FILES,
) -> Notebook:
    """The run as a notebook; `link`: the page's, set up the same (`mirrors` and `files`: where
    the full set comes from, the app's by default)."""
    s, data, config = run.settings, run.data, run.model.config
    cfg = run.train_cfg
    values = {"hidden": s.hidden, "activation": s.activation}
    values |= {"dropout": s.dropout} if s.dropout else {}
    values |= {"seed": s.seed} | pieces.train_settings(cfg)
    shape = "-".join(str(w) for w in config.widths)
    kept = 0 if data.hidden is None else len(data.hidden[1])  # a challenge's test digits held back
    digits = f"{len(data.y_train) + len(data.y_test) + kept:,} digits"
    what = {
        "sample": f"the bundled sample of {digits}",
        "mnist": "the full MNIST",
        "synthetic": "random digits",
    }
    nb = Notebook()
    intro = (
        f"# A {shape} network on {what[data.source]}\n\n"
        "The MNIST page's run, in plain PyTorch and NumPy: the same digits, the same initial weights, "
        "the same batches and updates, on the CPU. Change a setting below and run all the cells again.\n\n"
        f"The same setup on the page: {md_link(link)}"
    )
    if kept:
        intro += (
            f"\n\nA challenge's run: the page keeps {kept:,} of the test digits back for the class "
            "board, and which ones is the board's secret. So this notebook scores no test digit (all of "
            "them, beside the page's score, would give away the hidden ones'): it ends on the validation "
            "accuracy."
        )
    if cfg.amp or cfg.compile or run.trainer.device.type != "cpu":
        intro += (
            "\n\nThe page's run asked for a GPU, mixed precision or torch.compile; this notebook "
            "trains plainly on the CPU (the numbers then differ in their last digits)."
        )
    nb.md(intro)
    nb.code(imports(data.source))
    nb.code(settings_dict("SETTINGS", values) + f"\nLINK = {literal(link)}  # the page, set up the same")
    nb.md(DATA_MD[data.source])
    nb.code(data_cell(data, mirrors, files))
    nb.md(
        f"{VAL_FRACTION:.0%} of the training digits are held out to watch over-fitting as training goes "
        "(the validation digits); "
        + (
            "the test digits are not scored here (see above)."
            if kept
            else "the test digits are scored once, at the end."
        )
        + " Each image's 784 pixels become one row of numbers in [0, 1]."
    )
    nb.code(inputs_cell())
    nb.md(
        "## The model\n\n"
        "Each hidden layer computes `Z = X W + b` and its activation; the last layer's ten outputs are "
        "the logits, one per digit; softmax turns them into probabilities."
    )
    nb.code(pieces.model_cell(config, "784", "10"))
    nb.md(
        "## The loss\n\nSoftmax cross-entropy: −log of the probability the network gives the right "
        "digit, averaged over the batch."
    )
    pieces.add_training(nb, cfg, bool(s.dropout), run.trainer.threads or None, "digits", scored="val")
    nb.md("## The curves\n\nThe training and validation loss, epoch by epoch.")
    nb.code(CURVES + pieces.SHOW_FIGURE.replace("$name", "curves.html"))
    if kept:
        nb.md("## The numbers\n\nThe last sound epoch's train loss and validation accuracy.")
        nb.code(VALIDATION)
    else:
        nb.md("## The test digits\n\nScored once, now that training is over: the numbers the page shows.")
        nb.code(TEST)
    return nb


DATA_MD = {
    "sample": "## The data\n\nThe page's bundled sample of real MNIST digits, embedded below as it "
    "ships (two gzipped IDX files, each checked against its MD5), split into training and test digits "
    "as the app splits them (stratified: each digit keeps its share of both).",
    "mnist": "## The data\n\nThe full MNIST (60,000 training and 10,000 test digits), fetched from the "
    "mirrors the app uses, each file checked against its MD5, and kept in a folder beside this "
    "notebook.",
    "synthetic": "## The data\n\nRandom images and labels of MNIST's size, made from a seed: a "
    "benchmark's digits, for speed, not for learning.",
}


def imports(source: str) -> str:
    lines = {
        "sample": [
            "import base64",
            "import gzip",
            "import hashlib",
            "import math",
            "import struct",
            "import sys",
        ],
        "mnist": [
            "import gzip",
            "import hashlib",
            "import math",
            "import struct",
            "import sys",
            "import urllib.request",
        ],
        "synthetic": ["import math", "import sys"],
    }[source]
    lines += ["from itertools import pairwise"]
    lines += ["from pathlib import Path"] if source == "mnist" else []
    lines += ["", "import numpy as np", "import plotly.graph_objects as go", "import torch"]
    lines += ["import torch.nn.functional as F", "from torch import nn"]
    return "\n".join(lines)


READ_IDX = '''
def read_idx(data):
    """An IDX file's array: 4 bytes of magic (the last one says how many dimensions), each
    dimension as a big-endian 32-bit count, then one byte a pixel or label."""
    dims = struct.unpack_from(f">{data[3]}I", data, 4)
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * data[3]).reshape(dims).copy()  # writable
'''


def data_cell(data, mirrors: Sequence[str], files: Mapping[str, RemoteFile]) -> str:
    split = [
        inspect.getsource(toy.task_of_labels).strip(),
        "",
        "",
        inspect.getsource(toy.split).strip(),
        "",
        "",
    ]
    if data.source == "synthetic":
        n_train, n_test = len(data.y_train), len(data.y_test)
        body = [
            "rng = np.random.default_rng(0)",
            f"x_train = rng.integers(0, 256, ({n_train}, 28, 28), dtype=np.uint8)",
            f"x_test = rng.integers(0, 256, ({n_test}, 28, 28), dtype=np.uint8)",
            f"y_train, y_test = rng.integers(0, 10, {n_train}), rng.integers(0, 10, {n_test})",
        ]
        return "\n".join([*split, *body, *holdout()])
    if data.source == "sample":
        embedded = []
        for role, (name, md5) in mnist.SAMPLE_FILES.items():
            text = sample_file_text(name)
            embedded.append(
                f'# {name}: its MD5, its bytes (base64)\n{role.upper()} = (\n    "{md5}",\n    "{text}",\n)'
            )
        body = [
            *embedded,
            "",
            "",
            READ_IDX.strip(),
            "",
            "",
            "def unpack(md5, text):",
            '    """An embedded file\'s array, once its bytes are checked against its MD5."""',
            "    data = base64.b64decode(text)",
            '    assert hashlib.md5(data).hexdigest() == md5, "the embedded file is damaged"',
            "    return read_idx(gzip.decompress(data))",
            "",
            "",
            *split,
            "images, labels = unpack(*IMAGES), unpack(*LABELS).astype(np.int64)",
            f"train, test = split(images, labels, {mnist.SAMPLE_TEST_FRACTION}, seed=0)  # as the app does",
            "(x_train, y_train), (x_test, y_test) = train, test",
        ]
        return "\n".join([*body, *holdout()])
    rows = "\n".join(
        f"    {literal(role)}: ({literal(f.name)}, {literal(f.md5)})," for role, f in files.items()
    )
    body = fill(
        '''
MIRRORS = $mirrors  # the app's, tried in turn
FILES = {  # each file's name and MD5
$rows
}
FOLDER = Path("mnist-data")  # beside this notebook: downloaded once


def fetch(name, md5):
    """A file's bytes: from FOLDER, else from the first mirror that serves it with its MD5."""
    path = FOLDER / name
    if path.exists() and hashlib.md5(path.read_bytes()).hexdigest() == md5:
        return path.read_bytes()
    why = "no mirror answered"
    for mirror in MIRRORS:
        try:
            with urllib.request.urlopen(mirror + name, timeout=30) as response:
                data = response.read()
        except OSError as err:
            why = f"{mirror} said: {err}"
            continue
        if hashlib.md5(data).hexdigest() == md5:
            FOLDER.mkdir(exist_ok=True)
            path.write_bytes(data)
            return data
        why = f"{mirror} sent a file whose MD5 is not MNIST's"
    sys.exit(
        f"Could not download {name} ({why}). Offline? Put MNIST's four files in "
        f"{FOLDER.resolve()} and run this again."
    )
''',
        mirrors=literal(list(mirrors)),
        rows=rows,
    ).strip()
    read = [
        "",
        "",
        READ_IDX.strip(),
        "",
        "",
        "digits = {role: read_idx(gzip.decompress(fetch(*file))) for role, file in FILES.items()}",
        'x_train, y_train = digits["train_images"], digits["train_labels"].astype(np.int64)',
        'x_test, y_test = digits["test_images"], digits["test_labels"].astype(np.int64)',
        "",
        "",
    ]
    return "\n".join([body, *read, *split, *holdout()])


@cache
def sample_file_text(name: str) -> str:
    """A bundled sample file's bytes in base64: read and encoded once a process (1.1 MB)."""
    return base64.b64encode(
        (resources.files("mlp.data") / "assets" / "mnist-sample" / name).read_bytes()
    ).decode()


def holdout() -> list[str]:
    return [
        f"(x_train, y_train), (x_val, y_val) = split(x_train, y_train, {VAL_FRACTION}, seed=0)  # held out",
        'print(f"{len(y_train):,} training, {len(y_val):,} validation and {len(y_test):,} test digits")',
    ]


def inputs_cell() -> str:
    lines = [
        "def as_rows(images):",
        '    """(N, 28, 28) uint8 pixels -> (N, 784) float32 in [0, 1]."""',
        "    return torch.from_numpy(images).reshape(len(images), 784).float().mul_(1 / 255)",
        "",
        "",
        "train_inputs, train_labels = as_rows(x_train), torch.from_numpy(y_train)",
        "val_inputs, val_labels = as_rows(x_val), torch.from_numpy(y_val)",
        "test_inputs, test_labels = as_rows(x_test), torch.from_numpy(y_test)",
        pieces.sizes_code(),
    ]
    return "\n".join(lines)


CURVES = """
epochs = [epoch for epoch, *_ in history]
fig = go.Figure()
fig.add_scatter(x=epochs, y=[train for _, train, _, _ in history], name="train loss")
fig.add_scatter(x=epochs, y=[val for _, _, val, _ in history], name="validation loss")
fig.update_layout(xaxis_title="epoch", yaxis_title="cross-entropy", width=700, height=400)
"""

VALIDATION = """
if shown is None:
    print("the loss exploded in the first epoch: no epoch to show")
else:
    print(f"train loss: {shown[0]:.4f}")
    print(f"val accuracy: {shown[2]:.4f}")
"""

TEST = """
if shown is None:
    print("the loss exploded in the first epoch: no epoch to show")
else:
    _, test_accuracy = evaluate(test_inputs, test_labels)
    print(f"train loss: {shown[0]:.4f}")  # the last epoch that trained soundly, as the page shows
    print(f"test accuracy: {test_accuracy:.4f}")
"""
