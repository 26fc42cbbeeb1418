"""How many CPU threads a run's matmuls get: measured on its first steps, not guessed."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager

import torch

from mlp.device import DEFAULT_THREADS, torch_threads


class ThreadTuner:
    """On the CPU with threads=0, time a few real steps with 1 and with all threads; keep the faster.

    More threads win on big matmuls and lose on small ones, and lose badly when another
    process holds a core (each op waits at a barrier), so this is measured. Whatever it
    sets, `scope()` gives the caller's thread count back when the block ends.
    """

    def __init__(self, requested: int, device: torch.device) -> None:
        self.threads = requested  # 0 until measured
        self.pending = requested == 0 and device.type == "cpu" and DEFAULT_THREADS > 1
        if requested == 0 and not self.pending:
            self.threads = DEFAULT_THREADS

    def scope(self) -> AbstractContextManager[None]:
        """The block runs with the chosen count (or the current one, until measured)."""
        return torch_threads(self.threads or torch.get_num_threads())

    def tune(self, steps: int, probe: int, one_step: Callable[[], bool]) -> tuple[bool, int]:
        """Spend 2 × probe of `steps` measuring, if not done yet. Returns (stopped, steps left)."""
        if not self.pending or steps < 4 * probe:
            return False, steps  # measured already, or too short a call to measure: decide later
        timings = {}
        for threads in (1, DEFAULT_THREADS):
            torch.set_num_threads(threads)
            start = time.perf_counter()
            for _ in range(probe):
                if one_step():
                    return True, 0
            timings[threads] = time.perf_counter() - start
        self.threads = min(timings, key=timings.get)
        self.pending = False
        torch.set_num_threads(self.threads)
        return False, steps - 2 * probe
