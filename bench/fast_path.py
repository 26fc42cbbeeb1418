"""The NumPy path against the torch path: 10 default playground steps, and where torch wins back.

Run: python -m bench.fast_path [--rounds 15] [--number 20] [--steps 20]. Prints:
- the cost of the playground's 10 default steps (spiral preset: 2-32-32-3, 480 training points,
  full batch, Adam; every step closes an epoch, evaluating the 96 test points and running the
  divergence guard), through Playground.run as a frame calls it, on the path the run takes by
  itself (NumPy) and with the NumPy path forbidden (torch autograd), interleaved in the same
  process: milliseconds each and the ratio, against the issue's 2 ms;
- the crossover: ms per step of both paths over a range of network and batch sizes, with each
  size's multiply-adds, beside mlp.train.paths.MAX_MULTIPLY_ADDS (the bound the rule uses).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace

from bench.timing import measure, table
from mlp.data import make_2d
from mlp.device import one_blas_thread
from mlp.lessons.playground import Settings, make_points
from mlp.model import MLP
from mlp.runs.playground import Playground
from mlp.train import TrainConfig, Trainer
from mlp.train.numpy_path import NumpyPath
from mlp.train.paths import MAX_MULTIPLY_ADDS, multiply_adds, switch_path

TARGET_MS = 2.0  # issue 27: the playground's 10 default steps in 2 ms or less
SETTINGS = replace(Settings(), epochs=100_000)  # long enough that no round finishes the run
SIZES = [  # (widths, batch): around the bound, on both sides, 2D and MNIST-like inputs
    ([2, 8, 8, 2], 100),
    ([2, 32, 32, 3], 480),
    ([2, 64, 64, 3], 480),
    ([2, 128, 128, 3], 480),
    ([784, 64, 10], 128),
    ([784, 128, 10], 128),
]


def default_steps(rounds: int, number: int) -> tuple[list[tuple[str, ...]], float]:
    """Rows of the 10-default-steps table; the NumPy path's milliseconds."""
    runs = {path: Playground(SETTINGS, make_points(SETTINGS)) for path in ("numpy", "torch")}
    switch_path(runs["torch"].trainer, fast_path=False)
    assert {name: run.trainer.path.name for name, run in runs.items()} == {"numpy": "numpy", "torch": "torch"}
    times = measure({name: (lambda run=run: run.run(10)) for name, run in runs.items()}, rounds, number)
    ms = {name: t * 1000 for name, t in times.items()}
    rows = [
        ("torch path (autograd, fused Adam)", f"{ms['torch']:6.2f} ms", "1.00x"),
        ("NumPy path (what the run takes)", f"{ms['numpy']:6.2f} ms", f"{ms['torch'] / ms['numpy']:5.2f}x"),
    ]
    return rows, ms["numpy"]


def crossover(rounds: int, steps: int) -> list[tuple[str, ...]]:
    """ms per step of both paths, by size (full-batch steps on toy data, no validation set)."""
    rows = []
    for widths, batch in SIZES:
        X, y = make_2d("spiral", batch, classes=min(widths[-1], 3), seed=0)
        if widths[0] != 2:  # an MNIST-like input: the same points, repeated across the pixels
            X = X.repeat(widths[0] // 2, axis=1)
        contenders = {}
        for fast in (True, False):
            model = MLP(widths[0], widths[1:-1], widths[-1], seed=0)
            cfg = TrainConfig(lr=0.001, batch_size=batch, epochs=10**6, device="cpu", threads=0)
            trainer = Trainer(model, (X, y), None, cfg)
            if fast:  # past the size bound too, to see where it lies
                trainer.path = NumpyPath(trainer)
            else:
                switch_path(trainer, fast_path=False)
            contenders["numpy" if fast else "torch"] = lambda t=trainer: t.run_steps(steps)
        times = measure(contenders, rounds, 1)
        macs = multiply_adds(widths, batch)
        mark = "<=" if macs <= MAX_MULTIPLY_ADDS else "> "
        rows.append(
            (
                "-".join(map(str, widths)) + f" x {batch}",
                f"{macs / 1e6:6.2f} M {mark} bound",
                f"{times['numpy'] / steps * 1000:7.3f}",
                f"{times['torch'] / steps * 1000:7.3f}",
                f"{times['torch'] / times['numpy']:5.2f}x",
            )
        )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    one_blas_thread()  # as the app's server runs (app.py): every frame on one thread
    parser = argparse.ArgumentParser(prog="python -m bench.fast_path", description=__doc__.split(".")[0])
    parser.add_argument("--rounds", type=int, default=15, help="rounds, the contenders interleaved (15)")
    parser.add_argument("--number", type=int, default=20, help="calls of 10 steps per round (20)")
    parser.add_argument("--steps", type=int, default=20, help="steps per timed call in the crossover (20)")
    args = parser.parse_args(argv)
    rows, numpy_ms = default_steps(args.rounds, args.number)
    print("10 default playground steps (2-32-32-3, 480 points, full batch, Adam), through Playground.run:")
    print(table(rows, ("path", "10 steps", "vs torch")))
    met = "met" if numpy_ms <= TARGET_MS else "NOT met"
    print(f"target: 10 default steps in {TARGET_MS:g} ms or less: {met} ({numpy_ms:.2f} ms)")
    print()
    print(f"Crossover, ms per full-batch step (the NumPy path is taken up to {MAX_MULTIPLY_ADDS / 1e6:g} M):")
    header = ("network x batch", "multiply-adds", "NumPy", "torch", "torch/NumPy")
    print(table(crossover(args.rounds, args.steps), header))


if __name__ == "__main__":
    main()
