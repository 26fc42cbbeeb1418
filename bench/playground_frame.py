"""One animation frame of the 2D playground, server side, and the training engine's speed.

Run: python -m bench.playground_frame. Prints:
- the frame-time breakdown at the default settings (the steps of one frame, predicting the
  100×100 grid, building each figure and serialising it as st.plotly_chart does), and the
  chart payload per frame; next to the same frame built the way Streamlit demos often do
  it (plotly's validated constructors, a contour over nested lists, a Python-list scatter),
  measured in the same run;
- full-batch steps per second on a 2-16-16-2 net with 1,000 points for both engines, against
  the seed notes' loop (a .item() per step) in the same run.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import torch
import torch.nn.functional as F

from bench.timing import measure, table
from mlp.data import make_2d
from mlp.figures.classes import confusion_figure
from mlp.figures.curves import epoch_curves_figure
from mlp.figures.plane import boundary_figure, neurons_figure
from mlp.lessons.playground import PRESETS, make_points
from mlp.lessons.playground_run import Playground
from mlp.model import MLP
from mlp.train import TrainConfig, Trainer


def serialise(fig: go.Figure) -> str:
    return pio.to_json(fig.to_dict(), validate=False)  # what st.plotly_chart does with a Figure


def frame_parts(pg: Playground) -> dict[str, float]:
    """Seconds for each part of one frame, and the payload in bytes."""
    parts: dict[str, float] = {}
    t = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal t
        now = time.perf_counter()
        parts[name] = now - t
        t = now

    pg.run(pg.settings.speed)
    lap("training steps")
    probs = pg.grid_probs()
    maps = pg.neuron_maps()
    confusion = pg.confusion()
    curves = pg.curves()
    lap("grid, neurons, confusion")
    boundary = serialise(boundary_figure(probs, pg.points))
    lap("boundary figure")
    curve_json = serialise(epoch_curves_figure(curves))
    confusion_json = serialise(confusion_figure(confusion))
    lap("curves + confusion figures")
    neuron_json = [serialise(neurons_figure(m)) for m in maps]
    lap("neuron figures")
    parts["payload"] = len(boundary) + len(curve_json) + len(confusion_json) + sum(map(len, neuron_json))
    parts["payload boundary + curves"] = len(boundary) + len(curve_json)
    return parts


def naive_frame(pg: Playground) -> float:
    """The same frame as demos often build it: validated figures from Python lists, a contour."""
    start = time.perf_counter()
    pg.run(pg.settings.speed)
    probs = pg.grid_probs()
    x0, x1, y0, y1 = pg.points.extent
    xs = np.linspace(x0, x1, probs.shape[1]).tolist()
    ys = np.linspace(y0, y1, probs.shape[0]).tolist()
    fig = go.Figure(go.Contour(x=xs, y=ys, z=probs.argmax(-1).tolist(), showscale=False))
    for c in range(pg.points.classes):
        m = pg.points.y_train == c
        fig.add_trace(
            go.Scatter(x=pg.points.X_train[m, 0].tolist(), y=pg.points.X_train[m, 1].tolist(), mode="markers")
        )
    fig.update_layout(height=520)
    size = len(serialise(fig))
    curves = pg.curves()
    fig2 = go.Figure()
    for key in ("train_loss", "val_loss", "train_acc", "val_acc"):
        fig2.add_trace(go.Scatter(x=curves["epoch"].tolist(), y=curves[key].tolist()))
    size += len(serialise(fig2))
    naive_frame.payload = size
    return time.perf_counter() - start


def engine_speed() -> list[tuple[str, ...]]:
    X, y = make_2d("moons", 1000, seed=0)
    rows = []
    steps = 300

    def trainer_steps(engine: str):
        trainer = Trainer(
            MLP(2, [16, 16], 2, seed=0),
            (X, y),
            None,
            TrainConfig(engine=engine, optimizer="sgd", lr=0.1, batch_size=1000, epochs=10**6, device="cpu"),
        )
        return lambda: trainer.run_steps(steps)

    model = MLP(2, [16, 16], 2, seed=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)

    def notes_loop() -> None:
        for _ in range(steps):
            opt.zero_grad()
            loss = F.cross_entropy(model(Xt), yt)
            loss.backward()
            opt.step()
            loss.item()  # the notes print the loss: one host sync per step

    times = measure(
        {
            "seed notes' loop": notes_loop,
            "Trainer, autograd": trainer_steps("autograd"),
            "Trainer, manual": trainer_steps("manual"),
        },
        rounds=7,
        number=1,
    )
    base = times["seed notes' loop"]
    for name, t in times.items():
        rows.append((name, f"{steps / t:8.0f}", f"{base / t:5.2f}x"))
    return rows


def main(frames: int = 60) -> None:
    settings = PRESETS["spiral"]
    ours, naive = Playground(settings, make_points(settings)), Playground(settings, make_points(settings))
    for _ in range(5):  # warm-up
        frame_parts(ours)
        naive_frame(naive)
    samples: dict[str, list[float]] = {}
    naive_times = []
    for _ in range(frames):
        for name, value in frame_parts(ours).items():
            samples.setdefault(name, []).append(value)
        naive_times.append(naive_frame(naive))
    payload = statistics.median(samples.pop("payload"))
    same_charts = statistics.median(samples.pop("payload boundary + curves"))
    rows = [(name, f"{statistics.median(v) * 1000:6.2f} ms") for name, v in samples.items()]
    total = [sum(parts) for parts in zip(*samples.values(), strict=True)]
    rows.append(("frame total (median)", f"{statistics.median(total) * 1000:6.2f} ms"))
    rows.append(("frame total (90th percentile)", f"{np.percentile(total, 90) * 1000:6.2f} ms"))
    rows.append(("chart payload per frame", f"{payload / 1024:6.1f} KiB"))
    print(
        f"Frame at the default settings ({settings.speed} steps of {settings.hidden} on {settings.n} points):"
    )
    print(table(rows, ("part", "time")))
    median_naive = statistics.median(naive_times)
    print()
    print(
        table(
            [
                (
                    "this project's whole frame (5 charts)",
                    f"{statistics.median(total) * 1000:6.2f} ms",
                    f"{same_charts / 1024:6.1f} KiB",
                ),
                (
                    "validated lists + contour (baseline, 2 charts)",
                    f"{median_naive * 1000:6.2f} ms",
                    f"{naive_frame.payload / 1024:6.1f} KiB",
                ),
                (
                    "baseline / this project",
                    f"{median_naive / statistics.median(total):5.2f}x",
                    f"{naive_frame.payload / same_charts:5.2f}x",
                ),
            ],
            ("frame", "time", "payload of boundary + curves"),
        )
    )
    print()
    print("Full-batch steps per second, 2-16-16-2, 1,000 points (epoch ends evaluate nothing here):")
    print(table(engine_speed(), ("loop", "steps/s", "vs notes")))


if __name__ == "__main__":
    main()
