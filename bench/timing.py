"""Timing helpers for the benchmarks: alternate the contenders, report medians and ratios.

The machine is shared and noisy, so absolute times mean little; ratios measured in the same
run, with the contenders interleaved, are what the benchmarks print.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def measure(
    contenders: dict[str, Callable[[], object]], rounds: int = 15, number: int = 20
) -> dict[str, float]:
    """Median seconds per call of each contender, calling them in turn, round after round."""
    for fn in contenders.values():  # warm-up: allocator, caches, lazy imports
        fn()
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            start = time.perf_counter()
            for _ in range(number):
                fn()
            samples[name].append((time.perf_counter() - start) / number)
    return {name: statistics.median(times) for name, times in samples.items()}


def table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    """A plain-text table, columns padded to their widest cell."""
    cells = [header, *rows]
    widths = [max(len(str(r[i])) for r in cells) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
