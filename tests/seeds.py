"""A promise tried on many seeds at once: each seed a job, one worker process per core.

The ten-seed and random-seed tests train a few hundred small runs, each on one core; run one
after another they left the machine's other core idle. Workers are spawned (not forked: the
parent's thread pools don't survive a fork), import the tests' module once, and train with one
thread each (torch's and BLAS's: two BLAS threads in each of two workers took 20× as long).
`promise` must be a module-level function, so that a worker can import it.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor

_pool: ProcessPoolExecutor | None = None


_limits: object = None


def _one_thread() -> None:
    """A worker per core, each on one thread: torch's and NumPy's BLAS alike."""
    global _limits
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    _limits = threadpool_limits(limits=1)  # kept: the limit lasts as long as the worker


def pool() -> ProcessPoolExecutor:
    global _pool
    if _pool is None:
        workers = max(1, min(4, len(os.sched_getaffinity(0))))
        context = multiprocessing.get_context("spawn")
        _pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_one_thread)
        atexit.register(_pool.shutdown, cancel_futures=True)
    return _pool


def misses(promise: Callable[[int], list[str]], seeds: Iterable[int]) -> dict[int, list[str]]:
    """What `promise(k)` found wrong on each seed k where it failed (nothing where it held)."""
    seeds = list(seeds)
    return {k: problems for k, problems in zip(seeds, pool().map(promise, seeds), strict=True) if problems}
