"""How to train: one typed config that every page and the notebook API fill in.

Each training setting is declared here once, as a field of TrainConfig with `setting(default,
Spec(...))` (mlp.spec): its default, the library's whole range, its link name, label and help,
and when it applies (momentum only for the optimizers that read it). TrainConfig checks a value
against that range; a page's settings take the same declaration and narrow its range or stops
(mlp.links.settings.train_setting), never restate it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from mlp.spec import SPEC, TRAINING, Spec, setting
from mlp.train.optimizers import OPTIMIZERS

ENGINES = ("autograd", "manual")  # who computes the gradients: PyTorch, or mlp.manual by hand
SCHEDULERS = ("none", "step", "cosine")
# The loss: softmax cross-entropy over K logits (classes), or the mean squared error of one output
# (a regression): MSE = (1/N) Σ (ŷ - y)², no ½, the same number in both engines and on every page.
LOSSES = ("cross_entropy", "mse")
STEP_MILESTONES = (0.5, 0.75)  # "step" without step_epochs: drop at 1/2 and 3/4 of the run
MANUAL_HAS_NO_DROPOUT = "The manual engine has no dropout: set dropout to 0 or use autograd."
PENALTY_STOPS = (0.0, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)  # TensorFlow Playground's rates
PENALTY_LOSS = (
    " The train loss shown includes the penalty; the test loss is the data loss alone, as in "
    "TensorFlow Playground, so the two curves compare how well each set is fitted."
)
MAX_SEED = 2**31 - 1


def engine_problem(engine: str, dropout: float) -> str | None:
    """Why this engine can't train a network with this dropout, or None. The rule's one home."""
    if engine == "manual" and dropout > 0:
        return MANUAL_HAS_NO_DROPOUT
    return None


def uses_momentum(optimizer: str) -> bool:
    """Whether the optimizer reads TrainConfig.momentum (its row says: mlp.train.optimizers)."""
    return "momentum" in OPTIMIZERS[optimizer].reads


def supports_dropout(engine: str) -> bool:
    """Whether the engine can train a network with dropout (the manual one can't)."""
    return engine_problem(engine, 0.5) is None


def _reads(setting_name: str):
    """`applies` for a setting only some optimizers read: whether the chosen one does."""

    def applies(values: Mapping[str, Any]) -> bool:
        return setting_name in OPTIMIZERS[values.get("optimizer", "adam")].reads

    return applies


@dataclass
class TrainConfig:
    """How to train: optimizer, schedule, regularisation, batches, seed and device."""

    optimizer: str = setting(
        "adam",
        Spec(
            "opt",
            choices=tuple(OPTIMIZERS),
            label="Optimizer",
            section=TRAINING,
            names={name: row.label for name, row in OPTIMIZERS.items()},
            help=" ".join(f"{row.label}: {row.help}" for row in OPTIMIZERS.values()),
        ),
    )
    lr: float = setting(  # the peak learning rate
        1e-3,
        Spec(
            "lr",
            1e-8,
            1e6,
            label="Learning rate",
            section=TRAINING,
            help="How far each step moves the weights along the gradient (at the schedule's peak).",
        ),
    )
    batch_size: int = setting(  # examples per step; >= the data size means full batch
        128, Spec("bs", 1, 10**9, label="Batch size", section=TRAINING, help="Examples per optimizer step.")
    )
    epochs: int = setting(  # passes over the training set (also the schedule's horizon)
        5, Spec("epochs", 1, 10**6, label="Epochs", section=TRAINING, widget="number")
    )
    weight_decay: float = setting(  # on weights, not biases; decoupled for adamw, L2 otherwise
        0.0,
        Spec(
            "wd",
            0.0,
            1e3,
            label="Weight decay",
            section=TRAINING,
            help="Shrinks the weights (not the biases) a little every step, in the optimizer: "
            "AdamW's is decoupled from the gradient, the others' joins it.",
        ),
    )
    # Penalties added to the loss, on weights (not biases), for every optimizer and both engines
    # (mlp.train.penalty): l2 · Σw², whose gradient 2·l2·w joins backprop's; and l1 · Σ|w|, applied
    # as a proximal step after each update (w shrinks by lr·l1 toward 0, scaled as the optimizer
    # scales a step, and stops there, exactly).
    l1: float = setting(
        0.0,
        Spec(
            "l1",
            0.0,
            1e6,
            label="L1 rate (λ₁)",
            section=TRAINING,
            names={0.0: "off"},
            help="Adds λ₁·Σ|w| over the weights (not the biases) to the loss. Applied as a proximal step "
            "after each update, w ← sign(w)·max(|w| − lr·λ₁, 0), so weights land on exactly 0: the "
            "network view counts them." + PENALTY_LOSS,
        ),
    )
    l2: float = setting(  # unlike weight_decay, in the loss shown and never decoupled
        0.0,
        Spec(
            "l2",
            0.0,
            1e6,
            label="L2 rate (λ₂)",
            section=TRAINING,
            names={0.0: "off"},
            help="Adds λ₂·Σw² over the weights (not the biases) to the loss; its gradient 2λ₂·w flows "
            "through backprop for every optimizer, so weights shrink but rarely reach 0. Weight decay "
            "instead lives in the optimizer (AdamW's is decoupled) and is not in the loss." + PENALTY_LOSS,
        ),
    )
    momentum: float = setting(
        0.9,
        Spec(
            "mom",
            stops=(0.0, 0.5, 0.9, 0.95, 0.99),
            label="Momentum",
            section=TRAINING,
            applies=_reads("momentum"),
            help="For the optimizers that read it (Momentum, Nesterov): the share of the last step "
            "that carries into the next.",
        ),
    )
    scheduler: str = setting(
        "none", Spec("sched", choices=SCHEDULERS, label="Learning-rate schedule", section=TRAINING)
    )
    warmup_epochs: float = setting(  # linear warmup from ~0 to lr, for any scheduler
        0.0, Spec("warmup", 0.0, 10**6, step=0.5, label="Warmup epochs", section=TRAINING, widget="number")
    )
    step_epochs: float = setting(  # "step": drop every this many epochs; 0 = at 1/2 and 3/4 of the run
        0.0,
        Spec(
            "step_epochs",
            0.0,
            10**6,
            label="Epochs between drops",
            applies=lambda v: v.get("scheduler") == "step",
        ),
    )
    gamma: float = setting(  # "step": the factor of each drop
        0.1, Spec("gamma", 1e-9, 1.0, label="Drop factor", applies=lambda v: v.get("scheduler") == "step")
    )
    min_lr_ratio: float = setting(  # "cosine": the floor, as a fraction of lr
        0.0, Spec("min_lr", 0.0, 1.0, label="Floor", applies=lambda v: v.get("scheduler") == "cosine")
    )
    grad_clip: float = setting(  # max global gradient norm; 0 turns clipping off
        0.0,
        Spec(
            "clip",
            0.0,
            1e6,
            step=0.5,
            label="Gradient clipping (max norm)",
            section=TRAINING,
            names={0.0: "off"},
            help="Scales the whole gradient down to this norm when it is longer; 0 turns it off.",
        ),
    )
    seed: int = setting(  # batch order and dropout masks
        0, Spec("seed", 0, MAX_SEED, label="Seed", section=TRAINING, widget="number")
    )
    device: str = "auto"  # "auto" (CUDA, then MPS, then CPU), "cuda", "mps" or "cpu"
    report_every: int = setting(  # steps between reports to the callback (each one syncs once)
        50, Spec("report_every", 1, 10**9, label="Steps between reports")
    )
    engine: str = setting(  # "manual": mlp.manual's backprop fills .grad, the optimizer is the same
        "autograd",
        Spec(
            "engine",
            choices=ENGINES,
            label="Gradients from",
            section=TRAINING,
            widget="radio",
            names={"autograd": "PyTorch autograd", "manual": "manual backprop"},
            help="Manual: mlp.manual's NumPy backprop fills each .grad; the optimizer is the same.",
        ),
    )
    loss: str = setting(  # "mse" wants one output and real-valued (float) labels
        "cross_entropy", Spec("loss", choices=LOSSES, label="Loss")
    )
    threads: int = setting(  # CPU intra-op threads; 0 = time 1 vs all on a copy of the net, keep the faster
        0, Spec("threads", 0, 4096, label="CPU threads")
    )
    amp: bool = setting(  # bf16 autocast for the forward pass (meant for CUDA; the weights stay float32)
        False,
        Spec(
            "amp",
            choices=(False, True),
            label="bf16 autocast",
            section=TRAINING,
            help="Matmuls in bfloat16; weights stay float32.",
        ),
    )
    compile: bool = setting(  # torch.compile(mode="reduce-overhead"): CUDA graphs. Off on CPU: slower there
        False,
        Spec(
            "compile",
            choices=(False, True),
            label="CUDA graphs (torch.compile)",
            section=TRAINING,
            help="Compiles, then one launch a step.",
        ),
    )
    # Let a small run on the CPU take the NumPy path (mlp.train.fastpath.choice); False = torch autograd
    # itself, e.g. when the engines are compared.
    fast_path: bool = True

    def __post_init__(self) -> None:
        for name, spec in TRAIN_SPECS.items():
            value = getattr(self, name)
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number; got {value}.")
            if spec.choices is not None and value not in spec.choices:
                raise ValueError(
                    f"Unknown {name} {value!r}; choose one of {', '.join(map(str, spec.choices))}."
                )
            if spec.choices is None and not spec.low <= value <= spec.high:
                raise ValueError(f"{name} {spec.problem(value)}; got {value}.")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


TRAIN_SPECS: dict[str, Spec] = {f.name: f.metadata[SPEC] for f in fields(TrainConfig) if SPEC in f.metadata}
"""Each training setting's one declaration, by TrainConfig's field name."""
