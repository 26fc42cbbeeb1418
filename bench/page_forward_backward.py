"""Script run time of the forward & backward page, as AppTest measures it.

Run: python -m bench.page_forward_backward [--rounds 15]. Prints the median time of a rerun for the
default settings and for N=256, d_in=784, hidden=[256, 128], next to the same AppTest rerun
of a one-line page (the baseline: what any page costs) measured in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from streamlit.testing.v1 import AppTest

from bench.timing import table

ROOT = Path(__file__).resolve().parents[1]
TRIVIAL = "import streamlit as st\nst.write('baseline')\n"
BIG = {"fb_n": 256, "fb_d_in": 784, "fb_hidden": "256, 128", "fb_k": 10}


def rerun_times(at: AppTest, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
        assert not at.exception, at.exception
    return times


def page(settings: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page("pages/forward_backward.py").run()
    for key, value in (settings or {}).items():
        at.session_state[key] = value
    return at.run()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="reruns of each page, taking turns (15)")
    rounds = parser.parse_args(argv).rounds
    contenders = {
        "one-line page (baseline)": AppTest.from_string(TRIVIAL).run(),
        "default: N=4, 3-5-3": page(),
        "N=256, 784-256-128-10": page(BIG),
    }
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):  # interleaved, so a noisy neighbour hurts every contender alike
        for name, at in contenders.items():
            samples[name] += rerun_times(at, 1)
    base = statistics.median(samples["one-line page (baseline)"])
    rows = []
    for name, times in samples.items():
        median = statistics.median(times)
        rows.append(
            (name, f"{median * 1000:7.1f} ms", f"{max(times) * 1000:7.1f} ms", f"{median / base:6.1f}x")
        )
    print(table(rows, ("page", "median rerun", "slowest", "vs baseline")))


if __name__ == "__main__":
    main()
