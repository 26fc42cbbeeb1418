"""The MNIST page's model: its settings (and their link form), and one visitor's session.

`MnistSettings` is what the sidebar sets and a link carries; `MnistSession` is one visitor's
page: Start queues a run (mlp.runs.mnist) on the executor, Stop ends it, finished runs
are kept to compare.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from mlp.device import DEVICES
from mlp.io import max_file_bytes, read_metadata
from mlp.links import settings as form
from mlp.links.settings import LinkNote
from mlp.model import ModelConfig
from mlp.spec import TRAINING, Spec, WidthLimits, setting, specs_of
from mlp.train import TrainConfig
from mlp.train.fastpath.choice import config_problem, path_sentence

WIDTHS = WidthLimits(max_layers=4, max_width=2048, min_layers=0)
LARGEST = ModelConfig(784, [WIDTHS.max_width] * WIDTHS.max_layers, 10)  # the widest, deepest it trains
# Its uploader's limit: the largest model file this page writes (784-2048×4-10: 56.9 MB), in the
# MB Streamlit's uploader counts in the browser (10^6 bytes; 2^20 on Windows and on the server,
# which only admits more).
MAX_MODEL_MB = math.ceil(max_file_bytes(LARGEST) / 10**6)
DEVICE = "Device"
CUDA_ONLY = ("amp", "compile")  # shown, and applied, only on a CUDA device
FULL, CLASS = "full", "class"  # the paces: as fast as it goes, or slow enough for a class to watch
CLASS_EPOCH_SECONDS = 3.0  # the least an epoch takes at a class's pace: 5 epochs, 15 s of curves


@dataclass(frozen=True)
class MnistSettings:
    """The network and how it trains on the digits. Each field is the one declaration of its
    setting (mlp.links.settings): default, link name, range, widget."""

    hidden: tuple[int, ...] = setting((128,), form.HIDDEN.like(widths=WIDTHS))
    activation: str = setting("relu", form.ACTIVATION)
    init: str = setting("kaiming", form.INIT)
    dropout: float = setting(0.0, form.DROPOUT.like(high=0.8))
    optimizer: str = form.train_setting("optimizer")
    momentum: float = form.train_setting("momentum")
    lr: float = form.train_setting("lr", stops=(1e-4, 3e-4, 1e-3, 2e-3, 3e-3, 0.01, 0.03, 0.1, 0.3))
    batch_size: int = form.train_setting("batch_size", stops=(16, 32, 64, 128, 256, 512, 1024))
    epochs: int = form.train_setting("epochs", high=100)
    pace: str = setting(
        FULL,
        Spec(
            "pace",
            choices=(FULL, CLASS),
            label="Pace",
            section=TRAINING,
            widget="radio",
            names={FULL: "Full speed", CLASS: "Class pace"},
            for_class=CLASS,
            help=f"Class pace: every epoch takes at least {CLASS_EPOCH_SECONDS:g} s, so that a room "
            "sees the curves grow. Projector mode and tours start there.",
        ),
    )
    weight_decay: float = form.train_setting("weight_decay", stops=(0.0, 1e-5, 1e-4, 1e-3, 1e-2))
    scheduler: str = form.train_setting("scheduler")
    warmup_epochs: float = form.train_setting("warmup_epochs", high=10.0)
    grad_clip: float = form.train_setting(
        "grad_clip", high=100.0, widget="number", label="Gradient clipping (max norm, 0 = off)"
    )
    seed: int = form.train_setting("seed")
    amp: bool = form.train_setting("amp")
    compile: bool = form.train_setting("compile")
    device: str = setting(  # drawn first, under its own heading
        "auto",
        Spec(
            "device",
            choices=DEVICES,
            label="Train on",
            section=DEVICE,
            help="auto: CUDA, then Apple MPS, then CPU.",
        ),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        form.check(self, SPECS)

    def model_config(self) -> ModelConfig:
        return ModelConfig(784, list(self.hidden), 10, self.activation, self.init, self.dropout)

    def train_config(self) -> TrainConfig:
        return TrainConfig(
            **form.train_settings(self), device=self.device
        )  # each one declared as TrainConfig's

    @property
    def min_epoch_seconds(self) -> float:
        """The least an epoch may take: 0 at full speed."""
        return CLASS_EPOCH_SECONDS if self.pace == CLASS else 0.0

    def describe_steps(self, device: torch.device) -> str:
        """How a run of these settings on `device` will compute its steps, in a sentence: one
        NumPy computation (a small network on the CPU), or PyTorch and why (mlp.train.fastpath.choice)."""
        problem = config_problem(self.model_config().widths, self.train_config(), device, self.batch_size)
        return path_sentence(problem)


SPECS: dict[str, Spec] = specs_of(MnistSettings)


def to_query(settings: MnistSettings) -> dict[str, str]:
    """Every setting as a string, keyed by its short link name."""
    return form.to_query(settings, SPECS)


def from_query(query: Mapping[str, Any]) -> tuple[MnistSettings, list[LinkNote]]:
    """Settings from a link's query; each bad parameter is skipped with a note."""
    values, _, notes = form.read_link(query, MnistSettings(), SPECS)
    return MnistSettings(**values), notes


def from_widgets(
    values: Mapping[str, Any], fallback: MnistSettings, device_kind: str
) -> tuple[MnistSettings, list[ValueError]]:
    """Settings from the sidebar's values; bf16 and CUDA graphs only where the device is CUDA."""

    def fix(values: dict[str, Any]) -> None:
        if device_kind != "cuda":
            values.update(dict.fromkeys(CUDA_ONLY, False))

    return form.from_widgets(values, fallback, SPECS, fix)


SUMMARY_FIELDS = ("optimizer", "lr", "batch_size", "weight_decay", "scheduler", "grad_clip", "seed")
RECORDED = (*SUMMARY_FIELDS, "epochs_trained")  # what a model file may say of its training
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,23}")


def recorded_training(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    """How a model file says it trained, keeping only what this page writes there: known keys,
    with finite numbers or short names as values. A file can say anything; the rest is dropped
    (it would reach the screen)."""
    training = meta.get("training")
    if not isinstance(training, dict):
        return None
    kept = {}
    for key in RECORDED:
        value = training.get(key)
        number = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        if number or (isinstance(value, str) and _WORD.fullmatch(value)):
            kept[key] = value
    return kept or None


def declared_hidden(file: bytes) -> list[int] | None:
    """The hidden widths a model file's architecture declares, unchecked; None if it declares
    none that can be read (model_from_bytes then says what is wrong with it)."""
    try:
        hidden = json.loads(read_metadata(file)["architecture"])["model"]["hidden"]
    except (KeyError, TypeError, ValueError, RecursionError):
        return None
    whole = isinstance(hidden, list) and all(isinstance(h, int) and not isinstance(h, bool) for h in hidden)
    return hidden if whole else None


def page_refuses(file: bytes) -> str | None:
    """Why this page can't take a model file's hidden layers, in its own limits (not the
    library's far larger ones a loader would name), or None."""
    hidden = declared_hidden(file)
    if hidden is None or (problem := WIDTHS.problem(hidden)) is None:
        return None
    return f"This model doesn't fit this page: {problem[0].lower()}{problem[1:]}"


def loaded_sentence(config: Any, training: dict[str, Any] | None) -> str:
    """What a loaded model is, in a line: its architecture and how its file says it trained."""
    widths = " → ".join(map(str, (config.d_in, *config.hidden, config.d_out)))
    arch = f"{widths} · {config.activation} · {config.init} init"
    if not training:
        return f"{arch}; its file does not record how it was trained."
    keys = ("optimizer", "lr", "batch_size", "epochs_trained", "weight_decay", "scheduler")
    return (
        f"{arch}; trained with "
        + ", ".join(f"{k.replace('_', ' ')} {training[k]}" for k in keys if k in training)
        + "."
    )
