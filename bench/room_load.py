"""A class of 50 in one room on one server: every result on the board within 2 s, frames unslowed.

Run: python -m bench.room_load [--students 50] [--browsers 8] [--seconds 20]. Serves the app once,
its rooms in a fresh SQLite file (or the PostgreSQL database `--database` names), and opens:

- `browsers` students in headless Chromium, each its own visitor, playing the 2D playground on a
  challenge (its solution's setup, their own seed): the page's whole work, frames, panels, the
  check and, in the room, its posts;
- the rest of the class as members posting through the same store as their pages would, each at
  the fastest pace a page checks a challenge (every 2 s, pages/serving/live.py), on the app's other
  challenges: the database's load and the board's. Every one of their posts changes what the
  board says about a challenge (a first result: "N in"; one that meets the goal: "M met"), so
  the board's own screen tells when it showed each;
- the instructor's tab: the home page while there is no room, the live board while there is.

Three phases of `seconds` each: without a room, in the room (the students join from the
sidebar; the others post), without again (they leave); a test's run (`without` False) has the
room's phase alone, as nothing it asserts needs the other two. It prints each phase's frames a second a
student (all of them, the slowest) and the server's CPU a frame; the room's against the mean of
the two without (each the same load otherwise); and the seconds from each result to the board
showing it: from a member's post, or, for a student in Chromium, from their first result in the
store (the page hands it to the rooms' thread, which writes it; a watcher reads the store ten
times a second), to the instructor's screen.
"""

from __future__ import annotations

import argparse
import heapq
import os
import re
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from bench.load import (
    TIMEOUT_MS,
    Background,
    browsers_in_the_back_row,
    counted_frames,
    cpu_seconds,
    own_browser,
    play,
    rate,
)
from bench.timing import table
from mlp.curriculum.challenges import CHALLENGES, Challenge
from mlp.rooms import Instructor, Membership, Result, Rooms, Store
from mlp.rooms.posts import POSTED
from tests.harness import button, open_tab, open_tabs, serve_app, wait_for_app

STUDENTS_CHALLENGE = "moons-20"  # the Chromium students' (met within a few epochs: they post at once)
PAGE_CHECK_SECONDS = 2.0  # the fastest a playground page checks its challenge (one player)
BOARD_ROW = "[class*='st-key-board_']"
# A student's screen once their first best went to the board (handed over, or written already)
POSTED_SENTENCE = re.compile("Posting your best|your best so far is posted")
# In the board's tab: every change of what the board says of a challenge ("N in · M met the
# goal"), with the wall clock's time, as it happens (a MutationObserver: no polling).
WATCH_BOARD_JS = """() => {
  window.__board = [];
  const last = {};
  const read = () => {
    for (const box of document.querySelectorAll("BOARD_ROW")) {
      const name = [...box.classList].find((c) => c.startsWith("st-key-board_"));
      const head = box.querySelector('[data-testid="stMarkdownContainer"]');  // the goal, the counts
      const said = head?.textContent.match(/(\\d+) in · (\\d+) met the goal/);
      if (!name || !said) continue;
      const key = name.slice("st-key-board_".length), now = `${said[1]}:${said[2]}`;
      if (last[key] !== now) { last[key] = now; window.__board.push([key, +said[1], +said[2], Date.now()]); }
    }
  };
  new MutationObserver(read).observe(document.body, { subtree: true, childList: true, characterData: true });
  read();
}""".replace("BOARD_ROW", BOARD_ROW)


@dataclass(frozen=True)
class Shown:
    """A result that changes what the board says: its challenge's `count` of `what` ("in" or
    "met") reaches `count` with it; `at`, the wall clock when it was written (or seen posted)."""

    challenge: str
    what: str
    count: int
    at: float


def scores(challenge: Challenge, jitter: float) -> tuple[float, float, float]:
    """A member's three results on `challenge`: a first one short of the goal, a better one still
    short, one that meets it (`jitter` < 0.01 tells members apart)."""
    if challenge.metric == "test_acc":
        return challenge.target - 0.2 - jitter, challenge.target - 0.05 - jitter, challenge.target + jitter
    return 3 * challenge.target + jitter, 1.5 * challenge.target + jitter, challenge.target / 2 - jitter / 10


@dataclass
class Class(Background):
    """Members posting from their own thread, each every `every` seconds from their own offset,
    through one challenge after another (each member starting at another); what the board must
    show is in `shown`, posts the store didn't write at once in `refused`."""

    rooms: Rooms
    members: list[Membership]
    challenges: list[Challenge]
    every: float = PAGE_CHECK_SECONDS
    shown: list[Shown] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    posts: int = 0

    def _run(self) -> None:
        start, n = time.monotonic(), len(self.members)
        due = [(start + i * self.every / n, i, 0) for i in range(n)]  # (when, member, their step)
        counts = {(c.key, what): 0 for c in self.challenges for what in ("in", "met")}
        while due and not self._stop.is_set():
            when, i, step = heapq.heappop(due)
            if self._stop.wait(max(0.0, when - time.monotonic())):
                return
            challenge = self.challenges[(i + step // 3) % len(self.challenges)]
            score = scores(challenge, i / 10_000)[step % 3]
            epoch = min(challenge.within or 10, 10)
            link = f"/{challenge.page}?{urlencode({'challenge': challenge.key, 'seed': i})}"
            answer = self.rooms.post(self.members[i], Result(challenge.key, score, score, epoch, 100, link))
            written = time.time()
            self.posts += 1
            if answer != POSTED:
                self.refused.append(answer)
            elif step % 3 != 1:  # the first result ("in") or the one that meets the goal ("met")
                what = "in" if step % 3 == 0 else "met"
                counts[challenge.key, what] += 1
                self.shown.append(Shown(challenge.key, what, counts[challenge.key, what], written))
            if step + 1 < 3 * len(self.challenges):
                heapq.heappush(due, (when + self.every, i, step + 1))


def delays(shown: Sequence[Shown], board: Sequence[Sequence[Any]]) -> list[float]:
    """Seconds from each result to the first time the board said its count had been reached
    (inf if it never did). `board`: the board tab's [challenge, in, met, ms since the epoch]."""
    found = []
    for s in shown:
        column = 1 if s.what == "in" else 2
        seen = [row[3] / 1000 for row in board if row[0] == s.challenge and row[column] >= s.count]
        found.append(min(seen) - s.at if seen else float("inf"))
    return found


def student_delays(written: Sequence[float], board: Sequence[Sequence[Any]]) -> list[float]:
    """The Chromium students: when the store first held k of their results (wall clock: Written)
    against the board first saying k are in."""
    shown = [Shown(STUDENTS_CHALLENGE, "in", k, at) for k, at in enumerate(sorted(written), start=1)]
    return delays(shown, board)


class Written(Background):
    """When the store first held each count of results on the students' challenge: read ten
    times a second from the store the pages write to, as the board reads it. (A student's page
    hands its post to the rooms' thread, which writes it a moment later; the page's "posted"
    comes only once a check finds no better result, seconds after the board showed the first.)"""

    def __init__(self, rooms: Rooms, code: str, secret: str, every: float = 0.1) -> None:
        self.instructor, self.every, self.at = Instructor(rooms, code, secret), every, []

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            now = time.time()
            for board in self.instructor.board(top=1).challenges:
                if board.challenge.key == STUDENTS_CHALLENGE:
                    self.at.extend([now] * (board.count - len(self.at)))


def student_link(url: str, seed: int, code: str) -> str:
    """The students' challenge, the solution's setup with their own seed, played without end."""
    query = dict(CHALLENGES[STUDENTS_CHALLENGE].solution.query) | {
        "seed": str(seed),
        "epochs": "100000",
        "challenge": STUDENTS_CHALLENGE,
        "room": code,
    }
    return f"{url}/playground?{urlencode(query)}"


def phase(name: str, students: list, pid: int, seconds: float) -> dict[str, Any]:
    """Frames a second of each student and the server's CPU over the next `seconds`."""
    counted = [counted_frames(tab) for tab in students]
    cpu, start = cpu_seconds(pid), time.perf_counter()
    students[0].wait_for_timeout(seconds * 1000)
    elapsed, cpu = time.perf_counter() - start, cpu_seconds(pid) - cpu
    fps = sorted(rate(counted_frames(tab), then) for tab, then in zip(students, counted, strict=True))
    return {
        "phase": name,
        "fps": fps,
        "fps mean": statistics.fmean(fps),
        "fps min": fps[0],
        "server cpu %": 100 * cpu / elapsed,
        "server ms a frame": 1000 * cpu / (sum(fps) * elapsed),
    }


def class_in_a_room(
    students: int = 50,
    browsers: int = 8,
    seconds: float = 20,
    database: str | None = None,
    browser: Any = None,
    without: bool = True,
) -> dict[str, Any]:
    """The three phases (see the module's doc), or with `without` False the room's alone; what
    each measured, and the delays."""
    with tempfile.TemporaryDirectory() as state:
        env = {"MLP_PLAYGROUND_STATE": state} | ({"MLP_DATABASE_URL": database} if database else {})
        store = Store(database or f"sqlite:///{state}/rooms.sqlite3")
        rooms = Rooms(store)
        room, secret = rooms.create("A class of 50", minutes=60)
        with serve_app("bench-room-load.log", env=env) as url, own_browser(browser) as browser:
            try:
                links = (url, room.code, secret)
                return _class(rooms, links, serve_app.pid, (students, browsers), seconds, browser, without)
            finally:
                browsers_in_the_back_row(nice=0)  # a lent browser goes back as it came
                store.close()


def _class(rooms, links, pid, sizes, seconds, browser, without) -> dict[str, Any]:
    (url, code, secret), (students, browsers) = links, sizes
    own = [student_link(url, seed, code) for seed in range(browsers)]
    tabs = open_tabs(browser, own, "2D playground", TIMEOUT_MS)  # the class arrives at once
    teacher = open_tab(browser, url, "MLP Playground", TIMEOUT_MS)
    browsers_in_the_back_row()
    for tab in tabs:
        play(tab)
    members = [rooms.join(code, f"student {i + 1}") for i in range(browsers, students)]
    others = [c for c in CHALLENGES.values() if c.key != STUDENTS_CHALLENGE]
    phases = [phase("without a room", tabs, pid, seconds)] if without else []

    teacher.goto(f"{url}/board?room={code}#key={secret}")  # the instructor's link
    wait_for_app(teacher, heading="Class board")
    teacher.evaluate(WATCH_BOARD_JS)
    with Written(rooms, code, secret) as written:
        for i, tab in enumerate(tabs):  # the students join from the sidebar (the link filled the code)
            tab.get_by_role("textbox", name="Your nickname").fill(f"student {i + 1}")
            button(tab, "Join").click()
        for tab in tabs:
            tab.locator(".st-key-room_member_box").wait_for()
            tab.get_by_text(POSTED_SENTENCE).wait_for(timeout=TIMEOUT_MS)  # their first best went
        with Class(rooms, members, others) as in_class:
            phases.append(phase("in the room", tabs, pid, seconds))
        teacher.wait_for_timeout(3000)  # the board's last redraws
    board = teacher.evaluate("window.__board")
    teacher.screenshot(path=str(_artifacts() / "room-load-board.png"))

    if without:
        for tab in tabs:
            tab.get_by_role("button", name="Leave the room").click()
        teacher.goto(url)
        wait_for_app(teacher, heading="MLP Playground")
        for tab in tabs:
            tab.locator(".st-key-room_member_box").wait_for(state="detached")
        phases.append(phase("without a room, again", tabs, pid, seconds))
    for tab in [*tabs, teacher]:
        tab.context.close()
    return {
        "phases": phases,
        "members": delays(in_class.shown, board),
        "students": student_delays(written.at, board),
        "posts": in_class.posts,
        "refused": in_class.refused,
        "class": (students, browsers),
    }


def _artifacts():
    from tests.harness import ARTIFACTS

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def room_vs_without(found: dict[str, Any], key: str) -> float:
    """The room's phase against the mean of the two without."""
    without, inside, again = found["phases"]
    return inside[key] / statistics.fmean([without[key], again[key]])


RATIOS = (
    ("fps mean", "frames/s a student"),
    ("fps min", "slowest"),
    ("server ms a frame", "server CPU a frame"),
)


def report(found: dict[str, Any], seconds: float) -> str:
    students, browsers = found["class"]
    cells = [
        (
            p["phase"],
            f"{p['fps mean']:.2f}",
            f"{p['fps min']:.2f}",
            f"{p['server cpu %']:.0f}%",
            f"{p['server ms a frame']:.1f} ms",
        )
        for p in found["phases"]
    ]
    lines = [
        f"A class of {students} in one room, {seconds:g} s a phase: {browsers} students in Chromium playing "
        f"{STUDENTS_CHALLENGE}, {students - browsers} posting every {PAGE_CHECK_SECONDS:g} s on the other "
        "challenges, the instructor's tab on the live board",
        table(cells, ("phase", "frames/s a student", "slowest", "server CPU", "server CPU a frame")),
    ]
    if len(found["phases"]) == 3:
        lines.append(
            "in the room vs without (the mean of the two): "
            + ", ".join(f"{name} {room_vs_without(found, key):.2f}x" for key, name in RATIOS)
        )
    for who in ("members", "students"):
        d = sorted(found[who])
        if not d:
            lines.append(f"result -> on the board, {who}: none in this run")
            continue
        lines.append(
            f"result -> on the board, {who} ({len(d)} results): median {statistics.median(d):.2f} s, "
            f"p95 {d[int(0.95 * (len(d) - 1))]:.2f} s, max {d[-1]:.2f} s"
        )
    refused = found["refused"]
    lines.append(
        f"{found['posts']} posts by the members in the room's phase; {len(refused)} not written at once"
    )
    return "\n".join(lines)


def arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=50)
    parser.add_argument("--browsers", type=int, default=8, help="of them, in Chromium (the rest post)")
    parser.add_argument("--seconds", type=float, default=20, help="each phase's")
    parser.add_argument("--database", help="a PostgreSQL URL (default: a fresh SQLite file)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = arguments(argv)
    found = class_in_a_room(args.students, args.browsers, args.seconds, args.database)
    print(report(found, args.seconds))
    if os.environ.get("MLP_BENCH_VERBOSE"):
        print("frames/s of each student:", [[f"{f:.2f}" for f in p["fps"]] for p in found["phases"]])


if __name__ == "__main__":
    main()
