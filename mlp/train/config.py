"""How to train: one typed config that every page and the notebook API fill in."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from mlp.train.optimizers import OPTIMIZERS

ENGINES = ("autograd", "manual")  # who computes the gradients: PyTorch, or mlp.manual by hand
SCHEDULERS = ("none", "step", "cosine")
# The loss: softmax cross-entropy over K logits (classes), or the mean squared error of one output
# (a regression): MSE = (1/N) Σ (ŷ - y)², no ½, the same number in both engines and on every page.
LOSSES = ("cross_entropy", "mse")
STEP_MILESTONES = (0.5, 0.75)  # "step" without step_epochs: drop at 1/2 and 3/4 of the run
MANUAL_HAS_NO_DROPOUT = "The manual engine has no dropout: set dropout to 0 or use autograd."


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


@dataclass
class TrainConfig:
    """How to train: optimizer, schedule, regularisation, batches, seed and device."""

    optimizer: str = "adam"  # one of OPTIMIZERS (mlp.train.optimizers: the table)
    lr: float = 1e-3  # peak learning rate
    batch_size: int = 128  # examples per step; >= the data size means full batch
    epochs: int = 5  # passes over the training set (also the schedule's horizon)
    weight_decay: float = 0.0  # on weights, not biases; decoupled for adamw, L2 otherwise
    # Penalties added to the loss, on weights (not biases), for every optimizer and both engines
    # (mlp.train.penalty): l2 · Σw², whose gradient 2·l2·w joins backprop's; and l1 · Σ|w|, applied
    # as a proximal step after each update (w shrinks by lr·l1 toward 0, scaled as Adam scales a
    # step for adam and adamw, and stops there, exactly).
    l1: float = 0.0  # λ₁ in λ₁·Σ|w|
    l2: float = 0.0  # λ₂ in λ₂·Σw² (unlike weight_decay, in the loss shown and never decoupled)
    momentum: float = 0.9  # for the optimizers that read it (OPTIMIZERS[name].reads)
    scheduler: str = "none"  # one of SCHEDULERS
    warmup_epochs: float = 0.0  # linear warmup from ~0 to lr, for any scheduler
    step_epochs: float = 0.0  # "step": drop every this many epochs; 0 = at 1/2 and 3/4 of the run
    gamma: float = 0.1  # "step": the factor of each drop
    min_lr_ratio: float = 0.0  # "cosine": the floor, as a fraction of lr
    grad_clip: float = 0.0  # max global gradient norm; 0 turns clipping off
    seed: int = 0  # batch order and dropout masks
    device: str = "auto"  # "auto" (CUDA, then MPS, then CPU), "cuda", "mps" or "cpu"
    report_every: int = 50  # steps between reports to the callback (each one syncs once)
    engine: str = "autograd"  # "manual": mlp.manual's backprop fills .grad, the optimizer is the same
    loss: str = "cross_entropy"  # one of LOSSES; "mse" wants one output and real-valued (float) labels
    threads: int = 0  # CPU intra-op threads; 0 = measure 1 vs all on the first steps and keep the faster
    amp: bool = False  # bf16 autocast for the forward pass (meant for CUDA; the weights stay float32)
    compile: bool = False  # torch.compile(mode="reduce-overhead"): CUDA graphs. Off on CPU: slower there
    # Let a small run on the CPU take the NumPy path (mlp.train.fastpath.choice); False = torch autograd
    # itself, e.g. when the engines are compared.
    fast_path: bool = True

    def __post_init__(self) -> None:
        choices = (
            ("engine", ENGINES),
            ("optimizer", OPTIMIZERS),
            ("scheduler", SCHEDULERS),
            ("loss", LOSSES),
        )
        for name, allowed in choices:
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"Unknown {name} {value!r}; choose one of {', '.join(allowed)}.")
        checks = [
            (self.lr > 0 and math.isfinite(self.lr), f"lr must be a positive number; got {self.lr}."),
            (self.batch_size >= 1, f"batch_size must be at least 1; got {self.batch_size}."),
            (self.epochs >= 1, f"epochs must be at least 1; got {self.epochs}."),
            (self.weight_decay >= 0, f"weight_decay must be >= 0; got {self.weight_decay}."),
            (0 <= self.l1 < math.inf, f"l1 (the L1 rate) must be a finite number >= 0; got {self.l1}."),
            (0 <= self.l2 < math.inf, f"l2 (the L2 rate) must be a finite number >= 0; got {self.l2}."),
            (0 <= self.momentum < 1, f"momentum must be in [0, 1); got {self.momentum}."),
            (self.warmup_epochs >= 0, f"warmup_epochs must be >= 0; got {self.warmup_epochs}."),
            (
                self.step_epochs >= 0,
                f"step_epochs must be >= 0; got {self.step_epochs}.",
            ),
            (0 < self.gamma <= 1, f"gamma must be in (0, 1]; got {self.gamma}."),
            (0 <= self.min_lr_ratio <= 1, f"min_lr_ratio must be in [0, 1]; got {self.min_lr_ratio}."),
            (self.grad_clip >= 0, f"grad_clip must be >= 0 (0 = off); got {self.grad_clip}."),
            (self.report_every >= 1, f"report_every must be at least 1; got {self.report_every}."),
            (self.threads >= 0, f"threads must be >= 0 (0 = measure); got {self.threads}."),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
