"""The training data on the device, served as batches sliced from a seeded permutation."""

from __future__ import annotations

import math
from typing import Any

import torch

from mlp.train.inference import as_tensor

SHUFFLE_COPY_BYTES = 8 << 20  # data up to this size is shuffled whole each epoch; batches are views


class Batches:
    """(X, y) moved to the device once, and the batch order of one seeded run.

    uint8 images stay uint8 on the device (4x less memory) and are scaled per batch. Each
    epoch is one `randperm`. Small data (the 2D sets) is gathered in that order once per
    epoch and batches are slices of it, views that cost nothing; larger data (MNIST) gathers
    each batch with `index_select` instead of keeping a shuffled copy of itself.
    """

    def __init__(self, data: tuple[Any, Any], batch_size: int, seed: int, device: torch.device) -> None:
        X, y = (as_tensor(t).to(device) for t in data)
        self.X = X.reshape(len(X), -1) if X.ndim > 2 else X  # images as rows
        self.y = y if y.is_floating_point() else y.long()  # a regression's real values stay float
        if len(self.X) == 0 or len(self.X) != len(self.y):
            raise ValueError(
                f"Training data needs matching, non-empty X and y; got {len(self.X)} and {len(self.y)}."
            )
        self.n = len(self.y)
        self.device = device
        self.generator = torch.Generator().manual_seed(seed)
        self.perm: torch.Tensor | None = None
        self.pos = 0  # examples of the current epoch served so far
        self.copy = self.X.element_size() * self.X.numel() <= SHUFFLE_COPY_BYTES
        self._epoch: tuple[torch.Tensor, torch.Tensor] | None = None  # small data, in this epoch's order
        self.resize(batch_size)

    def resize(self, batch_size: int) -> None:
        """A new batch size, from the next batch on (the epoch's order is kept)."""
        self.batch_size = min(batch_size, self.n)
        self.steps_per_epoch = math.ceil(self.n / self.batch_size)

    def next(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The next batch; a new permutation at the start of every epoch."""
        if self.batch_size >= self.n:  # full batch: no gather needed
            self.pos = self.n
            return self.X, self.y
        if self.perm is None or self.pos >= self.n:
            self.perm = torch.randperm(self.n, generator=self.generator).to(self.device, non_blocking=True)
            self.pos = 0
            if self.copy:
                self._epoch = (
                    torch.index_select(self.X, 0, self.perm),
                    torch.index_select(self.y, 0, self.perm),
                )
        start, self.pos = self.pos, self.pos + self.batch_size
        if self._epoch is not None:
            return self._epoch[0][start : self.pos], self._epoch[1][start : self.pos]
        idx = self.perm[start : self.pos]
        # index_select copies whole rows; X[idx] takes the general indexing path, ~7x slower here.
        return torch.index_select(self.X, 0, idx), torch.index_select(self.y, 0, idx)

    @property
    def epoch_done(self) -> bool:
        """Whether the last batch served ended a pass over the data."""
        return self.pos >= self.n

    @property
    def steps_left_in_epoch(self) -> int:
        """Optimizer steps to the end of the current pass over the data."""
        if self.pos >= self.n or self.pos == 0:
            return self.steps_per_epoch
        return math.ceil((self.n - self.pos) / self.batch_size)
