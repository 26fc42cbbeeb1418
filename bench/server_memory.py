"""The server's memory over a long session, with Streamlit's post-script GC off (the app's choice).

Run: python -m bench.server_memory [--minutes 5] [--visits 20]. Serves the app as configured
(.streamlit/config.toml: runner.postScriptGC = false), then in headless Chromium:
1. one visitor plays the 2D playground for --minutes (a script run every frame: the case
   the full collection after every run was paid for), the server's resident memory sampled
   every 5 s;
2. --visits short visits, each a fresh tab that opens the playground, plays 5 s and closes.
It prints RSS at the start, its peak and the end of each phase, and the growth over the
second half of the long session (a leak grows steadily; a bounded heap levels off). Pass
--gc to run the same with the post-script collection on, for comparison.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from bench.timing import table
from tests.harness import chromium, serve_app, wait_for_app

SAMPLE_SECONDS = 5.0


def rss_mb(pid: int) -> float:
    """Resident memory of a process, in MB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def play(browser, url: str):
    tab = browser.new_page(viewport={"width": 1400, "height": 900})
    tab.set_default_timeout(120_000)
    tab.goto(f"{url}/playground?epochs=100000")  # a run that outlasts the session
    wait_for_app(tab, heading="2D playground")
    tab.get_by_role("button", name="Play").click()
    tab.get_by_role("button", name="Pause").wait_for()
    return tab


def long_session(url: str, pid: int, minutes: float) -> list[float]:
    samples = [rss_mb(pid)]
    with chromium() as browser:
        tab = play(browser, url)
        deadline = time.monotonic() + minutes * 60
        while time.monotonic() < deadline:
            time.sleep(SAMPLE_SECONDS)
            samples.append(rss_mb(pid))
        tab.close()
    return samples


def short_visits(url: str, pid: int, visits: int) -> list[float]:
    samples = [rss_mb(pid)]
    with chromium() as browser:
        for _ in range(visits):
            tab = play(browser, url)
            tab.wait_for_timeout(5000)
            tab.close()
            samples.append(rss_mb(pid))
    return samples


def arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--visits", type=int, default=20)
    parser.add_argument("--gc", action="store_true", help="Streamlit's post-script GC on")
    return parser.parse_args(argv)


def report(played: list[float], visited: list[float], minutes: float, visits: int, gc: bool) -> str:
    """The table of both phases' RSS samples (MB), and the long session's samples."""
    half = played[len(played) // 2 :]
    minutes_in_half = (len(half) - 1) * SAMPLE_SECONDS / 60
    slope = (half[-1] - half[0]) / minutes_in_half if minutes_in_half else float("nan")
    rows = [
        (
            f"one visitor playing, {minutes:g} min",
            f"{played[0]:.0f}",
            f"{max(played):.0f}",
            f"{played[-1]:.0f}",
            f"{slope:+.1f} MB/min (median {statistics.median(half):.0f} MB)",
        ),
        (
            f"{visits} visits of 5 s, each tab closed",
            f"{visited[0]:.0f}",
            f"{max(visited):.0f}",
            f"{visited[-1]:.0f}",
            f"{(visited[-1] - visited[0]) / max(visits, 1):+.1f} MB per visit",
        ),
    ]
    setting = "on" if gc else "off (the app's setting)"
    return "\n".join(
        [
            f"Server RSS in MB, post-script GC {setting}:",
            table(rows, ("phase", "start", "peak", "end", "growth (second half / per visit)")),
            f"samples (every {SAMPLE_SECONDS:g} s): {[round(x) for x in played]}",
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    args = arguments(argv)
    options = {"runner.postScriptGC": "true"} if args.gc else {}
    with serve_app("bench-server-memory.log", options=options) as url:
        pid = serve_app.pid
        played = long_session(url, pid, args.minutes)
        visited = short_visits(url, pid, args.visits)
    print(report(played, visited, args.minutes, args.visits, args.gc))


if __name__ == "__main__":
    main()
