"""How much of the engine's speed the MNIST page delivers: Start → done in Chromium against `fit` alone.

Run: python -m bench.browser_mnist [--rounds 7] [--no-stop] [--epochs N] [--data sample synthetic].
First it times Stop, pressed mid-run, until "stopped" is on screen. Then, for each data set (the
bundled sample for 100 epochs; 60,000 synthetic digits for 3; --epochs N for N each) it serves
the app, opens the MNIST page with the run's settings in its link, presses Start and times until
the evaluation is on screen; then, in this process, trains the same run (same settings, the
thread count the server's executor gives a lone job: every core) with `fit` alone. Efficiency =
fit's time / the page's time; the target is 90%. Where the rest goes, from the job's own times (the page's
debug line): training in the job against fit alone (the page's redraws and the browser share
the machine), the job's own work around its steps (views, the final evaluation), and the rest of
Start → done (the click reaching the server, the job starting; the end reaching the page, its
drawing and painting).

Each round also counts as the issue's visitor did: the plain link (`/mnist?epochs=N`, no debug
line), Start pressed as soon as it is drawn (the curves may still be loading),
until the progress bar's "done · step N of N" is painted (in the page) and until an outside
poller (Playwright waiting on that text) sees it. The first of those is what the screen shows;
the second adds the poller's own delay, which the page's last redraw (the whole page again, its
tabs under the run) lengthens.

Last, what the machine allows: the CPU seconds Chromium used from Start to done, beside the CPU
seconds of `fit` alone. Where the browser shares the server's cores (a student's `streamlit
run`, this bench), the cores must do both, so no page can be done before (fit's + the
browser's CPU seconds) / cores: the bench prints that ceiling beside the target.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Sequence
from dataclasses import replace

from threadpoolctl import threadpool_limits

from bench.browser_fps import browser_cpu_seconds
from bench.timing import table
from mlp.data.mnist import SYNTHETIC_VAR, load_sample, synthetic
from mlp.lessons.mnist import MnistSettings, to_query
from mlp.runs.mnist import MnistRun
from pages.serving.jobs import machine_cores
from tests.harness import chromium, serve_app, wait_for_app

CASES = {
    "sample": ("bundled sample (4,000 digits), 100 epochs", None, MnistSettings(epochs=100, device="cpu")),
    "synthetic": ("synthetic 60,000 digits, 3 epochs", 60_000, MnistSettings(epochs=3, device="cpu")),
}


# In the page: when the Start button is pressed, and the first frame painted after the test
# accuracy appears (a MutationObserver, then requestAnimationFrame): what the visitor sees,
# without an outside poller's delay on either end.
WATCH = """() => {
  window.__done = new Promise((resolve) => {
    const button = [...document.querySelectorAll('button')].find((b) => b.innerText.includes('Start'));
    button.addEventListener('click', () => { window.__start = performance.now(); }, { capture: true });
    new MutationObserver((_, observer) => {
      if (window.__start && document.body.innerText.includes('Test accuracy')) {
        observer.disconnect();
        requestAnimationFrame(() => resolve(performance.now() - window.__start));
      }
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}"""


JOB_LINE = re.compile(r"Job: waited ([\d.]+) s, trained ([\d.]+) s, ([\d.]+) s busy")


def page_seconds(url: str, settings: MnistSettings) -> tuple[float, float, float, float]:
    """Start pressed → the test accuracy painted, in a fresh tab, timed in the page; the job's
    own (wall seconds from its start to its end, seconds the trainer was busy), from the page's
    debug line; and the CPU seconds Chromium used meanwhile."""
    with chromium() as browser:
        tab = browser.new_page(viewport={"width": 1400, "height": 900})
        tab.set_default_timeout(600_000)
        query = "&".join(f"{k}={v}" for k, v in to_query(settings).items())
        tab.goto(f"{url}/mnist?{query}&debug=1")
        wait_for_app(tab, heading="MNIST")
        tab.wait_for_selector(".js-plotly-plot")  # the (empty) curves: plotly.js loaded and drawn
        tab.evaluate("() => new Promise((done) => requestIdleCallback(done))")  # the browser idle
        tab.evaluate(WATCH)
        before = browser_cpu_seconds().total()
        tab.get_by_role("button", name="Start").click()
        milliseconds = tab.evaluate("() => window.__done")
        browser_cpu = browser_cpu_seconds().total() - before
        line = tab.get_by_text(JOB_LINE).first.inner_text()
        tab.close()
    _, trained, busy = (float(x) for x in JOB_LINE.search(line).groups())
    return milliseconds / 1000, trained, busy, browser_cpu


STOP_WATCH = """() => new Promise((resolve) => {
  const stop = [...document.querySelectorAll('[data-testid="stMainBlockContainer"] button')]
    .find((b) => b.innerText.includes('Stop'));
  stop.addEventListener('click', () => { window.__stop = performance.now(); }, { capture: true });
  new MutationObserver((_, observer) => {
    const bar = document.querySelector('[data-testid="stProgress"]');
    if (window.__stop && bar && bar.innerText.includes('stopped')) {
      observer.disconnect();
      requestAnimationFrame(() => resolve(performance.now() - window.__stop));
    }
  }).observe(document.body, { subtree: true, childList: true, characterData: true });
  stop.click();
})"""


# As WATCH, for the plain link: until the progress bar says "done" (the run's first words on screen).
DONE_WATCH = WATCH.replace(
    "document.body.innerText.includes('Test accuracy')",
    "document.querySelector('[data-testid=\"stProgress\"]')?.innerText.includes('done')",
)


def plain_seconds(url: str, settings: MnistSettings) -> tuple[float, float]:
    """The plain link, Start pressed once it is drawn: seconds until "done" is painted
    (timed in the page) and until an outside poller sees "done · step N of N"."""
    with chromium() as browser:
        tab = browser.new_page(viewport={"width": 1280, "height": 720})
        tab.set_default_timeout(600_000)
        tab.goto(f"{url}/mnist?epochs={settings.epochs}")
        wait_for_app(tab, heading="MNIST")
        start_button = tab.get_by_role("button", name="Start")
        start_button.wait_for()  # as soon as it can be pressed (it can come after the heading)
        tab.evaluate(DONE_WATCH)
        start = time.perf_counter()
        start_button.click()
        tab.get_by_test_id("stProgress").get_by_text(re.compile(r"done · step ([\d,]+) of \1")).wait_for()
        polled = time.perf_counter() - start
        painted = tab.evaluate("() => window.__done") / 1000
        tab.close()
    return painted, polled


def stop_seconds(url: str) -> float:
    """A long run started, then Stop pressed mid-run → "stopped" painted, timed in the page."""
    with chromium() as browser:
        tab = browser.new_page(viewport={"width": 1400, "height": 900})
        tab.goto(f"{url}/mnist?epochs=100&bs=16&device=cpu")
        wait_for_app(tab, heading="MNIST")
        tab.get_by_role("button", name="Start").click()
        tab.get_by_test_id("stProgress").get_by_text("running").wait_for()
        tab.wait_for_timeout(2000)  # mid-run, the page in its loop
        milliseconds = tab.evaluate(STOP_WATCH)
        tab.close()
    return milliseconds / 1000


def fit_seconds(n_synthetic: int | None, settings: MnistSettings) -> tuple[float, float]:
    """`fit` alone: its wall seconds and the CPU seconds it used (every thread of this process)."""
    data = load_sample() if n_synthetic is None else synthetic(n_synthetic)
    threads = machine_cores()  # as the server gives a lone job (pages/serving/jobs.py): torch's and BLAS's
    run = MnistRun(data, settings, threads=threads)
    with threadpool_limits(threads, user_api="blas"):  # the server keeps NumPy's BLAS to this too
        start, cpu = time.perf_counter(), time.process_time()
        run.trainer.fit()
        return time.perf_counter() - start, time.process_time() - cpu


def arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # Seven: with Chromium on the same 2 cores, a page round moves by ±0.25 s of ~2.8, and the
    # median of three moved the 100-epoch efficiency between 86.6% and 95.6% in four runs.
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-stop", action="store_true", help="skip timing Stop")
    parser.add_argument("--epochs", type=int, help="every run trains this many epochs (its own if unset)")
    parser.add_argument("--data", nargs="+", choices=list(CASES), default=list(CASES), help="(both)")
    return parser.parse_args(argv)


TARGET = 0.9  # issue 27: the page delivers at least 90% of fit alone


def breakdown(page: float, fit: float, trained: float, busy: float) -> tuple[str, ...]:
    """Where the page's time goes beyond fit's, in seconds and as shares of the page's time."""

    def part(seconds: float) -> str:
        return f"{seconds:5.2f} s ({seconds / page:5.1%})"

    return (part(busy - fit), part(trained - busy), part(page - trained))


def ceiling(name: str, fit: float, fit_cpu: float, browser_cpu: float) -> str:
    """What the machine allows a page whose browser shares its cores: the cores must do `fit`'s
    CPU seconds and the browser's, so the page can't be done before their sum / cores."""
    cores = machine_cores()
    soonest = max(fit, (fit_cpu + browser_cpu) / cores)
    return (
        f"{name}: Chromium used {browser_cpu:.2f} CPU-s from Start to done (median), fit {fit_cpu:.2f} "
        f"CPU-s in {fit:.2f} s; on {cores} cores shared, no page is done before {soonest:.2f} s: "
        f"at most {fit / soonest:.0%} of fit here"
    )


def report(rows: list[tuple[str, ...]], stops: list[float]) -> str:
    """The table of each data set's times, efficiency and where the rest went; the target; Stop's time."""
    header = (
        "MNIST run (784-128-10, batch 128)",
        "fit alone",
        "page: Start → done",
        "efficiency",
        "training slower in the job",
        "the job's views and evaluation",
        "click → job, job → painted",
    )
    stop = statistics.median(stops)
    return "\n".join(
        [
            table(rows, header),
            f"target: the page delivers at least {TARGET:.0%} of the engine's throughput",
            f"Stop → 'stopped' on screen: median {stop:.2f} s (the server hears it within 0.1 s)",
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    args = arguments(argv)
    rows, ceilings = [], []
    stops = [float("nan")]
    if not args.no_stop:
        with serve_app("bench-browser-mnist.log") as url:
            stops = [stop_seconds(url) for _ in range(args.rounds)]
    print(f"Stop pressed mid-run → 'stopped' painted: {[round(x, 2) for x in stops]} s", flush=True)
    for name, n_synthetic, settings in (CASES[data] for data in args.data):
        if args.epochs:
            name, settings = f"{name} (run for {args.epochs} here)", replace(settings, epochs=args.epochs)
        env = {SYNTHETIC_VAR: str(n_synthetic)} if n_synthetic else {}
        with serve_app("bench-browser-mnist.log", env=env) as url:
            page_seconds(url, MnistSettings(epochs=1, device="cpu"))  # warm-up: imports, first compile
            pages, fits, plains = [], [], []
            for _ in range(args.rounds):  # interleaved: the machine's mood moves both alike
                pages.append(page_seconds(url, settings))
                fits.append(fit_seconds(n_synthetic, settings))
                plains.append(plain_seconds(url, settings))  # the served digits, as the run's
        page, trained, busy, browser_cpu = (statistics.median(x) for x in zip(*pages, strict=True))
        fit, fit_cpu = (statistics.median(x) for x in zip(*fits, strict=True))
        times = [round(p[0], 2) for p in pages]
        print(f"  rounds: page {times}, fit {[round(x[0], 2) for x in fits]}", flush=True)
        ceilings.append(ceiling(name, fit, fit_cpu, browser_cpu))
        rows.append(
            (
                name,
                f"{fit:6.2f} s",
                f"{page:6.2f} s",
                f"{fit / page:6.1%}",
                *breakdown(page, fit, trained, busy),
            )
        )
        print(" | ".join(rows[-1]), flush=True)
        if plains:
            painted, polled = (statistics.median(x) for x in zip(*plains, strict=True))
            print(f"  rounds: plain link {[tuple(round(x, 2) for x in p) for p in plains]}", flush=True)
            for how, seconds in (("painted", painted), ("seen by an outside poller", polled)):
                rows.append(
                    (
                        f"  the plain link, 'done' {how}",
                        f"{fit:6.2f} s",
                        f"{seconds:6.2f} s",
                        f"{fit / seconds:6.1%}",
                        *("–",) * 3,
                    )
                )
    print()
    print(report(rows, stops))
    print("\n".join(ceilings))


if __name__ == "__main__":
    main()
