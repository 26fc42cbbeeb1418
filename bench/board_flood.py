"""A class with a flood in its room: do the students' frames and the board hold?

Run: python -m bench.board_flood [--students 4] [--flood 300] [--seconds 15]. Serves the app once,
its rooms in a fresh SQLite file, and opens `students` visitors in headless Chromium, each
playing the 2D playground on a challenge in the room, and the instructor's live board. Two
phases of `seconds` each: the class alone, then the class while a script posts as fast as it can
from `flood` memberships (joined from as many addresses, up to the room's cap): each of its
threads posts a new result ten times a second, ten times what a page's check can, in a process
of its own at the lowest priority. (An attacker's machine is not the server's: a thread that
posted again without pause would only spin on this machine's two cores, in the queue of its own
process, taking the students' CPU whatever the server did. The store writes one post a member
a second however many come: what reaches the server is the writes and the board's rows.)

It prints each phase's frames a second a student (mean, slowest), the server's CPU, the
flood's posts and writes, and what the board costs with the flood's rows in it: the server's
time for one redraw's data (the ranked board, its tables' HTML) and the HTML's size, against
the same with the class alone. The issue's target: frames with the flood ≥ 90% of without.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from bench.load import (
    TIMEOUT_MS,
    browsers_in_the_back_row,
    counted_frames,
    cpu_seconds,
    own_browser,
    play,
    rate,
)
from bench.timing import table
from mlp.curriculum.challenges import CHALLENGES
from mlp.figures.board import ranks_table_parts
from mlp.rooms import Instructor, Result, Rooms, Store, Visitor
from tests.harness import button, open_tab, serve_app

CHALLENGE = "moons-20"  # the students' (met within a few epochs: they post at once)
TARGET = 0.9  # frames a student with the flood, against without
ATTEMPT_SECONDS = 0.1  # between a flooding member's posts: ten times a page's fastest check


def student_link(url: str, seed: int, code: str) -> str:
    query = dict(CHALLENGES[CHALLENGE].solution.query) | {
        "seed": str(seed),
        "epochs": "100000",
        "challenge": CHALLENGE,
        "room": code,
    }
    return f"{url}/playground?{urlencode(query)}"


def flood(url: str, code: str, members: int, seconds: float, counts: Any) -> None:
    """The attack, in a process of its own at the lowest priority: `members` join (each from its
    own address and browser), then each of their threads posts ten times a second, on every
    challenge in turn, for `seconds`. `counts`: [posts, written]."""
    import threading

    os.nice(19)
    rooms = Rooms(Store(url))
    joined = [
        rooms.join(code, f"flood {i}", Visitor(f"10.9.{i // 250}.{i % 250}", f"flood-{i:024d}"))
        for i in range(members)
    ]
    keys = [c.key for c in CHALLENGES.values()]
    stop = time.monotonic() + seconds
    lock = threading.Lock()

    def post(member, i: int) -> None:
        n = 0
        while time.monotonic() < stop:
            key = keys[n % len(keys)]
            challenge = CHALLENGES[key]
            score = (0.5 + (n % 500) / 1000) if challenge.metric == "test_acc" else 1.0 / (1 + n)
            answer = rooms.post(member, Result(key, score, score, 1, 100, f"/{challenge.page}?seed={i}"))
            with lock:
                counts[0] += 1
                counts[1] += answer == "posted"
            n += 1
            time.sleep(ATTEMPT_SECONDS)

    threads = [threading.Thread(target=post, args=(m, i)) for i, m in enumerate(joined)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def board_cost(teacher: Instructor, rounds: int = 20) -> tuple[float, int, int]:
    """(ms of the server's time for one redraw's data, the tables' HTML bytes, rows drawn)."""
    from pages.ui.board import HIDE, ranks

    started = time.process_time()
    for _ in range(rounds):
        board = teacher.board()
        html = [
            ranks_table_parts(ranks(c, "http://host"), "Setup", c.challenge.goal, {HIDE: HIDE}, HIDE)
            for c in board.challenges
        ]
    ms = 1000 * (time.process_time() - started) / rounds
    size = sum(len(frame) + sum(len(r) for r in rows) for frame, rows in html)
    return ms, size, sum(len(c.entries) for c in board.challenges)


def phase(name: str, tabs: list, pid: int, seconds: float) -> dict[str, Any]:
    counted = [counted_frames(tab) for tab in tabs]
    cpu, start = cpu_seconds(pid), time.perf_counter()
    tabs[0].wait_for_timeout(seconds * 1000)
    elapsed, cpu = time.perf_counter() - start, cpu_seconds(pid) - cpu
    fps = sorted(rate(counted_frames(tab), then) for tab, then in zip(tabs, counted, strict=True))
    return {
        "phase": name,
        "fps mean": statistics.fmean(fps),
        "fps min": fps[0],
        "server cpu %": 100 * cpu / elapsed,
    }


def flooded_class(
    students: int = 4, members: int = 300, seconds: float = 15, browser: Any = None
) -> dict[str, Any]:
    """Both phases (see the module's doc), and the board's cost without and with the flood."""
    with tempfile.TemporaryDirectory() as state:
        database = f"sqlite:///{state}/rooms.sqlite3"
        rooms = Rooms(Store(database))
        room, secret = rooms.create("A class and a flood", minutes=60, members=members + students + 10)
        teacher_rooms = Instructor(rooms, room.code, secret)
        with (
            serve_app("bench-board-flood.log", env={"MLP_PLAYGROUND_STATE": state}) as url,
            own_browser(browser) as browser,
        ):
            try:
                tabs = [
                    open_tab(browser, student_link(url, seed, room.code), "2D playground", TIMEOUT_MS)
                    for seed in range(students)
                ]
                for i, tab in enumerate(tabs):  # they join from the sidebar (the link filled the code)
                    tab.get_by_role("textbox", name="Your nickname").fill(f"student {i + 1}")
                    button(tab, "Join").click()
                    tab.locator(".st-key-room_member_box").wait_for()
                teacher = open_tab(
                    browser, f"{url}/board?room={room.code}#key={secret}", "Class board", TIMEOUT_MS
                )
                browsers_in_the_back_row()
                for tab in tabs:
                    play(tab)
                for tab in tabs:
                    tab.get_by_text("your best so far is posted").wait_for(timeout=TIMEOUT_MS)
                alone = phase("the class alone", tabs, serve_app.pid, seconds)
                cost_alone = board_cost(teacher_rooms)
                spawn = multiprocessing.get_context("spawn")  # (no fork of a process with Chromium's threads)
                counts = spawn.Array("l", 2)
                attacker = spawn.Process(
                    target=flood, args=(database, room.code, members, seconds + 30, counts)
                )
                attacker.start()
                deadline = time.monotonic() + 60
                while counts[0] < members and time.monotonic() < deadline:  # all joined and posting
                    time.sleep(0.2)
                posts_before = counts[0], counts[1]
                flooded = phase("with the flood", tabs, serve_app.pid, seconds)
                posts = counts[0] - posts_before[0], counts[1] - posts_before[1]
                cost_flooded = board_cost(teacher_rooms)
                teacher.get_by_text(f"{members + students} in").first.wait_for(timeout=TIMEOUT_MS)
                drawn = teacher.locator(f".st-key-board_ranks_{CHALLENGE} tbody tr").count()
                more = teacher.get_by_text("more below these").count()
                attacker.terminate()
                attacker.join()
                for tab in [*tabs, teacher]:
                    tab.context.close()
            finally:
                browsers_in_the_back_row(nice=0)
    return {
        "phases": [alone, flooded],
        "posts": posts,
        "seconds": seconds,
        "board": {"alone": cost_alone, "flooded": cost_flooded, "rows drawn": drawn, "more shown": more},
        "class": (students, members),
    }


def ratio(found: dict[str, Any], key: str = "fps mean") -> float:
    alone, flooded = found["phases"]
    return flooded[key] / alone[key]


def report(found: dict[str, Any]) -> str:
    students, members = found["class"]
    cells = [
        (p["phase"], f"{p['fps mean']:.2f}", f"{p['fps min']:.2f}", f"{p['server cpu %']:.0f}%")
        for p in found["phases"]
    ]
    posts, written = found["posts"]
    board = found["board"]
    return "\n".join(
        [
            f"{students} students in Chromium playing {CHALLENGE} in a room; then a flood of {members} "
            f"memberships posting {1 / ATTEMPT_SECONDS:g} times a second each; {found['seconds']:g} s a "
            "phase",
            table(cells, ("phase", "frames/s a student", "slowest", "server CPU")),
            f"with the flood vs alone: frames/s a student {ratio(found):.2f}x, slowest "
            f"{ratio(found, 'fps min'):.2f}x (target ≥ {TARGET:.2f}x)",
            f"the flood: {posts:,} posts in {found['seconds']:g} s; {written:,} of them a member's new best, "
            "written (the store writes one post a member a second at most)",
            "a board redraw's data (server): alone {:.1f} ms, {:,} bytes of HTML; with the flood {:.1f} ms, "
            "{:,} bytes, {} rows drawn".format(*board["alone"][:2], *board["flooded"]),
            f"the projector's table: {board['rows drawn']} rows drawn, "
            f"the rest counted: {bool(board['more shown'])}",
        ]
    )


def arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=4)
    parser.add_argument("--flood", type=int, default=300, help="memberships the script posts from")
    parser.add_argument("--seconds", type=float, default=15, help="each phase's")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = arguments(argv)
    print(report(flooded_class(args.students, args.flood, args.seconds)))


if __name__ == "__main__":
    main()
