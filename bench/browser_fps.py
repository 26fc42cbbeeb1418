"""Frames per second of the 2D playground in headless Chromium, and where a frame's time goes.

Run: python -m bench.browser_fps [--seconds 20] [--speed 10]. Serves the app, opens the
playground at its default preset in Debian's Chromium (1400×900), presses Play and, for the
given time, records in the page every change of the Step counter (a frame the visitor saw),
the bytes the server sent over the websocket, and the browser's long tasks (main-thread time
spent above 50 ms at a stretch: rendering that blocks the next frame). It also prints the
server's own frame rate and build time from the page's debug caption (?debug=1).
"""

from __future__ import annotations

import argparse
import re
import time

from bench.timing import table
from tests.harness import PLANE_STEP_JS, chromium, serve_app, wait_for_app

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
        received = [0]
        page.on(
            "websocket",
            lambda ws: ws.on("framereceived", lambda f: received.__setitem__(0, received[0] + len(f))),
        )
        # A run long enough to outlast the measurement (the default 2,000 epochs end in ~30 s).
        page.goto(f"{url}/playground?speed={speed}&epochs=100000&debug=1")
        wait_for_app(page, heading="2D playground")
        page.get_by_role("button", name="Play").click()
        page.get_by_role("button", name="Pause").wait_for()
        page.wait_for_timeout(2000)  # warm-up: the first frames carry the whole page
        page.evaluate(WATCH)
        bytes_before, start = received[0], time.perf_counter()
        page.wait_for_timeout(seconds * 1000)
        frames = page.evaluate("window.__frames.length")
        long_ms = page.evaluate("window.__long")
        elapsed = time.perf_counter() - start
        captions = page.get_by_text(re.compile(r"frames/s"))
        caption = captions.first.inner_text() if captions.count() else "nan nan"
        page.get_by_role("button", name="Pause").click()
        page.close()
    server_fps, build_ms = (float(x) for x in re.findall(r"nan|[\d.]+", caption)[:2])
    return {
        "frames/s seen in the browser": frames / elapsed,
        "frames/s built by the server": server_fps,
        "server build per frame (ms)": build_ms,
        "KiB/s over the websocket": (received[0] - bytes_before) / elapsed / 1024,
        "KiB per frame": (received[0] - bytes_before) / max(frames, 1) / 1024,
        "browser long tasks (ms/s)": long_ms / elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--speed", type=int, default=10)
    args = parser.parse_args()
    with serve_app("bench-browser-fps.log") as url:
        result = measure(url, args.seconds, args.speed)
    rows = [(name, f"{value:8.2f}") for name, value in result.items()]
    print(f"2D playground, default preset, speed {args.speed}, {args.seconds:g} s of Play:")
    print(table(rows, ("measure", "value")))
    met = result["frames/s seen in the browser"] >= 6
    print(f"target: at least 6 frames/s seen in the browser: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
