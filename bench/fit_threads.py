"""`fit` of the MNIST page's run on one thread and on every core: what `threads` costs a library user.

Run: python -m bench.fit_threads [--epochs 30] [--rounds 5]. In this process, as a script or a
notebook has it (NumPy's BLAS left at its own count, a thread per core), it trains the MNIST
page's default run (784-128-10, batch 128, Adam) on the bundled sample with `threads=1` and with
`threads` = every core, the two interleaved round after round, and prints the median seconds
and their ratio. That network takes the NumPy path, whose products are NumPy's BLAS's: torch's
threads there used to spin beside BLAS's between calls (7.7 s against 1.1 s for 30 epochs on
2 cores); the trainer now keeps torch on one thread on that path whatever `threads` says.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from bench.timing import measure, table
from mlp.data.mnist import load_sample
from mlp.device import DEFAULT_THREADS
from mlp.lessons.mnist import MnistSettings
from mlp.runs.mnist import MnistRun


def arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = arguments(argv)
    data = load_sample()
    settings = MnistSettings(epochs=args.epochs, device="cpu")
    counts = sorted({1, DEFAULT_THREADS})
    paths = {}

    def fit(threads: int):
        def run() -> None:
            work = MnistRun(data, settings, threads=threads)
            paths[threads] = work.trainer.path.name
            work.trainer.fit()

        return run

    seconds = measure({f"threads={t}": fit(t) for t in counts}, rounds=args.rounds, number=1)
    one = seconds["threads=1"]
    rows = [
        (name, paths[int(name.split("=")[1])], f"{s:7.2f} s", f"{s / one:5.2f}x")
        for name, s in seconds.items()
    ]
    print(f"The MNIST page's run, {args.epochs} epochs on the sample; {DEFAULT_THREADS} CPU threads here")
    print(table(rows, ("fit with", "path", "seconds (median)", "vs threads=1")))


if __name__ == "__main__":
    main()
