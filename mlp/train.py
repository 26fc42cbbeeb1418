"""One training engine for every page: a typed config, a step-at-a-time Trainer, and `fit`.

The hot loop keeps the data on the device (uint8 images stay uint8 and are scaled per batch),
draws batches by slicing a random permutation, and accumulates loss and accuracy on the
device: it touches the host only at a report (every `report_every` steps) or an epoch's end.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from mlp.device import DEFAULT_THREADS, DeviceInfo, pick_device, synchronize, torch_threads
from mlp.manual import forward_backward

OPTIMIZERS = ("sgd", "momentum", "nesterov", "adam", "adamw")
ENGINES = ("autograd", "manual")  # who computes the gradients: PyTorch, or mlp.manual by hand
SCHEDULERS = ("none", "step", "cosine")


@dataclass
class TrainConfig:
    """How to train: optimizer, schedule, regularisation, batches, seed and device."""

    optimizer: str = "adam"  # one of OPTIMIZERS
    lr: float = 1e-3  # peak learning rate
    batch_size: int = 128  # examples per step; >= the data size means full batch
    epochs: int = 5  # passes over the training set (also the schedule's horizon)
    weight_decay: float = 0.0  # on weights, not biases; decoupled for adamw, L2 otherwise
    momentum: float = 0.9  # for "momentum" and "nesterov"
    scheduler: str = "none"  # one of SCHEDULERS
    warmup_epochs: float = 0.0  # linear warmup from ~0 to lr, for any scheduler
    step_epochs: float = 1.0  # "step": multiply the lr by gamma every this many epochs
    gamma: float = 0.1  # "step": the factor
    min_lr_ratio: float = 0.0  # "cosine": the floor, as a fraction of lr
    grad_clip: float = 0.0  # max global gradient norm; 0 turns clipping off
    seed: int = 0  # batch order and dropout masks
    device: str = "auto"  # "auto" (CUDA, then MPS, then CPU), "cuda", "mps" or "cpu"
    report_every: int = 50  # steps between reports to the callback (each one syncs once)
    engine: str = "autograd"  # "manual": mlp.manual's backprop fills .grad, the optimizer is the same
    threads: int = 0  # CPU intra-op threads; 0 = measure 1 vs all on the first steps and keep the faster
    amp: bool = False  # bf16 autocast for the forward pass (meant for CUDA; the weights stay float32)
    compile: bool = False  # torch.compile(mode="reduce-overhead"): CUDA graphs. Off on CPU: slower there

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"Unknown engine {self.engine!r}; choose one of {', '.join(ENGINES)}.")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"Unknown optimizer {self.optimizer!r}; choose one of {', '.join(OPTIMIZERS)}.")
        if self.scheduler not in SCHEDULERS:
            raise ValueError(f"Unknown scheduler {self.scheduler!r}; choose one of {', '.join(SCHEDULERS)}.")
        checks = [
            (self.lr > 0 and math.isfinite(self.lr), f"lr must be a positive number; got {self.lr}."),
            (self.batch_size >= 1, f"batch_size must be at least 1; got {self.batch_size}."),
            (self.epochs >= 1, f"epochs must be at least 1; got {self.epochs}."),
            (self.weight_decay >= 0, f"weight_decay must be >= 0; got {self.weight_decay}."),
            (0 <= self.momentum < 1, f"momentum must be in [0, 1); got {self.momentum}."),
            (self.warmup_epochs >= 0, f"warmup_epochs must be >= 0; got {self.warmup_epochs}."),
            (self.step_epochs > 0, f"step_epochs must be > 0; got {self.step_epochs}."),
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


def lr_factor(step: int, cfg: TrainConfig, steps_per_epoch: int) -> float:
    """The multiplier on cfg.lr before optimizer step `step` (0-based).

    One closed form for LambdaLR: warmup composes with either schedule, and the factor stays
    at its floor past the horizon (CosineAnnealingLR would climb back up).
    """
    warmup = round(cfg.warmup_epochs * steps_per_epoch)
    if step < warmup:
        return (step + 1) / (warmup + 1)
    if cfg.scheduler == "step":
        return cfg.gamma ** math.floor(step / max(1, round(cfg.step_epochs * steps_per_epoch)))
    if cfg.scheduler == "cosine":
        horizon = max(1, cfg.epochs * steps_per_epoch - warmup)
        progress = min(1.0, (step - warmup) / horizon)
        return cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))
    return 1.0


def make_optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    """torch.optim's optimizer for cfg; decay on weights only; fused kernels where supported."""
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    groups = [
        {"params": decay, "weight_decay": cfg.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    if cfg.weight_decay == 0:  # one group, one fused kernel call per step instead of two
        groups = [{"params": decay + no_decay, "weight_decay": 0.0}]
    if cfg.optimizer in ("sgd", "momentum", "nesterov"):
        momentum = 0.0 if cfg.optimizer == "sgd" else cfg.momentum
        kwargs = {"momentum": momentum, "nesterov": cfg.optimizer == "nesterov"}
        cls = torch.optim.SGD
    else:
        kwargs = {}
        cls = torch.optim.Adam if cfg.optimizer == "adam" else torch.optim.AdamW
    # Fused single-kernel steps: about 2.5x faster than the default on CPU, fewer launches on GPU.
    try:
        return cls(groups, lr=cfg.lr, fused=True, **kwargs)
    except (RuntimeError, ValueError):  # a device or dtype without a fused kernel
        return cls(groups, lr=cfg.lr, **kwargs)


@dataclass
class EpochRecord:
    """What one epoch did."""

    epoch: int  # 1-based
    step: int  # optimizer steps so far
    train_loss: float  # mean over the epoch's batches, weighted by batch size
    train_acc: float
    val_loss: float | None
    val_acc: float | None
    lr: float  # at the end of the epoch
    seconds: float  # wall time of the epoch (evaluation included)
    samples_per_sec: float  # training examples per second of the epoch


@dataclass
class Progress:
    """A report during training: what the callback sees and live curves plot."""

    epoch: float  # fractional epochs done, e.g. 2.35
    step: int
    total_steps: int
    train_loss: float  # mean since the previous report
    train_acc: float
    lr: float
    samples_per_sec: float
    elapsed: float  # seconds of training so far
    eta: float  # seconds left at the current pace
    val_loss: float | None = None  # only at the end of an epoch
    val_acc: float | None = None

    @property
    def fraction(self) -> float:
        return min(1.0, self.step / self.total_steps) if self.total_steps else 1.0


@dataclass
class History:
    """Per-epoch records and the reports between them."""

    epochs: list[EpochRecord] = field(default_factory=list)
    reports: list[Progress] = field(default_factory=list)

    def to_frame(self):
        """The epochs as a pandas DataFrame, one row per epoch."""
        import pandas as pd

        columns = list(EpochRecord.__dataclass_fields__)
        return pd.DataFrame([asdict(r) for r in self.epochs], columns=columns)


Callback = Callable[[Progress], "bool | None"]  # return True to stop training


def as_tensor(x: Any) -> torch.Tensor:
    """A tensor sharing memory with `x` where possible (the engine only reads its data)."""
    if torch.is_tensor(x):
        return x
    array = np.asarray(x)
    with warnings.catch_warnings():  # read-only arrays (the shared MNIST cache) are fine to read
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        return torch.as_tensor(array)


def prepare_inputs(x: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A batch as the model eats it: uint8 pixels scaled to [0, 1], images flattened to rows."""
    if x.dtype == torch.uint8:
        x = x.to(dtype).mul_(1 / 255)  # in place: the conversion already made a fresh tensor
    elif x.dtype != dtype:
        x = x.to(dtype)
    return x.flatten(1) if x.ndim > 2 else x


def mode_matters(model: nn.Module) -> bool:
    """Whether train/eval mode changes what the model computes (dropout, batch norm)."""
    return any(isinstance(m, (nn.Dropout, nn.modules.batchnorm._BatchNorm)) for m in model.modules())


@contextmanager
def eval_mode(model: nn.Module, needed: bool = True) -> Iterator[None]:
    """Eval mode for the block, then back. `needed=False` skips the toggle: it walks every module."""
    was_training = model.training
    if needed:
        model.eval()
    try:
        yield
    finally:
        if needed:
            model.train(was_training)


@torch.inference_mode()
def predict_proba(model: nn.Module, X: Any, batch_size: int = 8192, set_eval: bool = True) -> torch.Tensor:
    """Softmax probabilities (N, K) on the model's device, in eval mode, in chunks."""
    param = next(model.parameters())
    X = as_tensor(X)
    with eval_mode(model, set_eval):
        chunks = [
            torch.softmax(model(prepare_inputs(X[i : i + batch_size].to(param.device), param.dtype)), dim=1)
            for i in range(0, len(X), batch_size)
        ]
    return torch.cat(chunks) if chunks else torch.empty(0, device=param.device)


@torch.inference_mode()
def evaluate(
    model: nn.Module, X: Any, y: Any, batch_size: int = 8192, set_eval: bool = True
) -> tuple[float, float]:
    """Mean cross-entropy and accuracy of `model` on (X, y), in eval mode."""
    param = next(model.parameters())
    X, y = as_tensor(X), as_tensor(y)
    loss_sum = torch.zeros((), device=param.device, dtype=torch.float64)
    correct = torch.zeros((), device=param.device, dtype=torch.int64)
    with eval_mode(model, set_eval):
        for i in range(0, len(X), batch_size):
            xb = prepare_inputs(X[i : i + batch_size].to(param.device), param.dtype)
            yb = y[i : i + batch_size].to(param.device)
            logits = model(xb)
            loss_sum += F.cross_entropy(logits, yb, reduction="sum").double()
            correct += (logits.argmax(1) == yb).sum()
    n = max(1, len(X))
    return loss_sum.item() / n, correct.item() / n


def _check_engine(model: nn.Module, cfg: TrainConfig) -> None:
    if cfg.engine != "manual":
        return
    config = getattr(model, "config", None)
    if config is None:
        raise ValueError("The manual engine trains mlp.model.MLP networks only.")
    if config.dropout > 0:
        raise ValueError("The manual engine has no dropout; set dropout to 0 or use autograd.")


def _copy_all(dst: list[torch.Tensor], src: list[torch.Tensor]) -> None:
    for d, s in zip(dst, src, strict=True):
        d.copy_(s)


class Trainer:
    """Trains a model step by step: `step()`, `run_steps(n)`, `run_epoch()` or `fit()`."""

    def __init__(
        self,
        model: nn.Module,
        train: tuple[Any, Any],
        val: tuple[Any, Any] | None = None,
        cfg: TrainConfig | None = None,
    ) -> None:
        self.cfg = cfg = cfg or TrainConfig()
        _check_engine(model, cfg)
        self.device_info: DeviceInfo = pick_device(cfg.device)
        device = self.device = self.device_info.device
        self.model = model.to(device)
        self.dtype = next(model.parameters()).dtype
        # The data moves to the device once; uint8 images stay uint8 there (4x less memory).
        self.X, self.y = (as_tensor(t).to(device) for t in train)
        self.X = self.X.reshape(len(self.X), -1) if self.X.ndim > 2 else self.X  # images as rows
        self.y = self.y.long()
        if len(self.X) == 0 or len(self.X) != len(self.y):
            raise ValueError(
                f"Training data needs matching, non-empty X and y; got {len(self.X)} and {len(self.y)}."
            )
        self.val = None if val is None else tuple(as_tensor(t).to(device) for t in val)
        self.n = len(self.y)
        self.batch_size = min(cfg.batch_size, self.n)
        self.steps_per_epoch = math.ceil(self.n / self.batch_size)
        self.total_steps = cfg.epochs * self.steps_per_epoch
        self.params = [p for p in self.model.parameters()]
        self._mode_matters = mode_matters(self.model)
        self.threads = cfg.threads  # 0 until measured (CPU only)
        # On CUDA an eager step is launch-bound (~0.2 ms for a small MLP); CUDA graphs replay
        # the whole forward and backward in one launch. A short last batch compiles a second graph.
        self._forward = torch.compile(self.model, mode="reduce-overhead") if cfg.compile else self.model
        self._build_optimizer(schedule_offset=0)
        self.generator = torch.Generator().manual_seed(cfg.seed)  # batch order
        self._rng_states: tuple[torch.Tensor, torch.Tensor | None] | None = None  # dropout masks
        self.step_count = 0
        self.epoch = 0  # completed epochs
        self.status = "ready"
        self.message = ""
        self.history = History()
        self._perm: torch.Tensor | None = None
        self._pos = 0
        # Weights that gave a finite loss, and those of the last sync, still to be confirmed.
        self._checked = [p.detach().clone() for p in self.params]
        self._pending = [p.detach().clone() for p in self.params]
        self._reset_accumulators()
        # Busy time only: the pauses between a page's frames are not training time.
        self._clock = 0.0
        self._elapsed = self._report_time = self._epoch_time = 0.0

    def _build_optimizer(self, schedule_offset: int) -> None:
        cfg, steps_per_epoch = self.cfg, self.steps_per_epoch
        self.optimizer = make_optimizer(self.model, cfg)
        self.scheduler = None  # a constant learning rate needs no per-step scheduler call
        if cfg.scheduler != "none" or cfg.warmup_epochs > 0:
            self.scheduler = torch.optim.lr_scheduler.LambdaLR(
                self.optimizer, lambda step: lr_factor(step + schedule_offset, cfg, steps_per_epoch)
            )

    def reconfigure(self, cfg: TrainConfig) -> None:
        """New training settings for the same model, mid-run: weights, step count and history
        stay; the optimizer starts afresh (its momentum and Adam moments are dropped)."""
        _check_engine(self.model, cfg)
        if pick_device(cfg.device).device != self.device:
            raise ValueError("Changing the device needs a new Trainer.")
        self.cfg = cfg
        self.batch_size = min(cfg.batch_size, self.n)
        self.steps_per_epoch = math.ceil(self.n / self.batch_size)
        self.total_steps = max(cfg.epochs * self.steps_per_epoch, self.step_count)
        self._build_optimizer(schedule_offset=self.step_count)
        # New settings are the way out of a finished or diverged run (a lower learning rate,
        # more epochs); the weights are the last good ones either way.
        if self.status in ("done", "diverged") and self.step_count < self.total_steps:
            self.status, self.message = "ready", ""

    # --- state ---------------------------------------------------------------------------

    @property
    def elapsed(self) -> float:
        """Seconds spent training (pauses between a page's frames excluded)."""
        return self._elapsed

    @property
    def lr(self) -> float:
        return self.optimizer.param_groups[0]["lr"]

    @property
    def finished(self) -> bool:
        return self.status in ("done", "stopped", "diverged")

    @property
    def epoch_progress(self) -> float:
        """Fractional epochs done, e.g. 2.35."""
        return self.step_count / self.steps_per_epoch

    def _reset_accumulators(self) -> None:
        """Running totals on the device since the start; epochs and reports read differences.

        A NaN or infinite loss makes the loss total non-finite for good, so one look at it
        tells whether anything went wrong since the last look.
        """
        self._loss_total = torch.zeros((), device=self.device, dtype=torch.float64)
        self._correct_total = torch.zeros((), device=self.device, dtype=torch.int64)
        self._seen_total = 0
        self._epoch_mark = self._report_mark = (0.0, 0, 0)  # (loss, correct, seen) when last read

    def _device_rng(self) -> tuple[Callable[[], torch.Tensor], Callable[[torch.Tensor], None]] | None:
        """Get and set the RNG state of this trainer's accelerator (None on the CPU)."""
        if self.device.type == "cuda":
            device = self.device
            return (lambda: torch.cuda.get_rng_state(device), lambda s: torch.cuda.set_rng_state(s, device))
        if self.device.type == "mps":
            return torch.mps.get_rng_state, torch.mps.set_rng_state
        return None

    @contextmanager
    def _own_rng(self) -> Iterator[None]:
        """Dropout draws from torch's global RNG; give this run its own, seeded stream."""
        device_rng = self._device_rng()
        saved = (torch.get_rng_state(), device_rng[0]() if device_rng else None)
        try:
            if self._rng_states is None:
                torch.manual_seed(self.cfg.seed)  # seeds the accelerators too
            else:
                torch.set_rng_state(self._rng_states[0])
                if device_rng:
                    device_rng[1](self._rng_states[1])
            yield
        finally:
            self._rng_states = (torch.get_rng_state(), device_rng[0]() if device_rng else None)
            torch.set_rng_state(saved[0])
            if device_rng:
                device_rng[1](saved[1])

    # --- the hot loop --------------------------------------------------------------------

    def _next_batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        if self.batch_size >= self.n:  # full batch: no gather needed
            self._pos = self.n
            return self.X, self.y
        if self._perm is None or self._pos >= self.n:
            self._perm = torch.randperm(self.n, generator=self.generator).to(self.device, non_blocking=True)
            self._pos = 0
        idx = self._perm[self._pos : self._pos + self.batch_size]
        self._pos += self.batch_size
        # index_select copies whole rows; X[idx] takes the general indexing path, ~7x slower here.
        return torch.index_select(self.X, 0, idx), torch.index_select(self.y, 0, idx)

    def _autograd_gradients(self, xb: torch.Tensor, yb: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.cfg.amp):
            logits = self._forward(prepare_inputs(xb, self.dtype))
            loss = F.cross_entropy(logits.float(), yb)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        return loss.detach(), logits.detach()

    def _manual_gradients(self, xb: torch.Tensor, yb: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """mlp.manual's hand-written backprop fills each .grad; the optimizer can't tell the difference.

        On the CPU it runs the NumPy code on views of the weights (no copies); elsewhere the
        PyTorch code, on the device.
        """
        x = prepare_inputs(xb, self.dtype)
        layers = self.model.layers
        params = [(layer.weight.detach().T, layer.bias.detach()) for layer in layers]
        if self.device.type == "cpu":
            params = [(W.numpy(), b.numpy()) for W, b in params]
            x, y = x.numpy(), yb.numpy()
        else:
            y = yb
        result = forward_backward(params, x, y, self.model.config.activation)
        for layer, (dW, db) in zip(layers, result.grads, strict=True):
            layer.weight.grad = as_tensor(dW).T.contiguous().to(self.device)
            layer.bias.grad = as_tensor(db).to(self.device)
        logits = as_tensor(result.tensors[f"z{len(layers)}"]).to(self.device)
        return torch.tensor(result.loss, device=self.device), logits

    def _train_step(self, xb: torch.Tensor, yb: torch.Tensor) -> None:
        if self.cfg.engine == "manual":
            loss, logits = self._manual_gradients(xb, yb)
        else:
            loss, logits = self._autograd_gradients(xb, yb)
        if self.cfg.grad_clip > 0:
            nn.utils.clip_grad_norm_(self.params, self.cfg.grad_clip, foreach=True)
        self.optimizer.step()
        if self.scheduler is not None:
            self.scheduler.step()
        with torch.no_grad():  # stays on the device: no .item() per step
            self._loss_total.add_(loss, alpha=len(yb))
            self._correct_total.add_((logits.argmax(1) == yb).sum())
        self._seen_total += len(yb)

    def step(self) -> None:
        """One optimizer step on the next batch (closing the epoch when it is the last)."""
        self.run_steps(1)

    def _one_step(self, callback: Callback | None) -> bool:
        """One optimizer step and whatever bookkeeping falls due. True = stop now."""
        self._train_step(*self._next_batch())
        self.step_count += 1
        if self._pos >= self.n and self._close_epoch(callback):
            return True
        return self.step_count % self.cfg.report_every == 0 and self._report(callback)

    def run_steps(self, n: int, callback: Callback | None = None) -> None:
        """Up to n optimizer steps; stops early at the end of training or on divergence."""
        if self.finished:
            return
        self.status = "running"
        if self._mode_matters:
            self.model.train()
        self._clock = time.perf_counter()
        n = min(n, self.total_steps - self.step_count)
        with self._own_rng(), torch_threads(self.threads or torch.get_num_threads()):
            stopped, n = self._tune_threads(n, callback)
            for _ in range(n):
                if stopped := self._one_step(callback):
                    break
            if not stopped:
                self._check()  # once per call: a page's frame ends with weights known good
        self._tick()
        if self.status == "running" and self.step_count >= self.total_steps:
            self.status = "done"

    def run_for(self, seconds: float, callback: Callback | None = None) -> None:
        """Train for about `seconds` (whole chunks of report_every steps): one frame of a page."""
        deadline = time.perf_counter() + seconds
        while not self.finished and time.perf_counter() < deadline:
            self.run_steps(min(self.cfg.report_every, self.steps_left_in_epoch), callback)

    def _tune_threads(self, n: int, callback: Callback | None) -> tuple[bool, int]:
        """On the CPU with threads=0, time a few real steps with 1 and with all threads; keep the faster.

        More threads win on big matmuls and lose on small ones, and lose badly when another
        process holds a core (each op waits at a barrier), so this is measured, not guessed.
        Returns (stopped, steps still to take).
        """
        if self.threads or self.device.type != "cpu" or DEFAULT_THREADS == 1:
            self.threads = self.threads or DEFAULT_THREADS
            return False, n
        probe = min(10, max(2, self.steps_per_epoch // 20))
        if n < 4 * probe:
            return False, n  # too short a call to measure; decide on a longer one
        timings = {}
        for threads in (1, DEFAULT_THREADS):
            torch.set_num_threads(threads)
            start = time.perf_counter()
            for _ in range(probe):
                if self._one_step(callback):
                    return True, 0
            timings[threads] = time.perf_counter() - start
        self.threads = min(timings, key=timings.get)
        torch.set_num_threads(self.threads)  # torch_threads() puts the caller's value back
        return False, n - 2 * probe

    @property
    def steps_left_in_epoch(self) -> int:
        """Optimizer steps to the end of the current pass over the data."""
        if self._pos >= self.n or self._pos == 0:
            return self.steps_per_epoch
        return math.ceil((self.n - self._pos) / self.batch_size)

    def run_epoch(self, callback: Callback | None = None) -> EpochRecord | None:
        """Train to the end of the current epoch; returns its record (None if it didn't finish)."""
        done = len(self.history.epochs)
        self.run_steps(self.steps_left_in_epoch, callback)
        return self.history.epochs[-1] if len(self.history.epochs) > done else None

    def fit(self, callback: Callback | None = None) -> History:
        """Train for cfg.epochs (or until the callback says stop, or the loss diverges)."""
        self.run_steps(self.total_steps - self.step_count, callback)
        return self.history

    def stop(self, reason: str = "Stopped.") -> None:
        """Mark training as stopped, keeping the model as trained so far."""
        if not self.finished:
            self.status, self.message = "stopped", reason

    # --- sync points ---------------------------------------------------------------------

    def _tick(self) -> None:
        now = time.perf_counter()
        dt, self._clock = now - self._clock, now
        self._elapsed += dt
        self._report_time += dt
        self._epoch_time += dt

    def _weights_finite(self) -> bool:
        # One reduction: a NaN or inf anywhere makes the total norm non-finite.
        return bool(torch.isfinite(nn.utils.get_total_norm(self.params, foreach=True)))

    def _read_totals(self) -> tuple[float, int, int]:
        """The running totals, read from the device (the one host sync of a report or epoch)."""
        return self._loss_total.item(), int(self._correct_total.item()), self._seen_total

    def _check(self, totals: tuple[float, int, int] | None = None, val_ok: bool = False) -> bool:
        """Divergence check and weight bookkeeping. True (and status 'diverged') if it went wrong."""
        loss_total = (totals or self._read_totals())[0]
        if not math.isfinite(loss_total) or not self._weights_finite():
            self._restore_checked_weights()
            return True
        self._remember_weights(checked=val_ok)
        return False

    def _report(self, callback: Callback | None, val: tuple[float, float] | None = None) -> bool:
        """Tell the callback how training goes since the last report. True = stop."""
        synchronize(self.device)
        self._tick()
        totals = self._read_totals()
        if self._check(totals, val_ok=val is not None):
            return True
        (loss, correct, seen), (loss0, correct0, seen0) = totals, self._report_mark
        self._report_mark = totals
        report_time, self._report_time = max(self._report_time, 1e-9), 0.0
        rate = (seen - seen0) / report_time
        progress = Progress(
            epoch=self.epoch_progress,
            step=self.step_count,
            total_steps=self.total_steps,
            train_loss=(loss - loss0) / max(1, seen - seen0),
            train_acc=(correct - correct0) / max(1, seen - seen0),
            lr=self.lr,
            samples_per_sec=rate,
            elapsed=self._elapsed,
            eta=(self.total_steps - self.step_count) * self.batch_size / max(rate, 1e-9),
            val_loss=val[0] if val else None,
            val_acc=val[1] if val else None,
        )
        self.history.reports.append(progress)
        if callback is not None and callback(progress):
            self.stop("Stopped by request.")
            return True
        return False

    def _remember_weights(self, checked: bool) -> None:
        """Every loss since the last sync was finite, so the weights of that sync were sound.

        The current weights are only known finite: they become the checked copy once the next
        window's losses (or, at an epoch's end, the validation loss) come out finite.
        """
        with torch.no_grad():
            self._checked, self._pending = self._pending, self._checked
            _copy_all(self._pending, self.params)
            if checked:
                _copy_all(self._checked, self.params)

    def _restore_checked_weights(self) -> None:
        with torch.no_grad():
            _copy_all(self.params, self._checked)
            _copy_all(self._pending, self._checked)
        self._reset_accumulators()  # the NaNs stay out of the next epoch's numbers
        self.status = "diverged"
        self.message = (
            f"The loss became NaN or infinite by step {self.step_count} (lr = {self.lr:.3g}). "
            "Training paused with the last weights that gave a finite loss; try a lower "
            "learning rate, gradient clipping, or reset."
        )

    def _close_epoch(self, callback: Callback | None) -> bool:
        """Record the epoch that just ended (evaluating on val). True = stop (diverged, or asked)."""
        synchronize(self.device)
        self._tick()
        train_time = self._epoch_time
        totals = self._read_totals()
        val = None
        if math.isfinite(totals[0]) and self.val is not None and len(self.val[0]):
            val = evaluate(self.model, *self.val, set_eval=self._mode_matters)
        if not math.isfinite(totals[0]) or (val is not None and not all(map(math.isfinite, val))):
            self._restore_checked_weights()
            return True
        self.epoch += 1
        self._tick()  # the epoch's time includes its evaluation
        (loss, correct, seen), (loss0, correct0, seen0) = totals, self._epoch_mark
        self._epoch_mark = totals
        self.history.epochs.append(
            EpochRecord(
                epoch=self.epoch,
                step=self.step_count,
                train_loss=(loss - loss0) / max(1, seen - seen0),
                train_acc=(correct - correct0) / max(1, seen - seen0),
                val_loss=val[0] if val else None,
                val_acc=val[1] if val else None,
                lr=self.lr,
                seconds=self._epoch_time,
                samples_per_sec=(seen - seen0) / max(train_time, 1e-9),
            )
        )
        self._epoch_time = 0.0
        # With a callback, every epoch end is also a report (it carries the validation numbers).
        return callback is not None and self._report(callback, val)


def fit(
    model: nn.Module,
    train: tuple[Any, Any],
    val: tuple[Any, Any] | None = None,
    cfg: TrainConfig | None = None,
    callback: Callback | None = None,
) -> History:
    """Train `model` on (X, y) pairs with cfg; returns the history. The model trains in place."""
    return Trainer(model, train, val, cfg).fit(callback)
