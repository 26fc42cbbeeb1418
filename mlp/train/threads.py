"""How many CPU threads a run's matmuls get: measured on its first steps, not guessed."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager

import torch

from mlp.device import DEFAULT_THREADS, torch_threads


class ThreadTuner:
    """On the CPU with threads=0, time a few steps' products with 1 and with all threads; keep the faster.

    More threads win on big matmuls and lose on small ones, and lose badly when another
    process holds a core (each op waits at a barrier), so this is measured. It is measured on
    a throwaway copy of the network (`probe_step`), never on the run's own steps: the count
    changes a step's last bits (a sum split over threads adds in another order), so a run that
    measured its threads trains bit for bit as a run given the count it chose, from its first
    step, and its exported notebook (which sets that count) prints the same numbers. Whatever
    it sets, `scope()` gives the caller's thread count back when the block ends.

    On the NumPy path (`numpy=True`) torch runs on one thread and nothing is measured: the
    products are NumPy's BLAS's, and torch's few small ops there gain nothing from more threads.
    More only spin beside BLAS's own between calls: the MNIST page's network (784-128-10, batch
    128), 30 epochs on the sample with threads=2 on 2 cores, took 7.7 s, against 1.1 s on one.
    """

    def __init__(self, requested: int, device: torch.device) -> None:
        self.threads = requested  # 0 until measured
        self.pending = requested == 0 and device.type == "cpu" and DEFAULT_THREADS > 1
        if requested == 0 and not self.pending:
            self.threads = DEFAULT_THREADS

    def scope(self, numpy: bool = False) -> AbstractContextManager[None]:
        """The block runs with the chosen count (or the current one, until measured); on the
        NumPy path, with one."""
        return torch_threads(1 if numpy else self.threads or torch.get_num_threads())

    def used(self, numpy: bool = False) -> int:
        """torch's threads a step uses: 1 on the NumPy path; else the count (0 until measured)."""
        return 1 if numpy else self.threads

    def tune(self, steps: int, probe: int, probe_step: Callable[[], object], numpy: bool = False) -> None:
        """Time `probe` calls of `probe_step` (a step's work on a copy of the network) at each
        count, if not measured yet, and set the faster; never on the NumPy path, nor for a call
        of fewer than 4 × probe steps (a page's frame: measured by a later, longer call)."""
        if numpy or not self.pending or steps < 4 * probe:
            return
        timings = {}
        for threads in (1, DEFAULT_THREADS):
            torch.set_num_threads(threads)
            probe_step()  # the first call at a count warms its pool up: not timed
            start = time.perf_counter()
            for _ in range(probe):
                probe_step()
            timings[threads] = time.perf_counter() - start
        self.threads = min(timings, key=timings.get)
        self.pending = False
        torch.set_num_threads(self.threads)
