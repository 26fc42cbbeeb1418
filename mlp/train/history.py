"""What training did: a record per epoch, the reports between them, and both as arrays."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

import numpy as np


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
    samples_per_sec: float  # smoothed over about the last second of training
    elapsed: float  # seconds of training so far
    eta: float  # seconds left at the smoothed rate
    val_loss: float | None = None  # only at the end of an epoch
    val_acc: float | None = None

    @property
    def fraction(self) -> float:
        return min(1.0, self.step / self.total_steps) if self.total_steps else 1.0


EPOCH_COLUMNS = ("epoch", "train_loss", "val_loss", "train_acc", "val_acc")
REPORT_COLUMNS = ("epoch", "train_loss", "train_acc")


def _thin(n: int, max_points: int | None) -> np.ndarray:
    """Indices of at most max_points of n, evenly spread, the first and the last always kept."""
    if max_points is None or n <= max_points:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max_points).round().astype(int))


def _columns(records: list, names: tuple[str, ...], max_points: int | None) -> dict[str, np.ndarray]:
    picked = [records[i] for i in _thin(len(records), max_points)]
    return {
        name: np.array([np.nan if getattr(r, name) is None else getattr(r, name) for r in picked], np.float64)
        for name in names
    }


def _halve(records: list) -> None:
    """Keep every other record, the first and the last included."""
    last = records[-1]
    records[:] = records[::2]
    if records[-1] is not last:
        records.append(last)


@dataclass
class History:
    """Per-epoch records and the reports between them, each list capped at `cap` entries.

    A run of 100,000 epochs would otherwise keep 100,000 records per visitor; past the cap a
    list keeps every other entry (the whole run, at half the resolution) and the newest one.
    """

    epochs: list[EpochRecord] = field(default_factory=list)
    reports: list[Progress] = field(default_factory=list)
    cap: int = 4000

    def add_epoch(self, record: EpochRecord) -> None:
        self.epochs.append(record)
        if len(self.epochs) > self.cap:
            _halve(self.epochs)

    def add_report(self, progress: Progress) -> None:
        self.reports.append(progress)
        if len(self.reports) > self.cap:
            _halve(self.reports)

    @property
    def last_epoch(self) -> EpochRecord | None:
        return self.epochs[-1] if self.epochs else None

    def epoch_arrays(self, max_points: int | None = None) -> dict[str, np.ndarray]:
        """epoch, train/val loss and accuracy as float arrays (NaN where not measured), thinned."""
        return _columns(self.epochs, EPOCH_COLUMNS, max_points)

    def report_arrays(self, max_points: int | None = None) -> dict[str, np.ndarray]:
        """The reports within epochs: fractional epoch, train loss and accuracy, thinned."""
        return _columns(self.reports, REPORT_COLUMNS, max_points)

    def to_frame(self):
        """The epochs as a pandas DataFrame, one row per epoch."""
        import pandas as pd

        columns = [f.name for f in fields(EpochRecord)]
        return pd.DataFrame([asdict(r) for r in self.epochs], columns=columns)
