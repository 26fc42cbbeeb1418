"""Turning the running totals and the busy clock into reports and epoch records."""

from __future__ import annotations

import torch

from mlp.train.history import EpochRecord, History, Progress
from mlp.train.meter import BusyClock, RateMeter, RunningTotals, Totals

Val = tuple[float, float] | None  # (loss, accuracy) on the validation set, when measured


class Reporter:
    """What a run has done so far: totals on the device, busy time, the smoothed rate, the history."""

    def __init__(self, device: torch.device) -> None:
        self.totals = RunningTotals(device)
        self.clock = BusyClock()
        self.rate = RateMeter()
        self.history = History()

    def report(
        self, totals: Totals, step: int, total_steps: int, epoch: float, batch: int, lr: float, val: Val
    ):
        """A Progress since the previous report, appended to the history."""
        loss, acc, seen = self.totals.since("report", totals)
        rate = self.rate.update(seen, self.clock.lap("report"))
        progress = Progress(
            epoch=epoch,
            step=step,
            total_steps=total_steps,
            train_loss=loss,
            train_acc=acc,
            lr=lr,
            samples_per_sec=rate,
            elapsed=self.clock.elapsed,
            eta=self.rate.eta((total_steps - step) * batch),
            val_loss=val[0] if val else None,
            val_acc=val[1] if val else None,
        )
        self.history.add_report(progress)
        return progress

    def close_epoch(
        self, totals: Totals, epoch: int, step: int, lr: float, val: Val, train_time: float
    ) -> EpochRecord:
        """The record of the epoch that just ended, appended to the history."""
        loss, acc, seen = self.totals.since("epoch", totals)
        record = EpochRecord(
            epoch=epoch,
            step=step,
            train_loss=loss,
            train_acc=acc,
            val_loss=val[0] if val else None,
            val_acc=val[1] if val else None,
            lr=lr,
            seconds=self.clock.lap("epoch"),  # evaluation included
            samples_per_sec=seen / max(train_time, 1e-9),
        )
        self.history.add_epoch(record)
        return record
