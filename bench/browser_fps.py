"""Frames per second of the 2D playground in headless Chromium, and where a frame's time goes.

Run: python -m bench.browser_fps [--seconds 20] [--speed 100]. Serves the app, opens the
playground at its default preset in Debian's Chromium (1400×900), presses Play and, for the
given time, records in the page every new step the plane draws (a frame the visitor saw), the
bytes the server sent (frames over HTTP, the page's updates over the websocket), the CPU time
the browser's processes used a frame, and its long tasks (main-thread time spent above 50 ms
at a stretch: rendering that blocks the next frame). The server's build time a frame is from
the plane's debug line (?debug=1).
"""

from __future__ import annotations

import argparse
import os
import re
import time
from collections.abc import Sequence

from bench.load import cpu_seconds
from bench.timing import table
from pages.ui.frames import PATH
from tests.harness import PLANE_STEP_JS, chromium, serve_app, wait_for_app

TARGET_FPS = 6  # frames a second the browser should see

WATCH = """() => {
  window.__frames = [];
  window.__long = 0;
  let last = null;
  const tick = () => {
    const text = PLANE_STEP;
    if (text !== last) { window.__frames.push(performance.now()); last = text; }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__long += e.duration;
  }).observe({ type: "longtask", buffered: false });
}""".replace("PLANE_STEP", PLANE_STEP_JS)


def measure(url: str, seconds: float, speed: int) -> dict[str, float]:
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(120_000)
        received, fetched = [0], [0, 0]  # websocket bytes; frame route answers and their bytes

        def on_response(response) -> None:
            if PATH in response.url:
                fetched[0] += 1
                fetched[1] += int(response.headers.get("content-length", 0))

        page.on(
            "websocket",
            lambda ws: ws.on("framereceived", lambda f: received.__setitem__(0, received[0] + len(f))),
        )
        page.on("response", on_response)
        # A run long enough to outlast the measurement (the default 2,000 epochs end in ~30 s).
        page.goto(f"{url}/playground?sps={speed}&epochs=100000&debug=1")
        wait_for_app(page, heading="2D playground")
        page.get_by_role("button", name="Play").click()
        page.get_by_role("button", name="Pause").wait_for()
        page.wait_for_timeout(2000)  # warm-up: the first frames carry the whole page
        page.evaluate(WATCH)
        ws_before, http_before = received[0], list(fetched)
        cpu_before, start = browser_cpu_seconds(), time.perf_counter()
        page.wait_for_timeout(seconds * 1000)
        frames = page.evaluate("window.__frames.length")
        long_ms = page.evaluate("window.__long")
        elapsed = time.perf_counter() - start
        cpu = browser_cpu_seconds() - cpu_before
        rate = page.locator(".plane .rate").inner_text() or "nan nan"
        page.get_by_role("button", name="Pause").click()
        page.close()
    build_ms = float(re.findall(r"nan|[\d.]+", rate)[1])
    n = max(frames, 1)
    return {
        "frames/s seen in the browser": frames / elapsed,
        "frames/s fetched over HTTP": (fetched[0] - http_before[0]) / elapsed,
        "server build per frame (ms)": build_ms,
        "browser CPU per frame (ms)": 1000 * cpu / n,
        "KiB per frame over HTTP": (fetched[1] - http_before[1]) / n / 1024,
        "KiB/s over the websocket": (received[0] - ws_before) / elapsed / 1024,
        "browser long tasks (ms/s)": long_ms / elapsed,
    }


def browser_cpu_seconds() -> float:
    """CPU time used by every Chromium process on the machine (user + system)."""
    total = 0.0
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/comm") as f:
                if "chrom" in f.read():
                    total += cpu_seconds(int(entry))
        except OSError:
            continue  # gone meanwhile
    return total


def arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--speed", type=int, default=100, help="steps a second")
    return parser.parse_args(argv)


def report(result: dict[str, float], seconds: float, speed: int) -> str:
    """The table of `measure`'s result, and whether the frame rate met its target."""
    rows = [(name, f"{value:8.2f}") for name, value in result.items()]
    met = result["frames/s seen in the browser"] >= TARGET_FPS
    return "\n".join(
        [
            f"2D playground, default preset, {speed} steps a second, {seconds:g} s of Play:",
            table(rows, ("measure", "value")),
            f"target: at least {TARGET_FPS:g} frames/s seen in the browser: {'met' if met else 'NOT met'}",
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    args = arguments(argv)
    with serve_app("bench-browser-fps.log") as url:
        result = measure(url, args.seconds, args.speed)
    print(report(result, args.seconds, args.speed))


if __name__ == "__main__":
    main()
