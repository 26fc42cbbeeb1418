"""What a run is saved as: the files a page's Export offers, each made only when asked for.

A file is (button label, what makes it, file name): the weights (safetensors, with the settings
that made them), the architecture (JSON), and for the playground the history and the points (CSV),
and the run as a notebook and as a script that reproduce it in plain PyTorch (mlp.export).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING

from mlp.data import points_csv
from mlp.io import architecture_json, model_to_bytes

if TYPE_CHECKING:
    from mlp.runs.mnist import MnistRun
    from mlp.runs.playground import Playground

File = tuple[str, Callable[[], bytes | str], str]  # (button label, what makes the file, file name)


def playground_files(run: Playground, link: str = "") -> list[File]:
    """Everything a playground run can be saved as; `link`: the page's, set up the same."""
    from mlp.export.playground import playground_notebook

    extra = {"settings": asdict(run.settings)}
    return [
        ("Notebook (.ipynb)", lambda: playground_notebook(run, link).ipynb(), "playground-run.ipynb"),
        ("Script (.py)", lambda: playground_notebook(run, link).script(), "playground-run.py"),
        (
            "Weights (.safetensors)",
            lambda: model_to_bytes(run.model, **extra),
            "playground-model.safetensors",
        ),
        ("Architecture (.json)", lambda: architecture_json(run.model, **extra), "playground-model.json"),
        ("History (.csv)", lambda: run.trainer.history.to_frame().to_csv(index=False), "history.csv"),
        ("Data (.csv)", lambda: points_csv(run.points), "points.csv"),
    ]


def mnist_files(run: MnistRun, link: str = "") -> list[File]:
    """Everything an MNIST run that has ended can be saved as (a loaded model: what its file recorded,
    and no notebook: its training happened elsewhere); `link`: the page's, set up the same."""
    from mlp.export.mnist import mnist_notebook

    notebooks: list[File] = [
        ("Notebook (.ipynb)", lambda: mnist_notebook(run, link).ipynb(), "mnist-run.ipynb"),
        ("Script (.py)", lambda: mnist_notebook(run, link).script(), "mnist-run.py"),
    ]
    extra = {
        "test_accuracy": run.evaluation.accuracy if run.evaluation else None,
        "training": run.recorded if run.loaded else run.training_record(),
    }
    return [
        ("Weights (.safetensors)", lambda: model_to_bytes(run.model, **extra), "mnist-mlp.safetensors"),
        ("Architecture (.json)", lambda: architecture_json(run.model, **extra), "mnist-mlp.json"),
        *([] if run.loaded else notebooks),
    ]
