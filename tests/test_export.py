"""Every run as a notebook that stands alone (mlp.export): exported, run with `python -I` in a
folder of its own (the project not importable), it prints the library's numbers.

The notebook is written in PyTorch, so it is held to the library's torch path (the engine's
autograd steps, fused optimizers): the train loss and the test accuracy the page shows (4
decimals), for every lesson's and challenge's playground setup and a setup for each option.
A small network on the page trains on the NumPy fast path, whose rounding differs from torch's
in the last bits: on 38 of these 43 setups the page's train loss and test accuracy show alike
(measured once, README "Take the run home"; not asserted: the fast path's rounding, not the
notebook's).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_limits

from mlp.activations import ACTIVATIONS
from mlp.curriculum.catalogue import LESSONS
from mlp.curriculum.challenges import CHALLENGES
from mlp.data import PLANE_KINDS, class_count
from mlp.data.edits import Edits
from mlp.data.features import FEATURES
from mlp.data.mnist import load_mnist, load_sample
from mlp.export.mnist import mnist_notebook
from mlp.export.notebook import Notebook
from mlp.export.pieces import model_code
from mlp.export.playground import playground_notebook
from mlp.export.walk import walk_notebook
from mlp.lessons import forward_backward as fb
from mlp.lessons import mnist as mn
from mlp.lessons import playground as pg
from mlp.model import INITS
from mlp.runs.mnist import MnistRun
from mlp.runs.playground import Playground
from mlp.train.fastpath.choice import switch_path
from tests.test_mnist import fake_mnist, files_for
from tests.test_mnist_download import Mirror, body

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


def run_scripts(tmp_path: Path, scripts: dict[str, str]) -> dict[str, str]:
    """Each script as run.py in a folder of its own, all run in one `python -I` (the project not
    importable): each one's output, by name. (One process: a process per core was tried, and
    scripts that keep torch's default threads ran beside each other on too few cores, slower.)"""
    folders = {name: tmp_path / name for name in scripts}
    for name, folder in folders.items():
        folder.mkdir()
        (folder / "run.py").write_text(scripts[name])
    done = subprocess.run(
        [sys.executable, "-I", str(RUNNER), *map(str, folders.values())],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outputs = json.loads(done.stdout)
    return {name: outputs[str(folder)] for name, folder in folders.items()}


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
    scripts, expected = {}, {}
    for name, (settings, edits) in setups.items():
        run = library_run(settings, edits, fast=False)
        expected[name] = shown(run)
        scripts[name] = playground_notebook(run, "http://localhost:8501/playground").script()
    outputs = run_scripts(tmp_path, scripts)
    wrong = []
    for name in setups:
        out = outputs[name]
        numbers = printed(out)
        last = out.strip().splitlines()[-1]
        if any(numbers.get(k) != v for k, v in expected[name].items()) or not last.startswith("test "):
            wrong.append(f"{name}: library {expected[name]}, script {numbers}\n{out[-600:]}")
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


# --- MNIST -------------------------------------------------------------------------------------


def mnist_setups() -> dict[str, mn.MnistSettings]:
    """Every MNIST setup a lesson or a challenge opens (on the CPU), and one for each option."""
    queries = {
        f"{lesson.key}-{i}": setup.query
        for lesson in LESSONS.values()
        for i, setup in enumerate([lesson.setup, *(s for _, s in lesson.compare)])
        if setup.page == "mnist"
    }
    for challenge in CHALLENGES.values():
        if challenge.page == "mnist":
            queries[f"{challenge.key}-start"] = challenge.start.query
            queries[f"{challenge.key}-solution"] = challenge.solution.query
    setups = {name: replace(mn.from_query(query)[0], device="cpu") for name, query in queries.items()}
    base = mn.MnistSettings(device="cpu", epochs=3)
    return setups | {
        "dropout-momentum": replace(base, dropout=0.2, optimizer="momentum", lr=0.03),
        "wide-cosine-warmup": replace(
            base, hidden=(256, 64), scheduler="cosine", warmup_epochs=1, batch_size=64
        ),
        "tanh-clip-adamw-step": replace(
            base, activation="tanh", grad_clip=1.0, weight_decay=1e-3, optimizer="adamw", scheduler="step"
        ),
    }


def mnist_run(data, settings: mn.MnistSettings, fast: bool = True) -> MnistRun:
    """The run as the page's job trains it, to its end and evaluated, on a job's share of a
    server's threads: NumPy's BLAS and torch on one (pages/serving/jobs.py: 1 on 2 cores; a lone
    job may get every core). A BLAS on 2 threads moves a near tie in the test digits: the last
    digits differ from a script's. `fast=False`: on the torch path, as the playground's
    library_run (the page's network takes the NumPy path where it applies)."""
    with threadpool_limits(limits=1, user_api="blas"):
        run = MnistRun(data, settings, threads=1)
        if not fast:
            switch_path(run.trainer, fast_path=False)
        while not run.finished:
            run.advance(1.0)
        run.finish()
    return run


def mnist_shown(run: MnistRun) -> dict[str, str]:
    return {
        "train loss": f"{run.trainer.history.epochs[-1].train_loss:.4f}",
        "test accuracy": f"{run.evaluation.accuracy:.4f}",
    }


@pytest.mark.slow
def test_every_mnist_setup_as_a_script_prints_the_librarys_numbers(tmp_path):
    """Held to the torch path, as the playground's scripts are. The page's network mostly takes
    the NumPy path, whose kernels round otherwise in the last bits: how many of the page's own
    numbers the script prints alike is counted, not asserted (on one 2-core AMD EPYC, 6 of 8; on
    the machine before it, 8 of 8)."""
    data = load_sample()
    scripts, expected, pages = {}, {}, {}
    for name, settings in mnist_setups().items():
        run = mnist_run(data, settings, fast=False)
        expected[name] = mnist_shown(run)
        pages[name] = mnist_shown(mnist_run(data, settings))
        scripts[name] = mnist_notebook(run, "http://localhost:8501/mnist").script()
    outputs = run_scripts(tmp_path, scripts)
    wrong = []
    for name, numbers in expected.items():
        out = outputs[name]
        if printed(out) | numbers != printed(out) or not out.strip().splitlines()[-1].startswith(
            "test accuracy"
        ):
            wrong.append(f"{name}: the library {numbers}\n{out[-500:]}")
    alike = sum(printed(outputs[name]) | numbers == printed(outputs[name]) for name, numbers in pages.items())
    print(f"\n{len(expected)} MNIST setups, {len(wrong)} apart; the page's own numbers alike on {alike}")
    assert not wrong, "\n".join(wrong)


def test_the_full_set_is_fetched_checked_and_kept_and_offline_says_what_to_do(tmp_path):
    blobs = fake_mnist(n_train=300, n_test=60)  # small files in MNIST's format, on 127.0.0.1
    server = Mirror()
    for name, data in blobs.items():
        server.routes[f"/mnist/{name}"] = body(data)
    files = files_for(blobs)
    try:
        fetched_checked_kept(server, files, tmp_path)
    finally:
        server.close()


def fetched_checked_kept(server: Mirror, files, tmp_path: Path) -> None:
    data = load_mnist(tmp_path / "cache", mirrors=[server.url], files=files)
    assert data.source == "mnist"
    run = mnist_run(data, mn.MnistSettings(device="cpu", epochs=2, batch_size=16))
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / "run.py").write_text(mnist_notebook(run, "", mirrors=[server.url], files=files).script())
    done = subprocess.run(
        [sys.executable, "-I", "run.py"], cwd=folder, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert printed(done.stdout) | mnist_shown(run) == printed(done.stdout)
    assert sorted(p.name for p in (folder / "mnist-data").iterdir()) == sorted(f.name for f in files.values())
    fetched = len(server.requests)
    again = subprocess.run(
        [sys.executable, "-I", "run.py"], cwd=folder, capture_output=True, text=True, timeout=300
    )
    assert again.returncode == 0 and len(server.requests) == fetched  # kept: nothing fetched twice

    elsewhere = tmp_path / "offline"
    elsewhere.mkdir()
    dead = "http://127.0.0.1:9/mnist/"  # the discard port: nothing answers
    (elsewhere / "run.py").write_text(mnist_notebook(run, "", mirrors=[dead], files=files).script())
    offline = subprocess.run(
        [sys.executable, "-I", "run.py"], cwd=elsewhere, capture_output=True, text=True, timeout=300
    )
    assert offline.returncode == 1
    last = offline.stderr.strip().splitlines()[-1]
    assert last.startswith("Could not download train-images-idx3-ubyte.gz"), offline.stderr[-1000:]
    assert "Offline? Put MNIST's four files in" in last and "Traceback" not in offline.stderr


def test_the_bundled_sample_is_embedded_compactly_and_checked():
    run = mnist_run(load_sample(), mn.MnistSettings(device="cpu", epochs=1))
    script = mnist_notebook(run, "").script()
    assert 1.0e6 < len(script.encode()) < 1.2e6  # the sample's 806 KB of gzip, in base64
    assert "hashlib.md5(data).hexdigest() == md5" in script
    assert "import mlp" not in script and "from mlp" not in script


# --- Forward & backward -------------------------------------------------------------------------


def walk_setups() -> dict[str, fb.ForwardSettings]:
    setups = {
        f"{lesson.key}-{i}": fb.from_query(setup.query)[0]
        for lesson in LESSONS.values()
        for i, setup in enumerate([lesson.setup, *(s for _, s in lesson.compare)])
        if setup.page == "forward_backward"
    }
    setups["default"] = fb.ForwardSettings()
    for i, (source, activation) in enumerate(zip(fb.SOURCES, ACTIVATIONS, strict=False)):
        setups[f"{source}-{activation}"] = fb.ForwardSettings(
            source=source,
            activation=activation,
            hidden=(6, 5),
            n=8 + i,
            k=4,
            seed=i,
            init=INITS[i % len(INITS)],
        )
    for activation in list(ACTIVATIONS)[len(fb.SOURCES) :]:
        setups[f"toy-{activation}"] = fb.ForwardSettings(
            source="toy", toy_kind="spiral", activation=activation, k=3
        )
    return setups


def walk_shown(walk) -> dict[str, str]:
    """The walk's numbers as the script prints them."""
    tensors, last = walk.result.tensors, len(walk.widths) - 1

    def entries(name: str) -> str:
        return ", ".join(f"{v:.4f}" for v in np.asarray(tensors[name])[0, :4].tolist())

    return {
        "loss": f"{walk.result.loss:.4f}",
        "z1[0]": entries("z1"),
        f"dW{last}[0]": entries(f"dW{last}"),
        "dW1[0]": entries("dW1"),
        "loss after the step": f"{float(tensors['loss_new']):.4f}",
    }


def test_every_walk_as_a_script_prints_the_pages_numbers(tmp_path):
    scripts, expected = {}, {}
    for name, settings in walk_setups().items():
        walk = fb.run_lesson(settings)
        expected[name] = walk_shown(walk)
        scripts[name] = walk_notebook(walk, "http://localhost:8501/forward_backward").script()
    outputs = run_scripts(tmp_path, scripts)
    wrong = [
        f"{name}: the page {numbers}\n{outputs[name][-600:]}"
        for name, numbers in expected.items()
        if printed(outputs[name]) | numbers != printed(outputs[name])
        or "largest difference from autograd's gradients" not in outputs[name]
    ]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("page", ["mnist", "forward_backward"])
def test_the_other_pages_scripts_are_ruff_clean_and_formatted(tmp_path, page):
    if page == "mnist":
        run = mnist_run(
            load_sample(), mn.MnistSettings(device="cpu", epochs=1, dropout=0.1, scheduler="cosine")
        )
        scripts = {"mnist": mnist_notebook(run, "http://x/mnist").script()}
    else:
        scripts = {
            name: walk_notebook(fb.run_lesson(s), "http://x/fb").script() for name, s in walk_setups().items()
        }
    for name, text in scripts.items():
        (tmp_path / f"{name}.py").write_text(text)
    ruff = [sys.executable, "-m", "ruff"]
    check = subprocess.run([*ruff, "check", "--isolated", str(tmp_path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout[-3000:]
    form = subprocess.run(
        [*ruff, "format", "--isolated", "--line-length", "110", "--diff", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert form.returncode == 0, form.stdout[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("page", ["mnist", "forward_backward"])
def test_the_other_pages_notebooks_execute_in_a_kernel(tmp_path, page):
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    if page == "mnist":
        run = mnist_run(load_sample(), mn.MnistSettings(device="cpu", epochs=2))
        text, last = mnist_notebook(run, "").ipynb(), f"test accuracy: {run.evaluation.accuracy:.4f}"
    else:
        walk = fb.run_lesson(fb.ForwardSettings())
        text, last = walk_notebook(walk, "").ipynb(), f"loss: {walk.result.loss:.4f}"
    notebook = nbformat.reads(text, as_version=4)
    nbclient.NotebookClient(notebook, timeout=600, resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert notebook.cells[-1].outputs[-1]["text"].strip().splitlines()[-1] == last


# --- in Chromium --------------------------------------------------------------------------------

MOONS = {"data": "moons", "n": "400", "noise": "0.15", "classes": "2", "hidden": "8,8", "act": "tanh"}


@pytest.mark.browser
def test_a_run_played_to_its_end_in_chromium_comes_home_as_a_notebook_with_the_pages_numbers(
    page, app_url, tmp_path
):
    """Play the run to its last step, take Export's notebook, execute it: the page's numbers."""
    from tests.harness import ARTIFACTS, plane_metric, shoot, wait_for_app
    from tests.test_page_playground import step_metric

    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    epochs = 300
    query = "&".join(f"{k}={v}" for k, v in MOONS.items())
    page.goto(f"{app_url}/playground?{query}&epochs={epochs}&sps=2000")
    wait_for_app(page, heading="2D playground")
    page.get_by_role("button", name="Play").click()
    for _ in range(3000):  # the steps come as frames (a hang guard: 300 s)
        if step_metric(page) >= epochs:
            break
        page.wait_for_timeout(100)
    assert step_metric(page) == epochs  # full batch: a step an epoch, the run at its end
    page.get_by_role("button", name="Play").wait_for()  # it stopped by itself
    wait_for_app(page)
    accuracy = plane_metric(page, "Test accuracy").inner_text()
    train_loss = plane_metric(page, "Train loss").inner_text()
    page.get_by_text("Export", exact=True).click()
    with page.expect_download() as download:
        page.get_by_role("button", name="Notebook (.ipynb)").click()
    shoot(page, "playground-export.png")
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert saved.name == "playground-run.ipynb"
    notebook = nbformat.read(saved, as_version=4)
    nbclient.NotebookClient(notebook, timeout=600, resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed_lines = printed(notebook.cells[-1].outputs[-1]["text"])
    assert f"{float(printed_lines['test accuracy']):.1%}" == accuracy, (printed_lines, accuracy)
    assert printed_lines["train loss"] == train_loss, (printed_lines, train_loss)
    assert f"{app_url}/playground?" in saved.read_text()  # the page's link back, in its settings cell
    (ARTIFACTS / "playground-run.ipynb").write_bytes(saved.read_bytes())
    assert page.locator('[data-testid="stException"]').count() == 0


def test_text_from_outside_is_shown_literally_in_the_notebook(tmp_path):
    hostile = "<img src=x onerror=alert(1)> **[click](http://evil)**\n# title"
    settings = pg.Settings(kind="moons", classes=2, epochs=10)
    points = replace(pg.make_points(settings), name=hostile)  # an uploaded file's name
    run = Playground(settings, points, data_key=("upload", 0.2, 0))  # points from a file: embedded
    nb = playground_notebook(run, 'http://host/playground?a=1&b=<script>"')
    markdown = "\n".join(source for kind, source in nb.cells if kind == "markdown")
    assert "<img" not in markdown and "<script" not in markdown and "](http" not in markdown
    assert "&lt;img src=x onerror=alert\\(1\\)&gt;" in markdown  # shown as typed, not as markup
    assert "\n# title" not in markdown  # a newline in a name starts no heading
    (tmp_path / "run.py").write_text(nb.script())
    done = subprocess.run(
        [sys.executable, "-I", "run.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert 'LINK = "http://host/playground?a=1&b=<script>\\""' in nb.script()  # a string, quoted


def edited(script: str, **changes: object) -> str:
    """The script with SETTINGS' values changed, as a student edits its first cell."""
    for key, value in changes.items():
        script, count = re.subn(rf'(\n    "{key}": )[^\n]*,', rf"\g<1>{json.dumps(value)},", script)
        assert count == 1, f"no {key} in SETTINGS"
    return script


def test_a_setting_changed_in_the_notebook_trains_as_the_page_would_with_it(tmp_path):
    """SETTINGS is what runs: each value changed there gives the library's run of that setup."""
    base = pg.Settings(epochs=30)
    script = playground_notebook(library_run(base, None, fast=False), "").script()
    changes = {"activation": "tanh", "hidden": [16], "classes": 4, "batch_size": 64, "lr": 0.03, "n": 400}
    changed = replace(base, activation="tanh", hidden=(16,), classes=4, batch_size=64, lr=0.03, n=400)
    outputs = run_scripts(
        tmp_path,
        {
            "changed": edited(script, **changes),
            "exploding": edited(
                script, lr=1e6, batch_size=16
            ),  # past what the page allows: it can't stop you
            "walk": edited(
                walk_notebook(fb.run_lesson(fb.ForwardSettings()), "").script(), hidden=[4, 6], k=2
            ),
            "toy": edited(
                walk_notebook(
                    fb.run_lesson(fb.ForwardSettings(source="toy", toy_kind="spiral")), ""
                ).script(),
                k=2,
            ),
        },
    )
    assert printed(outputs["changed"]) | shown(library_run(changed, None, fast=False)) == printed(
        outputs["changed"]
    ), outputs["changed"][-600:]
    assert "no epoch to show" in outputs["exploding"] and "FAILED" not in outputs["exploding"]
    walk = fb.run_lesson(fb.ForwardSettings(hidden=(4, 6), k=2))
    assert printed(outputs["walk"]) | walk_shown(walk) == printed(outputs["walk"])
    toy = fb.run_lesson(fb.ForwardSettings(source="toy", toy_kind="spiral", k=2))
    assert printed(outputs["toy"]) | walk_shown(toy) == printed(outputs["toy"])


def test_a_challenges_mnist_run_scores_no_test_digit_the_board_keeps_hidden(tmp_path):
    run = mnist_run(load_sample().challenge_part(seed=12345), mn.MnistSettings(device="cpu", epochs=1))
    nb = mnist_notebook(run, "")
    assert "5,000 digits" in nb.cells[0][1] and "keeps 300 of the test digits back" in nb.cells[0][1]
    (tmp_path / "run.py").write_text(nb.script())
    done = subprocess.run(
        [sys.executable, "-I", "run.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "test accuracy" not in done.stdout
    assert (
        done.stdout.strip().splitlines()[-1] == f"val accuracy: {run.trainer.history.epochs[-1].val_acc:.4f}"
    )
