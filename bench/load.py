"""A lecture hall on one server: K visitors playing the 2D playground, MNIST runs started at once.

Run: python -m bench.load [--sessions 1 8 16] [--seconds 20] [--mnist 2]. Serves the app once
and, for each K, opens K playground tabs in headless Chromium (each its own visitor, its own
seed), presses Play in each, starts the MNIST runs, and for `seconds` records: every change of
each tab's Step counter (a frame that visitor saw), the health endpoint's latency (polled 4× a
second from another thread, as a load balancer would), the server's memory and CPU, and the
whole machine's CPU (the browsers share it: know which side you are measuring), and each side's
CPU a frame: the server, Chromium's renderers, its other processes, Playwright. MNIST runs are
timed Start → "done" against the same run alone, measured first. Last, what one replica holds
with its browsers elsewhere: the lesser of what its CPU allows and what its line of frames
allows (a default frame's turn, measured in this process before the server starts).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import os
import statistics
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Self

from bench.timing import table
from pages.serving.turns import SHARE
from tests.harness import (
    COUNT_FRAMES_JS,
    NO_FRAME_SOCKET_JS,
    chromium,
    leave,
    open_tab,
    open_tabs,
    serve_app,
    shared_context,
    visitor_tab,
    wait_for_app,
)

WATCH = COUNT_FRAMES_JS  # counts the frames a visitor sees
VIEWPORT = {"width": 1280, "height": 720}
MNIST_EPOCHS = 10
TIMEOUT_MS = 120_000  # the longest a click or a page may take under load before the run fails
TARGET_SESSIONS, TARGET_FPS = 32, 2.0  # issue 27: 32 visitors keep 2 frames a second each
TTL = 5  # seconds a closed session is kept (Streamlit's default is 120, for reconnecting)


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def cpu_seconds(pid: int) -> float:
    """CPU time the process has used (user + system)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, all cores."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]
    return (sum(values) - idle) / os.sysconf("SC_CLK_TCK"), sum(values) / os.sysconf("SC_CLK_TCK")


def descendants(root: int) -> list[int]:
    """Every process started, directly or not, by process `root`."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return sorted(found)


SIDES = ("server", "renderers", "browser's other processes", "Playwright", "other")
Processes = dict[int, tuple[str, float]]  # pid -> (its side, CPU seconds it has used)


def processes_by_side(server: int) -> Processes:
    """Every process this one started, directly or not, with its side and the CPU seconds it has
    used: the app's server (and any process it started), Chromium's renderers (a tab's page
    each), Chromium's other processes (its main process, the GPU process drawing every tab's
    frames, the network service), Playwright's driver, and any other (another server a test
    suite runs, say)."""
    found: Processes = {}
    for pid in descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read()
            seconds = cpu_seconds(pid)
        except OSError:
            continue  # gone already
        if pid == server or server in ancestors(pid):
            side = "server"
        elif b"chrom" in command:
            side = "renderers" if b"--type=renderer" in command else "browser's other processes"
        elif b"playwright" in command or b"run-driver" in command:
            side = "Playwright"
        else:
            side = "other"
        found[pid] = (side, seconds)
    return found


def cpu_by_side(before: Processes, after: Processes) -> dict[str, float]:
    """CPU seconds each side used between two processes_by_side: a process started in between
    counts from 0; one that ended in between is left out (its last seconds unknown)."""
    used = dict.fromkeys(SIDES, 0.0)
    for pid, (side, seconds) in after.items():
        then = before.get(pid)
        used[side] += seconds - (then[1] if then and then[0] == side else 0.0)
    return used


def ancestors(pid: int) -> list[int]:
    """The processes above `pid`, its parent first."""
    found = []
    with contextlib.suppress(OSError, ValueError):
        while pid > 1:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
            found.append(pid)
    return found


def browsers_in_the_back_row(nice: int = 10) -> None:
    """Lower the priority of the browser's own processes (nice 10: its main, GPU and utility
    processes, and the zygote that starts tabs).

    In a lecture hall each visitor's browser runs on their own machine; here they share the
    server's two cores. Chromium sets each tab's renderer back to normal priority itself (`ps`
    shows them at nice 0), and the renderers do most of the browsers' work: the tabs compete
    with the server on equal terms, a harder test than a lecture hall. The table reports the
    whole machine's CPU, browsers included."""
    for pid in descendants(os.getpid()):
        with contextlib.suppress(OSError):  # gone already
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"chrom" not in f.read():
                    continue  # the app servers keep their priority
            os.setpriority(os.PRIO_PROCESS, pid, nice)


class Background:
    """A loop (`_run`, until `_stop` is set) on a thread of its own while a `with` block runs."""

    def _run(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Probe(Background):
    """Polls the health endpoint and samples the server's memory from its own thread."""

    url: str
    pid: int
    latencies: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            start = time.perf_counter()
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=30) as r:
                    r.read()
                self.latencies.append(time.perf_counter() - start)
            except OSError:
                self.latencies.append(float("inf"))
            self.rss.append(rss_mb(self.pid))


def open_playground(browser, url: str, seed: int, http: bool = False):
    """A visitor on the playground; with `http`, one whose frames come over HTTP (the canvas's
    fallback when its frame socket won't open, and every frame's way before it had one)."""
    script = NO_FRAME_SOCKET_JS if http else None
    return open_tab(
        browser, f"{url}/playground?seed={seed}&epochs=100000", "2D playground", TIMEOUT_MS, script=script
    )


def open_playgrounds(browser, url: str, seeds: Sequence[int], http: bool = False) -> list:
    """Visitors on the playground, one a seed, arriving at once (see open_playground)."""
    script = NO_FRAME_SOCKET_JS if http else None
    urls = [f"{url}/playground?seed={seed}&epochs=100000" for seed in seeds]
    return open_tabs(browser, urls, "2D playground", TIMEOUT_MS, script=script)


def say(text: str) -> None:
    """A line of progress on stderr, as the bench goes: a long run is seen to be running."""
    print(f"[bench.load {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def start_mnist(browser, url: str, epochs: int = MNIST_EPOCHS):
    return open_tab(browser, f"{url}/mnist?epochs={epochs}&device=cpu", "MNIST", TIMEOUT_MS)


def run_mnist(pages: list) -> list[float]:
    """Press Start on every MNIST page at once; seconds from each press to its "done"."""
    started = []
    for page in pages:
        page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Start").click()
        started.append(time.perf_counter())
    times = []
    for page, start in zip(pages, started, strict=True):
        page.get_by_test_id("stProgress").get_by_text("done").wait_for()
        times.append(time.perf_counter() - start)
    return times


def measure(
    browser,
    url: str,
    pid: int,
    sessions: int,
    seconds: float,
    mnist: int,
    epochs: int = MNIST_EPOCHS,
    http: bool = False,
    pauses: int | None = None,
) -> dict[str, float]:
    """One row of the table: K playing visitors and `mnist` MNIST runs of `epochs`, for `seconds`;
    with `http`, the visitors' frames over HTTP; `pauses` of them (all, if None) then press Pause
    one after another, the rest still playing."""
    say(f"{sessions} visitors open the playground" + (" (frames over HTTP)" if http else ""))
    players = open_playgrounds(browser, url, range(sessions), http)
    trainers = [start_mnist(browser, url, epochs) for _ in range(mnist)]
    for page in players:
        page.get_by_role("button", name="Play").click()
    for page in players:
        page.get_by_role("button", name="Pause").wait_for()
        page.evaluate(WATCH)
    counted = [counted_frames(page) for page in players]  # each page's rate over its own interval
    say(
        f"{sessions} visitors playing"
        + (f", {mnist} MNIST runs started" if mnist else "")
        + f": {seconds:g} s"
    )
    with Probe(url, pid) as probe:
        # The CPU over the same `elapsed` as the rates (reading 32 tabs takes seconds under load)
        server_cpu, (busy, total), start = cpu_seconds(pid), machine_busy(), time.perf_counter()
        processes = processes_by_side(pid)
        mnist_times = run_mnist(trainers) if trainers else []
        left = seconds - (time.perf_counter() - start)
        if left > 0:
            (players or trainers)[0].wait_for_timeout(left * 1000)
        elapsed = time.perf_counter() - start
        server_cpu, (busy2, total2) = (cpu_seconds(pid) - server_cpu) / elapsed, machine_busy()
        sides = cpu_by_side(processes, processes_by_side(pid))
        now = [counted_frames(page) for page in players]
        fps = sorted(rate(last, then) for last, then in zip(now, counted, strict=True))
        sps = sorted(rate(last, then, of=2) for last, then in zip(now, counted, strict=True))
        if os.environ.get("MLP_BENCH_VERBOSE"):
            print("frames/s of each visitor:", " ".join(f"{f:.2f}" for f in fps), flush=True)
    frames = sum(fps) * elapsed
    median = statistics.median(fps) if fps else math.nan
    steps = statistics.median(sps) if sps else math.nan
    say(
        f"frames/s: slowest {min(fps, default=math.nan):.2f}, median {median:.2f}; steps/s shown: "
        f"slowest {min(sps, default=math.nan):.1f}, median {steps:.1f}; each presses Pause"
    )
    pause_seconds = []
    for page in players[:pauses]:  # a click must still land: Pause, timed until the page shows Play
        clicked = time.perf_counter()
        page.get_by_role("button", name="Pause").click()
        page.get_by_role("button", name="Play").wait_for()
        pause_seconds.append(time.perf_counter() - clicked)
    for page in players + trainers:
        leave(page)
    latencies = sorted(probe.latencies) or [float("nan")]
    return {
        "sessions": sessions,
        "frames over": "HTTP" if http else "socket",
        "fps min": fps[0] if fps else float("nan"),
        "fps median": median,
        "sps min": sps[0] if sps else float("nan"),
        "sps median": steps,
        "mnist s": max(mnist_times) if mnist_times else float("nan"),
        "health median s": statistics.median(latencies),
        "health p95 s": latencies[int(0.95 * (len(latencies) - 1))],
        "health max s": latencies[-1],
        "pause max s": max(pause_seconds) if pause_seconds else float("nan"),
        "rss peak MB": max(probe.rss),
        "server cpu %": 100 * server_cpu,
        # All in: the frames, the panels' reruns, clicks, health checks (and MNIST runs, if any).
        "server ms a frame": 1000 * server_cpu * elapsed / frames if frames else float("nan"),
        "machine cpu %": 100 * (busy2 - busy) / (total2 - total) * os.cpu_count(),
        # Where the machine's CPU went, a frame at a time (the browsers share these cores here)
        **{f"cpu a frame: {side}": 1000 * sides[side] / frames if frames else float("nan") for side in SIDES},
    }


def lecture_hall(
    counts: list[int],
    seconds: float,
    mnist: int,
    visitors: int = 0,
    options: dict[str, str] | None = None,
    browser: Any = None,
    epochs: int = MNIST_EPOCHS,
    batch: int = 10,
    http: bool = False,
    rates: bool = True,
    pauses: int | None = None,
    one_context: bool = False,
) -> tuple[list[dict[str, float]], dict[str, Any]]:
    """Every K in `counts` against one server (with `http`, each K again with its frames over
    HTTP: the baseline); the server's memory before, and after the sessions closed and expired
    (`server.disconnectedSessionTTL` is set short for that); then `visitors` more coming and
    going, `batch` at a time, and the memory after each batch. `rates` False leaves out what
    only the report's ratios need (the machine's speed, an MNIST run alone): a test's run, which
    may have fewer visitors press Pause (`pauses`, see measure). With `one_context`, the visitors'
    tabs share one browser context (tests/harness.py's shared_context: a third of the browser's
    CPU a tab; the suite's choice): the report's rates are then not those of separate browsers."""
    options = {"server.disconnectedSessionTTL": str(TTL), **(options or {})}
    from bench.fast_path import plain_numpy_ms  # torch and the app's engine: only for a lecture
    from bench.playground_frame import turn_ms

    # Before the server starts: a frame's turn in the line, and the day's speed of the machine
    turn, plain = (turn_ms(), plain_numpy_ms()) if rates else (float("nan"), float("nan"))
    if one_context and http:
        raise ValueError("frames over HTTP need contexts of their own (an init script each)")
    with serve_app("bench-load.log", options) as url, own_browser(browser) as browser:
        pid = serve_app.pid
        browsers_in_the_back_row()
        with visitors_in(browser, one_context) as where:  # where open_tab opens the visitors
            memory = {"rss start MB": rss_mb(pid), "turn ms": turn, "plain ms": plain}
            alone = measure(where, url, pid, 0, 0, 1, epochs)["mnist s"] if mnist and rates else float("nan")
            rows = []
            for k in counts:
                for over_http in (False, True) if http else (False,):
                    row = measure(where, url, pid, k, seconds, mnist, epochs, over_http, pauses)
                    row["mnist vs alone"] = row["mnist s"] / alone
                    rows.append(row)
            memory["rss peak MB"] = max(row["rss peak MB"] for row in rows)
            memory["rss after MB"] = expire(where, url, pid, TTL)
            memory["mnist alone s"], memory["mnist epochs"] = alone, epochs
            memory["churn MB"] = churn(where, url, pid, visitors, batch) if visitors else []
            memory["churn batch"] = batch
        browsers_in_the_back_row(nice=0)  # a lent browser goes back as it came
    return rows, memory


HEAVY = "hidden=" + ",".join(["128"] * 8) + "&n=2000&sps=2000&compare=1"  # the sidebar's largest setup


def counted_frames(page) -> tuple[float, float, float]:
    """The frames `page` has seen since WATCH began counting, when (its own clock, in s), and the
    step its plane showed last."""
    frames, now, step = page.evaluate("[window.__frames, performance.now(), window.__step]")
    return frames, now / 1000, step


def rate(now: tuple[float, ...], then: tuple[float, ...], of: int = 0) -> float:
    """Frames a second (`of` 2: steps shown a second) between two of a page's counted_frames:
    each page's own interval, so that the seconds it takes to read 32 tabs one after another
    count for none of them."""
    return (now[of] - then[of]) / (now[1] - then[1])


def frames_per_second(pages: list, seconds: float) -> list[float]:
    """Frames each of `pages` saw (a change of its plane's step) over the next `seconds`."""
    counted = [counted_frames(page) for page in pages]
    pages[0].wait_for_timeout(seconds * 1000)
    return [rate(counted_frames(page), then) for page, then in zip(pages, counted, strict=True)]


def heavy_visitor(
    browser: Any = None, seconds: float = 15, light: int = 3, one_context: bool = False
) -> dict[str, Any]:
    """`light` visitors play the default playground: alone, then while one more visitor plays the
    same (the control: what any fourth browser on these cores costs them), then while one more
    plays the largest setup the sidebar allows (hidden 8 × 128, 2,000 points, 2,000 steps a
    second, both engines). Frames a second of each: the light ones in each phase, the heavy one.
    With `one_context`, as lecture_hall's: the tabs share one browser context."""
    with serve_app("bench-heavy.log") as url, own_browser(browser) as browser:
        browsers_in_the_back_row()
        with visitors_in(browser, one_context) as where:
            players = open_playgrounds(where, url, range(light))
            for page in players:
                play(page)
            alone = frames_per_second(players, seconds)
            fourth = open_playground(where, url, light)
            play(fourth)
            *beside, _ = frames_per_second([*players, fourth], seconds)
            leave(fourth)
            heavy = open_tab(where, f"{url}/playground?{HEAVY}&epochs=100000", "2D playground", TIMEOUT_MS)
            play(heavy)
            heavy.wait_for_function("window.__frames >= 2", timeout=TIMEOUT_MS)  # it is playing
            *during, heavy_fps = frames_per_second([*players, heavy], seconds)
            note = heavy.locator(".st-key-pg_plane .note").inner_text()  # what the plane says of its steps
            for page in [*players, heavy]:
                leave(page)
        browsers_in_the_back_row(nice=0)
    return {"alone": alone, "beside": beside, "during": during, "heavy": heavy_fps, "note": note}


def play(page) -> None:
    """Press Play and count the plane's frames from now on (`window.__frames`)."""
    page.get_by_role("button", name="Play").click()
    page.get_by_role("button", name="Pause").wait_for()
    page.evaluate(WATCH)


def churn(browser, url: str, pid: int, sessions: int = 50, batch: int = 10, ttl: float = TTL) -> list[float]:
    """Visitors come and go: `batch` at a time open the playground, play a few frames and close,
    `sessions` in all. The server's RSS after each batch has gone (past the session TTL)."""
    after = []
    for _ in range(sessions // batch):
        say(f"{batch} more visitors come ({len(after) * batch + batch} of {sessions}), play and leave")
        pages = open_playgrounds(browser, url, range(batch))
        for page in pages:
            page.get_by_role("button", name="Play").click()
        for page in pages:
            page.get_by_role("button", name="Pause").wait_for()
        pages[0].wait_for_timeout(2000)
        for page in pages:
            leave(page)
        after.append(expire(browser, url, pid, ttl))
    return after


def expire(browser, url: str, pid: int, ttl: float) -> float:
    """The server's RSS once closed sessions have outlived their TTL. Streamlit drops expired
    sessions when its session store is next used, so a visitor comes and goes to make that happen."""
    say(f"closed sessions expire ({ttl:g} s)")
    time.sleep(ttl + 1)
    page = visitor_tab(browser, (VIEWPORT["width"], VIEWPORT["height"]))
    page.goto(url)
    wait_for_app(page)
    leave(page)
    time.sleep(1)
    return rss_mb(pid)


@contextmanager
def visitors_in(browser: Any, one_context: bool) -> Iterator[Any]:
    """Where the visitors' tabs open (open_tab and open_tabs take either): `browser`, a context each;
    or with `one_context`, one context they share (tests/harness.py's shared_context), closed
    when the block ends, however it ends."""
    if not one_context:
        yield browser
        return
    context = shared_context(browser, (VIEWPORT["width"], VIEWPORT["height"]))
    try:
        yield context
    finally:
        context.close()


@contextmanager
def own_browser(browser: Any) -> Iterator[Any]:
    """`browser` if given (Playwright's sync API runs one at a time: a test suite lends its own),
    else a Chromium of our own."""
    if browser is not None:
        yield browser
        return
    with chromium() as ours:
        yield ours


COLUMNS = (
    ("sessions", "K", "{:.0f}"),
    ("frames over", "frames over", "{}"),
    ("fps min", "frames/s min", "{:.2f}"),
    ("fps median", "frames/s median", "{:.2f}"),
    ("sps min", "steps/s min", "{:.1f}"),
    ("sps median", "steps/s median", "{:.1f}"),
    ("mnist vs alone", "MNIST vs alone", "{:.1f}×"),
    ("health median s", "health median", "{:.2f} s"),
    ("health p95 s", "health p95", "{:.2f} s"),
    ("health max s", "health max", "{:.2f} s"),
    ("pause max s", "Pause lands in", "{:.1f} s"),
    ("rss peak MB", "RSS peak", "{:.0f} MB"),
    ("server cpu %", "server CPU", "{:.0f}%"),
    ("machine cpu %", "machine CPU", "{:.0f}%"),
    ("server ms a frame", "server CPU a frame", "{:.1f} ms"),
)


def against_target(rows: list[dict[str, float]], memory: dict[str, float]) -> str | None:
    """Whether 32 visitors each kept TARGET_FPS, with the day's speed of the machine beside it."""
    from bench.fast_path import PLAIN_MS  # a module that imports torch: only when reporting

    row = next((r for r in rows if r["sessions"] == TARGET_SESSIONS and r["frames over"] == "socket"), None)
    if row is None:
        return None
    met = "met" if row["fps min"] >= TARGET_FPS else "NOT met"
    return (
        f"target: {TARGET_SESSIONS} visitors, their browsers on this machine, at least {TARGET_FPS:g} "
        f"frames/s each: {met} (the slowest {row['fps min']:.2f}); plain NumPy's 10 default steps "
        f"take {memory['plain ms']:.2f} ms today ({PLAIN_MS:g} when the targets were set)"
    )


def report(rows: list[dict[str, float]], memory: dict[str, float]) -> str:
    cells = [tuple(fmt.format(row[key]) for key, _, fmt in COLUMNS) for row in rows]
    lines = [table(cells, tuple(title for _, title, _ in COLUMNS))]
    lines.append(
        f"server RSS: {memory['rss start MB']:.0f} MB at start, {memory['rss peak MB']:.0f} MB at peak, "
        f"{memory['rss after MB']:.0f} MB after every session closed; "
        f"an MNIST run ({memory['mnist epochs']} epochs, the sample) alone: {memory['mnist alone s']:.1f} s"
    )
    for socket, http in itertools.pairwise(rows):
        if (socket["frames over"], http["frames over"]) == ("socket", "HTTP") and socket["sessions"]:
            lines.append(
                f"K = {socket['sessions']}, frames over the socket / over HTTP (the baseline): "
                f"frames/s min {socket['fps min'] / http['fps min']:.2f}x, "
                f"median {socket['fps median'] / http['fps median']:.2f}x"
            )
    playing = [row for row in rows if row["sessions"] and math.isfinite(row["server ms a frame"])]
    if playing:
        row = max(playing, key=lambda r: r["sessions"])
        lines.append(
            f"CPU a frame at K = {row['sessions']}: "
            + ", ".join(f"{side} {row[f'cpu a frame: {side}']:.1f} ms" for side in SIDES)
        )
        lines.append(replica_capacity(row["server ms a frame"], memory["turn ms"], row["sessions"]))
    if (target := against_target(rows, memory)) is not None:
        lines.append(target)
    if memory["churn MB"]:
        steps = ", ".join(f"{mb:.0f}" for mb in memory["churn MB"])
        batch = memory["churn batch"]
        lines.append(f"server RSS (MB) after each {batch} more visitors came, played and left: {steps}")
    return "\n".join(lines)


def replica_capacity(ms_a_frame: float, turn: float, sessions: int) -> str:
    """Frames a second one replica delivers with its visitors' browsers elsewhere: a replica is
    one interpreter lock, one core. Two bounds, the lesser holds: its CPU (1000 ms over the
    server's CPU per frame delivered, all in: frames, panels, clicks, health checks), and its
    line (pages.serving.turns), which gives frames at most SHARE of the time, a `turn` (ms of CPU)
    each. With a class playing, the line is full (32 visitors: ~29 frames waiting at each
    turn's start), so the line's bound is what a class gets unless the CPU runs out first."""
    cpu, line = 1000 / ms_a_frame, SHARE * 1000 / turn
    per_second = min(cpu, line)
    return (
        f"one replica (one core of Python), its browsers elsewhere: its CPU, 1000 ms / {ms_a_frame:.1f} ms "
        f"of server CPU a frame (all in, at K = {sessions}) = {cpu:.0f} frames/s; its line, "
        f"{SHARE:.0%} of the time / {turn:.2f} ms of CPU a frame's turn = {line:.0f} frames/s; "
        f"the lesser, {per_second:.0f} frames/s: {per_second / 2:.0f} visitors at 2 frames/s, "
        f"{per_second / 10:.0f} at 10"
    )


def arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 8, 16])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--mnist", type=int, default=2, help="MNIST runs started with each K")
    parser.add_argument(
        "--visitors", type=int, default=20, help="then this many come and go, 10 at a time (0: none)"
    )
    parser.add_argument(
        "--http",
        action="store_true",
        help="each K again with its frames over HTTP (the baseline), and the ratio",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = arguments(argv)
    rows, memory = lecture_hall(args.sessions, args.seconds, args.mnist, args.visitors, http=args.http)
    print(f"{args.seconds:g} s of K visitors playing the 2D playground, {args.mnist} MNIST runs at once:")
    print(report(rows, memory))


if __name__ == "__main__":
    main()
