"""What a run is saved as: the files a page's Export offers, each made only when asked for.

A file is (button label, what makes it, file name): the weights (safetensors, with the settings
that made them), the architecture (JSON), and for the playground the history and the points (CSV).
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


def playground_files(run: Playground) -> list[File]:
    """Everything a playground run can be saved as."""
    extra = {"settings": asdict(run.settings)}
    return [
        (
            "Weights (.safetensors)",
            lambda: model_to_bytes(run.model, **extra),
            "playground-model.safetensors",
        ),
        ("Architecture (.json)", lambda: architecture_json(run.model, **extra), "playground-model.json"),
        ("History (.csv)", lambda: run.trainer.history.to_frame().to_csv(index=False), "history.csv"),
        ("Data (.csv)", lambda: points_csv(run.points), "points.csv"),
    ]


def mnist_files(run: MnistRun) -> list[File]:
    """Everything an MNIST run that has ended can be saved as (a loaded model: what its file recorded)."""
    extra = {
        "test_accuracy": run.evaluation.accuracy if run.evaluation else None,
        "training": run.recorded if run.loaded else run.training_record(),
    }
    return [
        ("Weights (.safetensors)", lambda: model_to_bytes(run.model, **extra), "mnist-mlp.safetensors"),
        ("Architecture (.json)", lambda: architecture_json(run.model, **extra), "mnist-mlp.json"),
    ]
