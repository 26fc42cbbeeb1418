"""Every run as a notebook that stands alone (mlp.export): exported, run with `python -I` in a
folder of its own (the project not importable), it prints the library's numbers.

The notebook is written in PyTorch, so it is held to the library's torch path (the engine's
autograd steps, fused optimizers): the train loss and the test accuracy the page shows (4
decimals), for every lesson's and challenge's playground setup and a setup for each option.
A small network on the page trains on the NumPy fast path, whose rounding differs from torch's
in the last bits; how often that shows at 4 decimals is printed, not asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from mlp.curriculum.catalogue import LESSONS
from mlp.curriculum.challenges import CHALLENGES
from mlp.data import PLANE_KINDS, class_count
from mlp.data.edits import Edits
from mlp.data.features import FEATURES
from mlp.export.notebook import Notebook
from mlp.export.pieces import model_code
from mlp.export.playground import playground_notebook
from mlp.lessons import playground as pg
from mlp.runs.playground import Playground

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "tests" / "export_runner.py"


def playground_setups() -> dict[str, tuple[pg.Settings, Edits | None]]:
    """Every playground setup a lesson or a challenge opens, and one for each option."""
    queries = {}
    for lesson in LESSONS.values():
        for i, setup in enumerate([lesson.setup, *(s for _, s in lesson.compare)]):
            if setup.page == "playground":
                queries[f"{lesson.key}-{i}"] = setup.query
    for challenge in CHALLENGES.values():
        if challenge.page == "playground":
            queries[f"{challenge.key}-start"] = challenge.start.query
            queries[f"{challenge.key}-solution"] = challenge.solution.query
    setups = {name: (pg.from_query(query)[0], None) for name, query in queries.items()}
    short = pg.Settings(epochs=30, batch_size=64)
    options = {
        "default": pg.Settings(),
        "features-dropout-l2": replace(short, features=("x1sq", "x1x2", "sinx2"), dropout=0.2, l2=0.003),
        "adam-l1-cosine-warmup": replace(short, l1=0.003, scheduler="cosine", warmup_epochs=5),
        "rmsprop-l1-clip": replace(short, optimizer="rmsprop", l1=0.01, grad_clip=0.5),
        "nesterov-step-decay": replace(
            short, optimizer="nesterov", lr=0.1, scheduler="step", weight_decay=1e-3
        ),
        "momentum-step-every": replace(
            short, optimizer="momentum", lr=0.1, scheduler="step", warmup_epochs=3
        ),
        "adamw-xavier-gelu": replace(
            short, optimizer="adamw", weight_decay=0.01, init="xavier", activation="gelu"
        ),
        "sgd-pytorch-init-silu": replace(short, optimizer="sgd", lr=0.3, init="pytorch", activation="silu"),
        "normal-init-sigmoid-manual": replace(short, init="normal", activation="sigmoid", engine="manual"),
        "reg-plane": replace(short, kind="reg-plane", classes=2, hidden=(8,)),
        "blobs-5": replace(short, kind="blobs", classes=5),
    }
    setups |= {name: (settings, None) for name, settings in options.items()}
    setups["edited-by-clicks"] = (replace(short, kind="moons", classes=2), Edits(((0.2, 0.9, 1),), (0, 5)))
    return setups


def library_run(settings: pg.Settings, edits: Edits | None, fast: bool) -> Playground:
    """The run as the library trains it: the page's (`fast`: the NumPy path where it applies) or
    the torch path's, trained to its end."""
    run = Playground(settings, pg.make_points(settings))
    if edits:
        run.edit(edits)
    if not fast:
        run.comparing = True  # what compare mode does to the run's own trainer: the torch path
        run.reset()
    run.run(10**9)
    return run


def run_scripts(folders: list[Path]) -> dict[str, str]:
    """Each folder's run.py run in one `python -I` (the project not importable): its output."""
    done = subprocess.run(
        [sys.executable, "-I", str(RUNNER), *map(str, folders)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=folders[0],
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def printed(output: str) -> dict[str, str]:
    """The `name: value` lines a script prints at its end."""
    return dict(line.split(": ", 1) for line in output.splitlines() if ": " in line and "epoch" not in line)


def shown(run: Playground) -> dict[str, str]:
    """What the script's last lines must read: the page's numbers at 4 decimals."""
    last = run.trainer.history.epochs[-1]
    if run.trainer.cfg.loss == "mse":
        return {"train MSE": f"{last.train_loss:.4f}", "test MSE": f"{last.val_loss:.4f}"}
    return {"train loss": f"{last.train_loss:.4f}", "test accuracy": f"{last.val_acc:.4f}"}


@pytest.mark.slow
def test_every_playground_setup_as_a_script_prints_the_librarys_numbers(tmp_path):
    setups = playground_setups()
    folders, expected, page = [], {}, {}
    for name, (settings, edits) in setups.items():
        run = library_run(settings, edits, fast=False)
        expected[name] = shown(run)
        page[name] = shown(library_run(settings, edits, fast=True))
        folder = tmp_path / name
        folder.mkdir()
        (folder / "run.py").write_text(playground_notebook(run, "http://localhost:8501/playground").script())
        folders.append(folder)
    outputs = run_scripts(folders)
    wrong, same_as_page = [], 0
    for name, folder in zip(setups, folders, strict=True):
        out = outputs[str(folder)]
        numbers = printed(out)
        last = out.strip().splitlines()[-1]
        if any(numbers.get(k) != v for k, v in expected[name].items()) or not last.startswith("test "):
            wrong.append(f"{name}: library {expected[name]}, script {numbers}\n{out[-600:]}")
        same_as_page += all(numbers.get(k) == v for k, v in page[name].items())
    print(f"\n{len(setups)} setups; the page's NumPy-path numbers shown alike in {same_as_page}")
    assert not wrong, "\n".join(wrong)


def test_the_scripts_are_ruff_clean_and_formatted(tmp_path):
    ruff = [sys.executable, "-m", "ruff"]
    for name, (settings, edits) in list(playground_setups().items())[-12:]:
        run = Playground(settings, pg.make_points(settings))
        if edits:
            run.edit(edits)
        (tmp_path / f"{name}.py").write_text(playground_notebook(run, "http://x/playground?a=1").script())
    check = subprocess.run([*ruff, "check", "--isolated", str(tmp_path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
    form = subprocess.run(
        [*ruff, "format", "--isolated", "--line-length", "110", "--diff", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert form.returncode == 0, form.stdout[-3000:]


@pytest.mark.parametrize("kind", PLANE_KINDS)
def test_the_notebooks_data_cell_makes_the_pages_points(kind):
    if True:
        settings = pg.Settings(kind=kind, classes=class_count(kind, 3), n=300, noise=0.2, data_seed=4)
        run = Playground(settings, pg.make_points(settings))
        cells = dict(enumerate(playground_notebook(run, "").cells))
        data = next(src for kind_, src in cells.values() if kind_ == "code" and "make_2d" in src)
        settings_cell = next(
            src for kind_, src in cells.values() if kind_ == "code" and "SETTINGS = {" in src
        )
        space: dict = {"np": np}
        exec(settings_cell, space)
        exec(data, space)
        for name in ("X_train", "y_train", "X_test", "y_test"):
            assert np.array_equal(space[name], getattr(run.points, name)), (kind, name)
            assert space[name].dtype == getattr(run.points, name).dtype


def test_each_features_code_is_its_function():
    x1, x2 = np.random.default_rng(0).normal(size=(2, 50)).astype(np.float32)
    for feature in FEATURES.values():
        assert np.array_equal(eval(f"lambda x1, x2: {feature.code}", {"np": np})(x1, x2), feature.of(x1, x2))


def test_copy_as_code_is_the_network_with_its_weights_in_place():
    settings = pg.Settings(hidden=(5, 7), activation="leaky_relu", dropout=0.1)
    run = Playground(settings, pg.make_points(settings))
    space: dict = {}
    exec(model_code(run.model.config), space)
    model = space["model"]
    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    for mine, theirs in zip(linears, run.model.layers, strict=True):
        mine.load_state_dict(theirs.state_dict())
    X = torch.randn(9, 2)
    model.eval(), run.model.eval()
    assert torch.equal(model(X), run.model(X))


def test_the_notebook_has_a_markdown_cell_per_idea_and_runs_as_the_script_does():
    run = Playground(pg.Settings(), pg.make_points(pg.Settings()))
    nb = playground_notebook(run, "http://localhost:8501/playground?data=spiral")
    notebook = json.loads(nb.ipynb())
    assert notebook["nbformat"] == 4
    titles = [c["source"][0] for c in notebook["cells"] if c["cell_type"] == "markdown"]
    for idea in ("## The data", "## The model", "## The loss", "## The optimizer", "## Training"):
        assert any(t.startswith(idea) for t in titles), titles
    code = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    assert "import mlp" not in code and "from mlp" not in code
    assert "http://localhost:8501/playground?data=spiral" in code
    assert [s for k, s in nb.cells if k == "code"] == [s for k, s in Notebook(nb.cells).cells if k == "code"]


@pytest.mark.slow
def test_the_notebook_executes_in_a_kernel_and_ends_on_the_pages_accuracy(tmp_path):
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    settings = pg.Settings(kind="moons", classes=2, hidden=(8, 8), activation="tanh", lr=0.03, epochs=300)
    run = library_run(settings, None, fast=True)
    notebook = nbformat.reads(playground_notebook(run, "").ipynb(), as_version=4)
    nbclient.NotebookClient(notebook, timeout=600, resources={"metadata": {"path": str(tmp_path)}}).execute()
    last = notebook.cells[-1].outputs[-1]["text"].strip().splitlines()[-1]
    assert last == f"test accuracy: {run.trainer.history.epochs[-1].val_acc:.4f}"
