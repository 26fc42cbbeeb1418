"""Numbers as a page shows them: short, never cut off, with their unit."""

from __future__ import annotations

import math
import time
from collections import deque


def seconds_text(seconds: float) -> str:
    """0.25 -> '250 ms', 12.3 -> '12.3 s', 150 -> '2.5 min'; '–' when unknown."""
    if not math.isfinite(seconds) or seconds < 0:
        return "–"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def count_text(value: float) -> str:
    """A rate or a count in at most five characters: 950, 12.3k, 1.2M."""
    if not math.isfinite(value):
        return "–"
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.0f}"


def loss_text(value: float | None) -> str:
    """A loss in at most six characters: 0.0123, 1.2346, 472.5, 4.7e+05; '–' when unknown."""
    if value is None or not math.isfinite(value):
        return "–"
    if abs(value) >= 1000:
        return f"{value:.1e}"
    return f"{value:.4f}" if abs(value) < 10 else f"{value:.1f}"


class FrameRate:
    """Frames per second over the last few seconds, and the mean time the server took to build one."""

    def __init__(self, window: float = 3.0) -> None:
        self.window = window
        self.frames: deque[tuple[float, float]] = deque()  # (when it was built, seconds it took)

    def tick(self, build_seconds: float) -> None:
        now = time.monotonic()
        self.frames.append((now, build_seconds))
        while self.frames and self.frames[0][0] < now - self.window:
            self.frames.popleft()

    def text(self) -> str:
        """'6.7 frames/s, 21 ms to build one (server)'."""
        if len(self.frames) < 2:
            return "– frames/s, – ms to build one (server)"
        span = self.frames[-1][0] - self.frames[0][0]
        fps = (len(self.frames) - 1) / span if span > 0 else math.inf
        build = sum(b for _, b in self.frames) / len(self.frames)
        return f"{fps:.1f} frames/s, {build * 1000:.0f} ms to build one (server)"
