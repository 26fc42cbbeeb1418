"""Frames per second of the 2D playground in headless Chromium, and where a frame's time goes.

Run: python -m bench.browser_fps [--seconds 20] [--speed 100]. Serves the app, opens the
playground at its default preset in Debian's Chromium (1400×900), presses Play and, for the
given time, records in the page every new step the plane draws (a frame the visitor saw), the
bytes the server sent (frames over the frame socket, or HTTP if it won't open; the page's
updates over Streamlit's websocket), the CPU time
the browser's processes used a frame, by process (at 2 frames a second, `--speed 2`, a frame's
request costs about as much as its drawing), and its long tasks (main-thread time spent above
50 ms at a stretch: rendering that blocks the next frame). The server's build time a frame is
from the plane's debug line (?debug=1).

With `--tf-playground DIR` (TensorFlow Playground built from its own source: `npm ci && npm run
build` in a clone of tensorflow/playground; DIR is its dist/), a Chromium of the same build then
plays TF Playground, served from DIR on 127.0.0.1, at the same size: its frames a second (each a change of
its epoch counter: it trains a step and redraws once an animation frame) and its browser CPU a
frame, and this playground's rate against it.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.load import cpu_seconds, descendants, own_browser
from bench.timing import table
from pages.serving.frames import PATH
from tests.harness import NO_FRAME_SOCKET_JS, PLANE_STEP_JS, chromium, serve_app, wait_for_app

TARGET_FPS = 30  # frames a second a lone visitor should see at the default speed (TF Playground: 34)
DEFAULT_SPEED = 100  # steps a second: the playground's default
PACE_KEPT = 0.95  # of the stated steps a second, the least a lone visitor should see

# In the page: window.__frames, the time of each change of STEP's text (a frame drawn), seen once
# an animation frame, and window.__steps, the step it showed then; window.__long, the main
# thread's long tasks (ms)
_WATCH = """() => {
  window.__frames = [];
  window.__steps = [];
  window.__long = 0;
  let last = null;
  const tick = () => {
    const text = STEP;
    if (text !== last) {
      window.__frames.push(performance.now());
      window.__steps.push(Number(String(text).replace(/[^0-9]/g, "")));
      last = text;
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__long += e.duration;
  }).observe({ type: "longtask", buffered: false });
}"""
WATCH = _WATCH.replace("STEP", PLANE_STEP_JS)  # this playground: the step its plane drew last


VIEWPORT = {"width": 1400, "height": 900}
# TF Playground: its epoch counter, which changes once an animation frame while it plays
TF_WATCH = _WATCH.replace("STEP", 'document.querySelector("#iter-number").textContent')


def measure(url: str, seconds: float, speed: int, http: bool = False) -> dict[str, float]:
    """The measures of one tab's Play; with `http`, its frames over HTTP (the canvas's fallback
    when its frame socket won't open, and how every frame came before it had one)."""
    with chromium() as browser:
        page = browser.new_page(viewport=VIEWPORT)
        if http:
            page.add_init_script(NO_FRAME_SOCKET_JS)
        page.set_default_timeout(120_000)
        received = Counter()  # messages and bytes: over the frame socket, and Streamlit's websocket
        fetched = [0, 0]  # frames over HTTP (the canvas's fallback), and their bytes

        def on_response(response) -> None:
            if PATH in response.url:
                fetched[0] += 1
                fetched[1] += int(response.headers.get("content-length", 0))

        def on_socket(socket) -> None:
            kind = "frames" if PATH in socket.url else "page"

            def got(message) -> None:
                received[kind] += 1
                received[f"{kind} bytes"] += len(message)

            socket.on("framereceived", got)

        page.on("websocket", on_socket)
        page.on("response", on_response)
        # A run long enough to outlast the measurement (the default 2,000 epochs end in ~30 s).
        page.goto(f"{url}/playground?sps={speed}&epochs=100000&debug=1")
        wait_for_app(page, heading="2D playground")
        page.get_by_role("button", name="Play").click()
        page.get_by_role("button", name="Pause").wait_for()
        page.wait_for_timeout(2000)  # warm-up: the first frames carry the whole page
        page.evaluate(WATCH)
        before, http_before = received.copy(), list(fetched)
        cpu_before, start = browser_cpu_seconds(), time.perf_counter()
        page.wait_for_timeout(seconds * 1000)
        times, steps = page.evaluate("[window.__frames, window.__steps]")
        frames = len(times)
        long_ms = page.evaluate("window.__long")
        elapsed = time.perf_counter() - start
        cpu = browser_cpu_seconds()
        cpu.subtract(cpu_before)
        rate = page.locator(".plane .rate").inner_text() or "nan nan"
        page.get_by_role("button", name="Pause").click()
        page.close()
    build_ms = float(re.findall(r"nan|[\d.]+", rate)[1])
    n = max(frames, 1)
    return {
        "frames/s seen in the browser": frames / elapsed,
        # The steps the screen showed, first drawn to last: what a student counts as the pace
        "steps/s seen in the browser": (steps[-1] - steps[0]) / ((times[-1] - times[0]) / 1000)
        if frames > 1
        else float("nan"),
        "frames/s over the frame socket": (received["frames"] - before["frames"]) / elapsed,
        "frames/s fetched over HTTP": (fetched[0] - http_before[0]) / elapsed,
        "server build per frame (ms)": build_ms,
        "browser CPU per frame (ms)": 1000 * cpu.total() / n,
        **{f"  {label}": 1000 * cpu[kind] / n for kind, label in KINDS.items()},
        "KiB per frame": (received["frames bytes"] - before["frames bytes"] + fetched[1] - http_before[1])
        / n
        / 1024,
        "KiB/s over Streamlit's websocket": (received["page bytes"] - before["page bytes"]) / elapsed / 1024,
        "browser long tasks (ms/s)": long_ms / elapsed,
    }


@contextmanager
def serve_directory(directory: Path) -> Iterator[str]:
    """A static web server for `directory` on 127.0.0.1 and a free port, in a thread; its URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # no line a request on the bench's output
            pass

    handler = functools.partial(Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def measure_tf_playground(directory: Path, seconds: float, browser: Any = None) -> dict[str, float]:
    """TF Playground (its built dist/ in `directory`) playing at its defaults in Debian's
    Chromium (a fresh instance, as each of this playground's measures has) at the same window
    size: its frames a second and the browser's CPU a frame. In `browser` if given (Playwright's
    sync API runs one at a time: a test suite lends its own)."""
    check_tf_playground(directory)
    with serve_directory(directory) as url, own_browser(browser) as browser:
        page = browser.new_page(viewport=VIEWPORT)
        try:
            page.set_default_timeout(120_000)
            page.goto(f"{url}/index.html")
            page.locator("#play-pause-button").click()
            page.wait_for_function("document.querySelector('#iter-number').textContent !== '000,000'")
            page.wait_for_timeout(2000)  # warm-up, as for this playground
            page.evaluate(TF_WATCH)
            cpu_before, start = browser_cpu_seconds(), time.perf_counter()
            page.wait_for_timeout(seconds * 1000)
            frames = page.evaluate("window.__frames.length")
            elapsed = time.perf_counter() - start
            cpu = browser_cpu_seconds()
            cpu.subtract(cpu_before)
        finally:
            page.close()  # a lent browser goes back as it came
    return {"frames/s": frames / elapsed, "browser CPU per frame (ms)": 1000 * cpu.total() / max(frames, 1)}


def check_tf_playground(directory: Path) -> None:
    """Stop with a sentence unless `directory` holds a built TF Playground (before measuring)."""
    if not (directory / "index.html").is_file():
        raise SystemExit(f"{directory}: no index.html (build TF Playground with `npm ci && npm run build`)")


def against_tf_playground(ours: dict[str, float], tf: dict[str, float]) -> str:
    """This playground's lone visitor against TF Playground, in the same Chromium build and run."""
    fps = ours["frames/s seen in the browser"]
    head = "TF Playground (built from its source), the same Chromium build, the same run:"
    if not tf["frames/s"]:
        return f"{head} no frame in the time measured (did its Play start?)"
    return (
        f"{head} {tf['frames/s']:.2f} frames/s, {tf['browser CPU per frame (ms)']:.2f} ms of browser CPU "
        f"a frame; this playground {fps:.2f} frames/s: this / TF Playground = {fps / tf['frames/s']:.2f}x"
    )


KINDS = {  # Chromium's process types (--type=, --utility-sub-type=), as the report names them
    "renderer": "renderer (the page: script, layout, paint, raster, GC)",
    "browser": "browser process (requests, IPC, DevTools)",
    "gpu-process": "GPU process (the compositor's output)",
    "NetworkService": "network service",
}


def process_kind(command: bytes) -> str:
    """A Chromium process's kind from its command line: "browser" without a --type."""
    kind = re.search(rb"--type=([\w-]+)", command)
    if kind is None:
        return "browser"
    if kind.group(1) == b"utility" and (sub := re.search(rb"--utility-sub-type=([\w.]+)", command)):
        return sub.group(1).decode().rsplit(".", 1)[-1]  # network.mojom.NetworkService
    return kind.group(1).decode()


def browser_cpu_seconds() -> Counter[str]:
    """CPU time used by the Chromium processes this bench started (user + system), by kind
    (Playwright's driver, also started here, is not Chromium: its share is left out)."""
    used: Counter[str] = Counter()
    for pid in descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if "chrom" not in f.read():
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                used[process_kind(f.read())] += cpu_seconds(pid)
        except OSError:
            continue  # gone meanwhile
    return used


def arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--speed", type=int, default=DEFAULT_SPEED, help="steps a second")
    parser.add_argument(
        "--tf-playground",
        type=Path,
        metavar="DIR",
        help="TF Playground's built dist/ (npm ci && npm run build in its clone), measured in the same run",
    )
    return parser.parse_args(argv)


def report(result: dict[str, float], seconds: float, speed: int) -> str:
    """The table of `measure`'s result, and whether the frame rate met its target."""
    rows = [(name, f"{value:8.2f}") for name, value in result.items()]
    met = result["frames/s seen in the browser"] >= TARGET_FPS
    target = (
        f"target: at least {TARGET_FPS:g} frames/s seen in the browser: {'met' if met else 'NOT met'}"
        if speed >= DEFAULT_SPEED
        else f"no target below {DEFAULT_SPEED} steps a second (a frame a step: {speed} frames/s at most)"
    )
    if "steps/s seen in the browser" in result:
        pace = result["steps/s seen in the browser"]
        kept = f"{'met' if pace >= PACE_KEPT * speed else 'NOT met'} ({pace:.1f} of {speed})"
        target += f"\ntarget: at least {PACE_KEPT:.0%} of the {speed} steps a second stated: {kept}"
    return "\n".join(
        [
            f"2D playground, default preset, {speed} steps a second, {seconds:g} s of Play:",
            table(rows, ("measure", "value")),
            target,
        ]
    )


def transports(socket: dict[str, float], http: dict[str, float]) -> str:
    """The frame socket against the baseline, the same Play with its frames over HTTP."""
    cpu = "browser CPU per frame (ms)"
    return (
        f"the same Play with its frames over HTTP (the baseline): {http['frames/s seen in the browser']:.2f} "
        f"frames/s, {http[cpu]:.2f} ms of browser CPU a frame; over the frame socket "
        f"{socket[cpu]:.2f} ms: HTTP / socket = {http[cpu] / socket[cpu]:.2f}x"
    )


def main(argv: Sequence[str] | None = None) -> None:
    args = arguments(argv)
    if args.tf_playground is not None:
        check_tf_playground(args.tf_playground)  # a wrong path says so now, not after the measures
    with serve_app("bench-browser-fps.log") as url:
        result = measure(url, args.seconds, args.speed)
        baseline = measure(url, args.seconds, args.speed, http=True)
    print(report(result, args.seconds, args.speed))
    print(transports(result, baseline))
    if args.tf_playground is not None:
        print(against_tf_playground(result, measure_tf_playground(args.tf_playground, args.seconds)))


if __name__ == "__main__":
    main()
