"""MNIST training speed: the project's engine against the seed notes' loop and the GEMM limit.

Run: python -m bench.mnist_training [--steps 300] [--rounds 15] [--samples N]. On the same
model (784-128-10, ReLU, Adam), data and batch size, it prints:
- samples/s of mlp.train.Trainer (uint8 data sliced by a permutation, no per-step host sync,
  fused Adam, threads measured);
- samples/s of the seed notes' loop: DataLoader(TensorDataset(...), shuffle=True), with
  loss.item() and accuracy .item() every step;
- their ratio;
- the GEMM-bound limit: the model's matmul FLOPs per sample over a measured torch.matmul
  throughput at the same shapes, and how far the engine is from it.
The two loops alternate, round after round, and the medians are reported: this machine is
shared and noisy. Full MNIST is used when it is cached; otherwise a synthetic 60,000 × 784
uint8 tensor, and the output says which. --samples keeps only the first N digits (a smoke run).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from bench.timing import table
from mlp.data import load_mnist
from mlp.device import DEFAULT_THREADS, torch_threads
from mlp.model import MLP
from mlp.train import TrainConfig, Trainer

HIDDEN = 128


def dataset() -> tuple[torch.Tensor, torch.Tensor, str]:
    data = load_mnist(download=False)
    if data.source == "mnist":
        return (
            torch.from_numpy(data.x_train.copy()),
            torch.from_numpy(data.y_train.copy()),
            "full MNIST (cached)",
        )
    g = torch.Generator().manual_seed(0)
    X = torch.randint(0, 256, (60_000, 28, 28), dtype=torch.uint8, generator=g)
    y = torch.randint(0, 10, (60_000,), generator=g)
    return X, y, "synthetic 60,000 × 784 uint8 (full MNIST is not cached here)"


def engine_runner(X, y, batch: int):
    """A function that trains `steps` more steps with the project's engine."""
    trainer = Trainer(
        MLP(784, [HIDDEN], 10, seed=0),
        (X, y),
        None,
        TrainConfig(
            optimizer="adam", lr=1e-3, batch_size=batch, epochs=10**4, device="cpu", report_every=100
        ),
    )
    trainer.run_steps(60)  # warm-up, and the thread measurement
    engine_runner.threads = trainer.threads
    return trainer.run_steps


def notes_runner(X, y, batch: int):
    """The seed notes' loop, as a function that takes `steps` more steps."""
    torch.manual_seed(0)
    model = MLP(784, [HIDDEN], 10, seed=0)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(TensorDataset(X.reshape(len(X), -1).float() / 255, y), batch_size=batch, shuffle=True)
    batches = iter(loader)

    def run(steps: int) -> None:
        nonlocal batches
        for _ in range(steps):
            try:
                xb, yb = next(batches)
            except StopIteration:
                batches = iter(loader)
                xb, yb = next(batches)
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss.item()  # the notes log both every step: a host sync each
            (logits.argmax(1) == yb).float().mean().item()

    run(10)  # warm-up
    return run


def interleaved_rates(runners: dict, batch: int, steps: int, rounds: int) -> dict[str, float]:
    """Median samples/s of each runner, taking turns in short chunks so noise hits all alike."""
    rates: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(rounds):
        for name, run in runners.items():
            start = time.perf_counter()
            run(steps)
            rates[name].append(steps * batch / (time.perf_counter() - start))
    return {name: statistics.median(r) for name, r in rates.items()}


def gemm_limit(batch: int, threads: int, rounds: int = 15) -> tuple[float, float]:
    """(samples/s if training were only its matmuls, GFLOP/s measured) at this batch size."""
    a = torch.randn(batch, 784)
    W1, W2 = torch.randn(784, HIDDEN), torch.randn(HIDDEN, 10)
    h, dz2 = torch.randn(batch, HIDDEN), torch.randn(batch, 10)
    # Forward z1 = x W1, z2 = a1 W2; backward dW2 = a1ᵀ dz2, da1 = dz2 W2ᵀ, dW1 = xᵀ dz1.
    gemms = [(a, W1), (h, W2), (h.T, dz2), (dz2, W2.T), (a.T, h)]
    flops = sum(2 * x.shape[0] * x.shape[1] * w.shape[1] for x, w in gemms)
    with torch_threads(threads):
        for _ in range(20):
            [x @ w for x, w in gemms]
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(20):
                [x @ w for x, w in gemms]
            times.append((time.perf_counter() - start) / 20)
    per_step = min(times)  # the best the hardware did: a limit, not a typical time
    return batch / per_step, flops / per_step / 1e9


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--samples", type=int, help="train on the first N digits only (all if unset)")
    args = parser.parse_args(argv)
    steps, rounds = args.steps, args.rounds
    X, y, source = dataset()
    if args.samples:
        X, y, source = X[: args.samples], y[: args.samples], f"{source}, the first {args.samples:,}"
    print(f"Data: {source}. Model 784-{HIDDEN}-10, Adam. CPU threads available: {DEFAULT_THREADS}.")
    rows = []
    for batch in (128, 512):
        chunk = max(min(20, steps), steps * 128 // batch // 5)
        runners = {"engine": engine_runner(X, y, batch), "notes": notes_runner(X, y, batch)}
        rates = interleaved_rates(runners, batch, chunk, rounds)
        engine, baseline = rates["engine"], rates["notes"]
        limit, gflops = max(gemm_limit(batch, t, rounds) for t in {1, DEFAULT_THREADS})
        rows.append(
            (
                str(batch),
                f"{engine:10,.0f}",
                str(engine_runner.threads),
                f"{baseline:10,.0f}",
                f"{engine / baseline:5.2f}x",
                f"{limit:10,.0f}",
                f"{gflops:5.1f}",
                f"{limit / engine:5.2f}x",
            )
        )
    print(
        table(
            rows,
            (
                "batch",
                "engine samples/s",
                "threads",
                "notes' loop samples/s",
                "engine / notes",
                "GEMM-bound samples/s",
                "GEMM GFLOP/s",
                "limit / engine",
            ),
        )
    )


if __name__ == "__main__":
    main()
