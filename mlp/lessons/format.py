"""Numbers as a page shows them: short, never cut off, with their unit."""

from __future__ import annotations

import math


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
