"""What the line of turns (pages.serving.turns) costs the process, as a class waits in it.

Run: python -m bench.turns [--seconds 4]. K visitors, each a thread that asks for a turn, works
3 ms of CPU in it (about a frame's training and drawing) and comes back 50 ms later, as a
playing visitor's frames do. The same work behind a plain lock (no fairness, no rest, nothing to
wake but the lock's own) is the baseline, in the same run. Printed: turns a second and the
process's CPU a turn for both, and the ratio. Before a turn's end woke only the next in line,
it woke every waiter: with 32 visitors the line cost 1.27x the lock's CPU a turn (3.92 ms
against 3.10, and 261 turns a second against 321); waking the next alone, 1.06x (3.26 ms, 305).
"""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

import numpy as np

from bench.timing import table
from pages.serving.turns import Turns

WORK_SECONDS = 0.003  # CPU in a turn: about a default frame's
PAUSE_SECONDS = 0.05  # between a visitor's turns: the next frame is asked for once this one is drawn


def work() -> None:
    """WORK_SECONDS of CPU, in NumPy as a frame's is (it releases the interpreter lock at times)."""
    start, a = time.thread_time(), np.random.default_rng(0).random((64, 64))
    while time.thread_time() - start < WORK_SECONDS:
        a = a @ a
        a /= a.max()


def play(
    visitors: int, seconds: float, enter: Callable[[str], AbstractContextManager]
) -> tuple[float, float]:
    """Turns a second and CPU seconds a turn, `visitors` threads taking turns through `enter`."""
    stop, done, count = time.monotonic() + seconds, [], threading.Lock()

    def visitor(name: str) -> None:
        while time.monotonic() < stop:
            with enter(name):
                work()
            with count:
                done.append(1)
            time.sleep(PAUSE_SECONDS)

    cpu, wall = time.process_time(), time.monotonic()
    threads = [threading.Thread(target=visitor, args=(f"v{i}",)) for i in range(visitors)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    turns = max(1, len(done))
    return turns / (time.monotonic() - wall), (time.process_time() - cpu) / turns


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--visitors", type=int, nargs="+", default=[1, 8, 32])
    args = parser.parse_args(argv)
    rows = []
    for k in args.visitors:
        lock = threading.Lock()
        plain = play(k, args.seconds, lambda _name, lock=lock: lock)
        turns = Turns(share=1.0)  # no rest: the line's own cost, not the share it leaves others
        line = play(k, args.seconds, lambda name, turns=turns: turns.turn(name))
        rows.append(
            (
                str(k),
                f"{plain[0]:.0f}",
                f"{1000 * plain[1]:.2f}",
                f"{line[0]:.0f}",
                f"{1000 * line[1]:.2f}",
                f"{line[1] / plain[1]:.2f}x",
            )
        )
    header = (
        "K",
        "lock: turns/s",
        "lock: CPU a turn (ms)",
        "line: turns/s",
        "line: CPU a turn (ms)",
        "line / lock",
    )
    print(f"K visitors, {WORK_SECONDS * 1000:.0f} ms of CPU a turn, {PAUSE_SECONDS * 1000:.0f} ms between:")
    print(table(rows, header))


if __name__ == "__main__":
    main()
