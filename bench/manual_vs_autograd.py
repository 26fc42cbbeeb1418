"""One forward + backward pass: mlp.manual (NumPy, torch) against PyTorch autograd.

Run: python -m bench.manual_vs_autograd [--rounds 15] [--number 20]. Prints median time per
pass and the ratio to autograd, measured in the same run with the three interleaved.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from bench.timing import measure, table
from mlp.device import torch_threads
from mlp.manual import forward_backward
from mlp.model import MLP

SHAPES = [  # (label, N, d_in, hidden, K)
    ("2D playground 2-16-16-2, N=1000", 1000, 2, [16, 16], 2),
    ("MNIST 784-128-10, N=128", 128, 784, [128], 10),
    ("MNIST 784-256-128-10, N=256", 256, 784, [256, 128], 10),
]


def bench_shape(
    n: int, d_in: int, hidden: list[int], k: int, rounds: int = 15, number: int = 20
) -> dict[str, float]:
    """Median seconds per forward + backward pass for each engine at one set of shapes."""
    model = MLP(d_in, hidden, k, seed=0)
    g = torch.Generator().manual_seed(0)
    X, y = torch.randn(n, d_in, generator=g), torch.randint(0, k, (n,), generator=g)
    params_t = model.to_manual()
    params_np, X_np, y_np = model.to_manual("numpy"), X.numpy(), y.numpy()

    def autograd() -> None:
        model.zero_grad(set_to_none=True)
        F.cross_entropy(model(X), y).backward()

    return measure(
        {
            "autograd": autograd,
            "manual (torch)": lambda: forward_backward(params_t, X, y),
            "manual (NumPy)": lambda: forward_backward(params_np, X_np, y_np),
        },
        rounds,
        number,
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="rounds, the engines taking turns (15)")
    parser.add_argument("--number", type=int, default=20, help="passes timed together in a round (20)")
    args = parser.parse_args(argv)
    rows = []
    for label, *shapes in SHAPES:
        with torch_threads(min(2, torch.get_num_threads())):
            times = bench_shape(*shapes, args.rounds, args.number)
        for name, t in times.items():
            rows.append((label, name, f"{t * 1e6:8.1f} µs", f"{t / times['autograd']:5.2f}x"))
    print(table(rows, ("shapes", "engine", "median / pass", "vs autograd")))


if __name__ == "__main__":
    main()
