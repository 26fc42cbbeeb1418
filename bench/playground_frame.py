"""One live frame of the 2D playground, as the server builds it, and the training engine's speed.

Run: python -m bench.playground_frame [--frames 60] [--steps 300] [--rounds 7]. Prints:
- the server's cost of one frame at the default settings (the spiral preset: 10 steps of a
  2-32-32-3 network on 480 training points), part by part as the frame route builds it
  (pages/serving/frames.py, Stream._frame): the training steps, the plane's grid prediction, the
  numbers and the banner, the boundary PNG and the JSON answer; CPU and wall time of each
  part, medians over the frames. Then the whole frame through the route's own code
  (Stream.next_frame, its turn in the fair line included) beside the sum of the parts, and the
  bytes a frame sends;
- the same frame drawn as Streamlit demos often draw it (the grid as a plotly contour over
  nested lists, the points as a scatter, serialised as st.plotly_chart does), the frames of the
  two interleaved in the same run: the baseline, and the ratio;
- full-batch steps per second on a 2-16-16-2 net with 1,000 points for both engines (autograd
  on the path it takes by itself, NumPy, and on the torch path), against the seed notes' loop
  (a .item() per step) in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import torch
import torch.nn.functional as F
from starlette.responses import JSONResponse

from bench.fast_path import PLAIN_MS, plain_numpy
from bench.timing import measure, table
from mlp.data import make_2d
from mlp.device import one_blas_thread
from mlp.figures.plane import shade_png
from mlp.lessons.playground import Settings, make_points
from mlp.model import MLP
from mlp.runs.playground import Playground
from mlp.train import TrainConfig, Trainer
from pages.serving import frames
from pages.serving.frames import FRAME_BUDGET, MAX_FPS, STEP_SECONDS, Stream, frame_steps
from pages.serving.turns import SHARE

TARGET_MS = 5.0  # issue 27's aim: a default frame's server CPU, all in
DRAW_TARGET_MS = 1.0  # ...and its grid prediction with the numbers
# The default settings, in a run long enough that no frame of the bench finishes it.
SETTINGS = replace(Settings(), epochs=100_000)


class Laps:
    """Wall and CPU seconds between successive calls, by the name of what just ended."""

    def __init__(self) -> None:
        self.parts: dict[str, tuple[float, float]] = {}
        self._last = (time.perf_counter(), time.process_time())

    def __call__(self, name: str) -> None:
        now = (time.perf_counter(), time.process_time())
        self.parts[name] = (now[0] - self._last[0], now[1] - self._last[1])
        self._last = now


def frame_parts(run: Playground, speed: int) -> tuple[dict[str, tuple[float, float]], int]:
    """(wall, CPU) seconds of each part of one frame, as Stream._frame builds it; its bytes."""
    lap = Laps()
    run.run(speed, budget=FRAME_BUDGET)
    lap(f"training ({speed} steps)")
    shade = run.view.grid_shade()
    lap(f"grid prediction ({shade.res}×{shade.res})")
    metrics, banner = run.view.live_metrics(), run.view.banner()
    lap("metrics + banner")
    image = shade_png(shade, run.points.classes, run.settings.discretize)
    lap("boundary PNG")
    frame = {
        "seq": 1,
        "step": run.trainer.step_count,
        "image": image,
        "metrics": metrics,
        "banner": banner[0] if banner else None,
        "finished": run.trainer.finished,
        "playing": True,
        "note": None,
        "build_ms": 0.0,
    }
    body = JSONResponse(frame).body  # what the route sends: starlette renders it here
    lap("JSON answer")
    return lap.parts, len(body)


def route_frame(stream: Stream, seconds: float = STEP_SECONDS) -> float:
    """CPU seconds of one frame through the route's own code (the HTTP server's part aside),
    `seconds` after the last: the steps due then (0.1 s: a busy server's frame, 10 default steps;
    1/MAX_FPS: a lone visitor's)."""
    stream._trained_at = frames.clock() - seconds  # as if this frame came `seconds` after the last
    stream._owed = 0.0
    start = time.process_time()
    status, body = stream.next_frame()
    assert status == 200 and body.get("playing"), body
    return time.process_time() - start


def turn_ms(frames: int = 30) -> float:
    """Median CPU milliseconds of a busy server's default frame (10 steps, the plane, the
    numbers, the image: Stream.next_frame, the part that holds a turn in the line), measured in
    this process with NumPy's BLAS on one thread, as the app's server runs it (and as it was after)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        stream = Stream("bench-turn")
        stream.update(Playground(SETTINGS, make_points(SETTINGS)), SETTINGS.speed, playing=True)
        times = [route_frame(stream) for _ in range(5 + frames)][5:]  # the first few warm up
    return 1000 * statistics.median(times)


def serialise(fig: go.Figure) -> str:
    return pio.to_json(fig.to_dict(), validate=False)  # what st.plotly_chart does with a Figure


def demo_frame(run: Playground, speed: int) -> tuple[float, float, int]:
    """The baseline: the same frame drawn as demos often draw it, validated plotly figures from
    Python lists, a contour for the regions. (Wall, CPU) seconds, and its bytes."""
    lap = Laps()
    run.run(speed)
    probs = run.view.grid_probs()
    metrics = run.view.live_metrics()
    p = run.points
    x0, x1, y0, y1 = p.extent
    xs = np.linspace(x0, x1, probs.shape[1]).tolist()
    ys = np.linspace(y0, y1, probs.shape[0]).tolist()
    fig = go.Figure(go.Contour(x=xs, y=ys, z=probs.argmax(-1).tolist(), showscale=False))
    for c in range(p.classes):
        m = p.y_train == c
        fig.add_trace(go.Scatter(x=p.X_train[m, 0].tolist(), y=p.X_train[m, 1].tolist(), mode="markers"))
    fig.update_layout(height=520, title=" · ".join(f"{k} {v}" for k, v in metrics))
    size = len(serialise(fig))
    lap("frame")
    return *lap.parts["frame"], size


def frame_table(frames: int) -> tuple[str, float, float, float]:
    """The breakdown of a default frame and the baseline beside it, over `frames` frames each;
    the median CPU milliseconds of the whole frame through the route, of its grid and numbers,
    and of 10 steps of plain NumPy (bench.fast_path's, this machine's speed now)."""
    runs = [Playground(SETTINGS, make_points(SETTINGS)) for _ in range(3)]
    ours, theirs = runs[0], runs[1]
    stream, lone = Stream("bench"), Stream("bench-lone")
    stream.update(runs[2], SETTINGS.speed, playing=True)
    lone.update(Playground(SETTINGS, make_points(SETTINGS)), SETTINGS.speed, playing=True)
    parts: dict[str, list[tuple[float, float]]] = {}
    sizes, route, alone, demo, demo_sizes, plain = [], [], [], [], [], []
    numpy_steps = plain_numpy(10)
    for i in range(min(5, frames) + frames):  # the first few warm up: allocator, caches, lazy imports
        start = time.process_time()
        numpy_steps()
        plain_cpu = time.process_time() - start
        laps, size = frame_parts(ours, frame_steps(SETTINGS.speed))
        *timing, demo_size = demo_frame(theirs, frame_steps(SETTINGS.speed))
        cpu, cpu_alone = route_frame(stream), route_frame(lone, 1 / MAX_FPS)
        if i >= min(5, frames):
            for name, value in laps.items():
                parts.setdefault(name, []).append(value)
            sizes.append(size)
            demo.append(tuple(timing))
            demo_sizes.append(demo_size)
            route.append(cpu)
            alone.append(cpu_alone)
            plain.append(plain_cpu)

    def ms(values: Sequence[float]) -> str:
        return f"{statistics.median(values) * 1000:6.2f} ms"

    rows = [(name, ms([c for _, c in v]), ms([w for w, _ in v])) for name, v in parts.items()]
    wall_sums = [sum(w for w, _ in laps) for laps in zip(*parts.values(), strict=True)]
    cpu_sums = [sum(c for _, c in laps) for laps in zip(*parts.values(), strict=True)]
    rows.append(("sum of the parts", ms(cpu_sums), ms(wall_sums)))
    rows.append(("whole frame through the route (Stream.next_frame)", ms(route), "(waits its turn)"))
    rows.append(("the route's frame, 90th percentile", f"{np.percentile(route, 90) * 1000:6.2f} ms", ""))
    steps = SETTINGS.speed / MAX_FPS
    rows.append(
        (f"a lone visitor's frame at {MAX_FPS}/s ({steps:g} steps), through the route", ms(alone), "")
    )
    demo_wall, demo_cpu = [w for w, _ in demo], [c for _, c in demo]
    rows.append(("baseline: a plotly contour + scatter frame", ms(demo_cpu), ms(demo_wall)))
    cpu_ratio = statistics.median(demo_cpu) / statistics.median(cpu_sums)
    wall_ratio = statistics.median(demo_wall) / statistics.median(wall_sums)
    rows.append(("baseline / this project's parts", f"{cpu_ratio:5.2f}x", f"{wall_ratio:5.2f}x"))
    size, demo_size = statistics.median(sizes), statistics.median(demo_sizes)
    s = SETTINGS
    lines = [
        f"One frame at the default settings ({frame_steps(s.speed)} steps of {s.kind}, hidden {s.hidden}, "
        f"{len(ours.points.y_train)} training points), medians of {frames} frames:",
        table(rows, ("part", "CPU", "wall")),
        f"bytes a frame: {size / 1024:.1f} KiB of JSON; the baseline's figure {demo_size / 1024:.1f} KiB "
        f"({demo_size / size:.1f}x)",
    ]
    draw = [
        g + m
        for (_, g), (_, m) in zip(
            *(parts[n] for n in parts if n.startswith(("grid", "metrics"))), strict=True
        )
    ]
    medians = (statistics.median(x) * 1000 for x in (route, draw, plain))
    return "\n".join(lines), *medians


def engine_speed(steps: int = 300, rounds: int = 7) -> list[tuple[str, ...]]:
    X, y = make_2d("moons", 1000, seed=0)

    def trainer_steps(engine: str, fast_path: bool = True):
        cfg = TrainConfig(engine=engine, optimizer="sgd", lr=0.1, batch_size=1000, epochs=10**6, device="cpu")
        trainer = Trainer(MLP(2, [16, 16], 2, seed=0), (X, y), None, replace(cfg, fast_path=fast_path))
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
            "Trainer, autograd (its own path: NumPy here)": trainer_steps("autograd"),
            "Trainer, autograd (torch path)": trainer_steps("autograd", fast_path=False),
            "Trainer, manual": trainer_steps("manual"),
        },
        rounds=rounds,
        number=1,
    )
    base = times["seed notes' loop"]
    return [(name, f"{steps / t:8.0f}", f"{base / t:5.2f}x") for name, t in times.items()]


def main(argv: Sequence[str] | None = None) -> None:
    one_blas_thread()  # as the app's server runs (app.py): every frame on one thread
    parser = argparse.ArgumentParser(
        prog="python -m bench.playground_frame", description=__doc__.split(".")[0]
    )
    parser.add_argument("--frames", type=int, default=60, help="frames measured, after 5 of warm-up (60)")
    parser.add_argument("--steps", type=int, default=300, help="steps of each engine's timed run (300)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds of the engines' timing (7)")
    args = parser.parse_args(argv)
    text, route_ms, draw_ms, plain_ms = frame_table(args.frames)
    print(text)
    print(
        f"this machine now: 10 steps of plain NumPy (bench.fast_path's baseline) take {plain_ms:.2f} ms; "
        f"they took {PLAIN_MS:g} ms when the targets below were set, so each is also given in those units"
    )
    for what, ms, target in (
        (f"a default frame in {TARGET_MS:g} ms of server CPU", route_ms, TARGET_MS),
        (f"its grid and numbers in {DRAW_TARGET_MS:g} ms", draw_ms, DRAW_TARGET_MS),
    ):
        met = "met" if ms <= target else "NOT met"
        ratio = target / PLAIN_MS
        met_ratio = "met" if ms / plain_ms <= ratio else "NOT met"
        print(
            f"target: {what} or less: {met} ({ms:.2f} ms); as set, {ratio:.2f}x plain NumPy or less: "
            f"{met_ratio} ({ms / plain_ms:.2f}x)"
        )
    frames = SHARE * 1000 / route_ms
    print(
        f"capacity, frames alone: a replica (one core of Python) gives frames at most {SHARE:.0%} of its "
        f"time (pages.serving.turns): {SHARE:.1f} × 1000 ms / {route_ms:.2f} ms = {frames:.0f} frames/s, "
        f"{frames / 10:.0f} visitors at 10 frames/s (the panels' reruns and the rest: python -m bench.load)"
    )
    print()
    print("Full-batch steps per second, 2-16-16-2, 1,000 points (epoch ends evaluate nothing here):")
    print(table(engine_speed(args.steps, args.rounds), ("loop", "steps/s", "vs notes")))


if __name__ == "__main__":
    main()
