"""The Trainer: one stepping loop that every page and `fit` drive, a few steps or a whole run at a time.

The loop itself is `_one_step`: a batch, its gradients, an optimizer step, running totals on
the device. Everything that needs the host waits for a sync point: a report every
`report_every` steps, the end of an epoch, or the end of a call. Each concern has its own
small object: `Batches` (data on the device, batch order), the path a step takes (torch with
the gradient source, autograd or manual, or NumPy for a small net on the CPU), `RunningTotals`
and `BusyClock` (what to report), `DivergenceGuard` (NaN), the
`ThreadTuner` (CPU threads), `History` (what happened).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from copy import deepcopy
from dataclasses import replace
from typing import Any

import torch
from torch import nn

from mlp.device import DeviceInfo, flush_denormals, pick_device, synchronize
from mlp.train.batches import Batches
from mlp.train.config import TrainConfig
from mlp.train.fastpath.choice import NUMPY_PATH, make_path
from mlp.train.gradients import check_engine, make_gradients
from mlp.train.guard import DivergenceGuard, divergence_message
from mlp.train.history import EpochRecord, History, Progress
from mlp.train.inference import as_tensor, mode_matters
from mlp.train.optim import Stepper
from mlp.train.penalty import penalty_of
from mlp.train.report import Reporter
from mlp.train.schedule import lr_factor
from mlp.train.threads import ThreadTuner

Callback = Callable[[Progress], "bool | None"]  # return True to stop training


class Trainer:
    """Trains a model step by step: `step()`, `run_steps(n)`, `run_for(s)`, `run_epoch()` or `fit()`."""

    def __init__(
        self,
        model: nn.Module,
        train: tuple[Any, Any],
        val: tuple[Any, Any] | None = None,
        cfg: TrainConfig | None = None,
    ) -> None:
        self.cfg = cfg = cfg or TrainConfig()
        self.device_info: DeviceInfo = pick_device(cfg.device)
        self.device = device = self.device_info.device
        self.model = model.to(device)
        self.gradients = make_gradients(model, cfg, device)
        self.batches = Batches(train, cfg.batch_size, cfg.seed, device)
        self.val = None if val is None else tuple(as_tensor(t).to(device) for t in val)
        self.params = list(model.parameters())
        self._mode_matters = mode_matters(model)
        if hasattr(model, "generator"):  # an mlp MLP: its dropout masks come from this run's seed
            model.generator = torch.Generator(device=device).manual_seed(cfg.seed)
        self.reporter = r = Reporter(device)
        self.totals, self.clock, self.history = r.totals, r.clock, r.history
        self.tuner = ThreadTuner(cfg.threads, device)
        self._probe: Callable[[], object] | None = None  # the tuner's throwaway step, made when it measures
        self.step_count = 0
        self.interrupted = False  # set by interrupt(), from another thread
        self.epoch = 0  # completed epochs
        self.status = "ready"  # ready, running, done, stopped or diverged
        self.message = ""
        self.total_steps = cfg.epochs * self.steps_per_epoch
        self.stepper = Stepper(model, cfg)
        self.guard = DivergenceGuard(self.stepper.layout(), penalty_of(model, cfg.l1, cfg.l2))
        self.path = make_path(self)  # NumPy or torch: how each step runs (mlp.train.fastpath.choice)
        self.watch = Watch()  # more points to score at the epochs a best can be (a challenge's hidden ones)

    def use_threads(self, threads: int) -> bool:
        """Train on `threads` CPU threads (0: measure them) from the first step; True if taken
        (before the first step: after it, the run keeps the count it began on)."""
        if self.step_count:
            return False
        self.cfg = replace(self.cfg, threads=threads)
        self.tuner = ThreadTuner(threads, self.device)
        return True

    def reconfigure(self, cfg: TrainConfig) -> None:
        """New training settings for the same model, mid-run: weights, step count and history
        stay; the optimizer starts afresh (its momentum and Adam moments are dropped)."""
        check_engine(self.model, cfg.engine)
        if pick_device(cfg.device).device != self.device:
            raise ValueError("Changing the device needs a new Trainer.")
        self.cfg = cfg
        self.gradients = make_gradients(self.model, cfg, self.device)
        self.batches.resize(cfg.batch_size)
        self.total_steps = max(cfg.epochs * self.steps_per_epoch, self.step_count)
        self.stepper = Stepper(self.model, cfg)
        self.guard.follow(self.stepper.layout())
        self.path = make_path(self)
        self._probe = None  # the tuner's step, on the new batch size and engine
        self.guard.allowance = penalty_of(self.model, cfg.l1, cfg.l2)
        # New settings are the way out of a finished or diverged run (a lower learning rate,
        # more epochs); the weights are the last good ones either way.
        if self.status in ("done", "diverged") and self.step_count < self.total_steps:
            self.status, self.message = "ready", ""

    # --- state ---------------------------------------------------------------------------

    @property
    def batch_size(self) -> int:
        return self.batches.batch_size

    @property
    def steps_per_epoch(self) -> int:
        return self.batches.steps_per_epoch

    @property
    def steps_left_in_epoch(self) -> int:
        return self.batches.steps_left_in_epoch

    @property
    def threads(self) -> int:
        """torch's CPU threads the run's steps use; 0 until measured (the NumPy path's: 1)."""
        return self.tuner.used(self.path.name == NUMPY_PATH)

    @property
    def elapsed(self) -> float:
        """Seconds spent training (pauses between a page's frames excluded)."""
        return self.clock.elapsed

    @property
    def lr(self) -> float:
        """The learning rate of the next step (the schedule's closed form at this step)."""
        cfg = self.cfg
        if cfg.scheduler == "none" and cfg.warmup_epochs == 0:
            return cfg.lr
        return cfg.lr * lr_factor(self.step_count, cfg, self.steps_per_epoch)

    @property
    def finished(self) -> bool:
        return self.status in ("done", "stopped", "diverged")

    @property
    def epoch_progress(self) -> float:
        """Fractional epochs done, e.g. 2.35."""
        return self.step_count / self.steps_per_epoch

    # --- the loop ------------------------------------------------------------------------

    def _one_step(self, callback: Callback | None) -> bool:
        """One optimizer step and whatever bookkeeping falls due. True = stop now."""
        xb, yb = self.batches.next()
        self.path.step(xb, yb, self.lr)
        self.step_count += 1
        if self.batches.epoch_done and self._close_epoch(callback):
            return True
        return self.step_count % self.cfg.report_every == 0 and self._report(callback)

    def run_steps(self, n: int, callback: Callback | None = None) -> None:
        """Up to n optimizer steps; stops early at the end of training or on divergence."""
        if self.finished:
            return
        self.status = "running"
        if self._mode_matters:
            self.model.train()
        n = min(n, self.total_steps - self.step_count)
        self.clock.start()
        numpy = self.path.name == NUMPY_PATH  # its products are NumPy's: torch on one thread
        with self.tuner.scope(numpy), flush_denormals():
            probe = min(10, max(2, self.steps_per_epoch // 20))
            self.tuner.tune(n, probe, self._probe_step, numpy)
            stopped = False
            for _ in range(n):
                if self.interrupted or (stopped := self._one_step(callback)):
                    break
            if not stopped:
                self._check()  # once per call: a page's frame ends with weights known good
        self.clock.stop()
        if self.status == "running" and self.step_count >= self.total_steps:
            self.status = "done"

    def _probe_step(self) -> None:
        """What a step's threads do, for the tuner: forward and backward of a copy of the
        network on the first batch. The run itself (weights, optimizer, batch order, counts) is
        untouched, so what it trains does not depend on the measuring. (An mlp MLP's dropout
        draws from the run's own generator, which the copy doesn't share; another model's
        `nn.Dropout` draws from torch's global one, which the probe moves. The copy runs
        uncompiled: with `compile`, the counts are timed on the eager step.)"""
        if self._probe is None:
            model = self.model
            generator = getattr(model, "generator", None)  # dropout's masks: the run's own draws stay
            memo = {} if generator is None else {id(generator): torch.Generator(device=self.device)}
            twin = deepcopy(model, memo)
            for param in twin.parameters():  # the manual engine writes into .grad, as a stepper leaves it
                param.grad = torch.zeros_like(param)
            gradients = make_gradients(twin, replace(self.cfg, compile=False), self.device)
            n = self.batch_size
            xb, yb = self.batches.X[:n].to(self.device), self.batches.y[:n].to(self.device)
            self._probe = lambda: gradients(xb, yb)
        self._probe()

    def step(self) -> None:
        """One optimizer step on the next batch (closing the epoch when it is the last)."""
        self.run_steps(1)

    def run_for(self, seconds: float, callback: Callback | None = None) -> None:
        """Train for about `seconds` (one page frame or job chunk), in as few run_steps calls
        as the pace so far allows; report_every steps at a time until there is a pace."""
        deadline = self.clock.elapsed + seconds
        while not self.finished and not self.interrupted and self.clock.elapsed < deadline:
            pace = self.step_count / self.clock.elapsed if self.clock.elapsed > 0 else 0.0
            left = deadline - self.clock.elapsed
            self.run_steps(max(1, int(pace * left)) if pace else self.cfg.report_every, callback)

    def run_epoch(self, callback: Callback | None = None) -> EpochRecord | None:
        """Train to the end of the current epoch; returns its record (None if it didn't finish)."""
        done = self.epoch
        self.run_steps(self.steps_left_in_epoch, callback)
        return self.history.last_epoch if self.epoch > done else None

    def fit(self, callback: Callback | None = None) -> History:
        """Train for cfg.epochs (or until the callback says stop, or the loss diverges)."""
        self.run_steps(self.total_steps - self.step_count, callback)
        return self.history

    def interrupt(self) -> None:
        """From another thread: make the training call in progress return after its current step.

        Training then waits for the owner of the run to stop() it (or to go on regardless).
        """
        self.interrupted = True

    def stop(self, reason: str = "Stopped.") -> None:
        """Mark training as stopped, keeping the model as trained so far."""
        if not self.finished:
            self.status, self.message = "stopped", reason

    def _check(
        self, losses: Sequence[float] | None = None, confirm: bool = True, validated: bool = False
    ) -> bool:
        """The divergence check on losses just read (default: the running total). True if it went
        wrong: status 'diverged', the last good weights back in the model. `confirm`: all is well,
        so move the guard's copies along (at a sync point the page or a report relies on)."""
        losses = [self.totals.read()[0]] if losses is None else losses
        problem = self.guard.problem(losses, confirm, self.totals.seen, self.totals.classes)
        if problem is None:
            if confirm:
                self.guard.confirm(validated, self.step_count)
            return False
        self.guard.restore()
        self.totals.reset()  # the NaNs stay out of the next epoch's numbers
        self.status, self.message = "diverged", divergence_message(problem, self.step_count, self.lr)
        return True

    def _report(self, callback: Callback | None, val: tuple[float, float] | None = None) -> bool:
        """Tell the callback how training goes since the last report. True = stop."""
        synchronize(self.device)
        totals = self.totals.read()
        if self._check([totals[0]], validated=val is not None):
            return True
        progress = self.reporter.report(
            totals, self.step_count, self.total_steps, self.epoch_progress, self.batch_size, self.lr, val
        )
        if callback is not None and callback(progress):
            self.stop("Stopped by request.")
            return True
        return False

    def _close_epoch(self, callback: Callback | None) -> bool:
        """Record the epoch that just ended (evaluating on val). True = stop (diverged, or asked)."""
        synchronize(self.device)
        train_time = self.clock.since("epoch")
        totals = self.totals.read()
        val = None
        if math.isfinite(totals[0]) and self.val is not None and len(self.val[0]):
            val = self.path.evaluate(*self.val, set_eval=self._mode_matters)
        vouched = val is not None and val[0] <= vouches_below(self.totals.classes)  # put back on divergence
        if self._check([totals[0], *(val or ())], confirm=vouched, validated=vouched):
            return True
        self.epoch += 1
        self.watch.close_epoch(self, val)
        self.reporter.close_epoch(totals, self.epoch, self.step_count, self.lr, val, train_time)
        # With a callback, every epoch end is also a report (it carries the validation numbers).
        return callback is not None and self._report(callback, val)


class Watch:
    """Points a trainer also scores (a challenge's hidden test points) at the end of every epoch
    whose validation loss or accuracy beats all before it: the epochs a challenge's best can be
    (the first of equals). `scored[epoch]`: (loss, accuracy) on them, from the network as it was
    at that epoch's end, whatever training does after."""

    def __init__(self) -> None:
        self.points: tuple[torch.Tensor, torch.Tensor] | None = None
        self.scored: dict[int, tuple[float, float]] = {}
        self._bests = (math.inf, -math.inf)  # the lowest validation loss and the highest accuracy yet

    def set(self, X: Any, y: Any, device: torch.device, keep: bool = True) -> None:
        """Score these points from the next epoch on; `keep` False forgets what was scored on
        others before (it would not be these points' scores)."""
        self.points = (as_tensor(X).to(device), as_tensor(y).to(device))
        if not keep:
            self.scored.clear()

    def close_epoch(self, trainer: Trainer, val: tuple[float, float] | None) -> None:
        if val is None or not (val[0] < self._bests[0] or val[1] > self._bests[1]):
            return
        self._bests = (min(val[0], self._bests[0]), max(val[1], self._bests[1]))
        if self.points is not None:
            self.scored[trainer.epoch] = trainer.path.evaluate(
                *self.points, set_eval=mode_matters(trainer.model)
            )


def new_data(trainer: Trainer, train: tuple[Any, Any], val: tuple[Any, Any] | None, cfg: TrainConfig) -> None:
    """Other data for a run mid-way (points added to a plane by a click): the weights, the
    optimizer's state (momentum, Adam's moments), the step count and the history stay; batches
    start a new pass over the new data. `cfg` is the run's, its batch size fitted to the new data."""
    trainer.cfg = cfg
    trainer.batches = Batches(train, cfg.batch_size, cfg.seed, trainer.device)
    trainer.val = None if val is None else tuple(as_tensor(t).to(trainer.device) for t in val)
    trainer.total_steps = max(cfg.epochs * trainer.steps_per_epoch, trainer.step_count)
    trainer.path = make_path(trainer)  # a full batch of more points may be too large for NumPy
    trainer._probe = None  # the tuner's step, on the new data
    if trainer.status == "done" and trainer.step_count < trainer.total_steps:
        trainer.status = "ready"


def vouches_below(classes: int) -> float:
    """The validation loss under which an epoch's weights count as sound (3 × chance, ln K): a
    divergence puts back the last such epoch's weights, so what a page shows then is an epoch it
    has a record of."""
    return 3 * math.log(max(2, classes))


def fit(
    model: nn.Module,
    train: tuple[Any, Any],
    val: tuple[Any, Any] | None = None,
    cfg: TrainConfig | None = None,
    callback: Callback | None = None,
) -> History:
    """Train `model` on (X, y) pairs with cfg; returns the history. The model trains in place."""
    return Trainer(model, train, val, cfg).fit(callback)
