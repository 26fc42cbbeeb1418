"""pages.serving.turns: live frames in one fair line, one at a time, resting in proportion."""

import itertools
import threading
import time

import pytest

from pages.serving.turns import HALF_LIFE, Turns


def run_in_line(turns: Turns, names: list[str], seconds: float = 0.0) -> list[tuple]:
    """Each name queues (in order) for one turn of `seconds` of CPU work; (name, start, end, CPU
    seconds) per turn."""
    log, lock = [], threading.Lock()
    queued = threading.Semaphore(0)

    def visitor(name: str) -> None:
        told = []

        def heed() -> None:  # called on every poll while waiting; only the first says "in line"
            if not told:
                told.append(True)
                queued.release()

        with turns.turn(name, heed, poll=0.01):
            start, cpu = time.monotonic(), time.thread_time()
            while time.thread_time() - cpu < seconds:  # a frame's work: CPU time, like drawing
                pass
            with lock:
                log.append((name, start, time.monotonic(), time.thread_time() - cpu))

    holding, blocker = threading.Event(), threading.Event()

    def hold() -> None:  # takes the first turn and keeps it until everyone is in line
        with turns.turn("holder"):
            holding.set()
            blocker.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(30)
    threads = []
    for name in names:  # one after another: each is in line before the next arrives
        thread = threading.Thread(target=visitor, args=(name,))
        thread.start()
        assert queued.acquire(timeout=30)
        threads.append(thread)
    blocker.set()
    for thread in [holder, *threads]:
        thread.join(30)
    return log


def test_turns_are_taken_one_at_a_time_in_the_order_of_arrival():
    log = run_in_line(Turns(share=1.0), [f"v{i}" for i in range(8)], seconds=0.005)
    assert [name for name, *_ in log] == [f"v{i}" for i in range(8)]
    for (_, _, end, _), (_, start, _, _) in itertools.pairwise(log):
        assert start >= end  # never two at once


def test_after_each_turn_the_line_rests_so_frames_get_at_most_their_share():
    share = 0.5
    log = run_in_line(Turns(share=share), ["a", "b", "c", "d"], seconds=0.02)
    for (_, _, end, cpu), (_, next_start, _, _) in itertools.pairwise(log):
        assert next_start - end >= cpu * (1 - share) / share * 0.95  # a busy machine only adds
    busy = sum(cpu for *_, cpu in log[:-1])
    assert busy / (log[-1][1] - log[0][1]) <= share  # from the first turn to the last one's start


def test_a_click_while_waiting_gives_up_the_place_and_the_line_moves_on():
    turns = Turns()

    class ClickedError(Exception):
        pass

    def heed() -> None:
        raise ClickedError

    with turns.turn("holder"):
        with pytest.raises(ClickedError), turns.turn("clicker", heed, poll=0.01):
            pass  # never reached: the turn wasn't ours yet
        assert turns.waiting == 0
    with turns.turn("next"):  # the line isn't stuck behind the one who left
        pass
    assert turns.turns == 2


def test_an_error_in_a_turn_frees_the_line():
    turns = Turns()
    with pytest.raises(RuntimeError), turns.turn("a"):
        raise RuntimeError("a frame failed")
    with turns.turn("b"):
        pass
    assert turns.turns == 2


def test_players_counts_who_took_a_turn_lately():
    turns = Turns(share=1.0)
    for name in ("a", "b", "a", "c"):
        with turns.turn(name):
            pass
    assert turns.players() == 3


def test_share_must_be_a_fraction():
    with pytest.raises(ValueError, match="share"):
        Turns(share=0)


def test_the_turn_goes_to_whoever_used_the_least_compute_not_to_the_first_in_line():
    turns = Turns(share=1.0)
    with turns.turn("heavy"):  # a costly frame: 50 ms of CPU
        cpu = time.thread_time()
        while time.thread_time() - cpu < 0.05:
            pass
    log = run_in_line(turns, ["heavy", "a", "b", "c"], seconds=0.001)
    assert [name for name, *_ in log] == ["a", "b", "c", "heavy"]  # heavy came first, goes last
    assert turns.used("heavy") > 10 * max(turns.used(name) for name in "abc")


def test_a_visitors_use_fades_so_a_heavy_visitor_is_not_shut_out_for_long():
    turns = Turns(share=1.0)
    with turns.turn("heavy"):
        cpu = time.thread_time()
        while time.thread_time() - cpu < 0.02:
            pass
    used = turns.used("heavy")
    assert turns.used("heavy", now=time.monotonic() + HALF_LIFE) == pytest.approx(used / 2, rel=0.05)
    assert turns.used("nobody") == 0.0


def test_a_heavy_visitor_still_gets_the_turns_the_light_ones_leave():
    turns = Turns(share=1.0)
    stop, served = threading.Event(), {"heavy": 0, "light": 0}

    def play(name: str, cost: float, pause: float) -> None:
        for _ in range(200):  # bounded: ~1 s of playing at most
            if stop.is_set():
                return
            with turns.turn(name):
                cpu = time.thread_time()
                while time.thread_time() - cpu < cost:
                    pass
                served[name] += 1
            time.sleep(pause)  # a light visitor's canvas asks for its next frame 10 ms later

    threads = [
        threading.Thread(target=play, args=("heavy", 0.01, 0.0)),
        threading.Thread(target=play, args=("light", 0.001, 0.01)),
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    while min(served.values()) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()
    for thread in threads:
        thread.join(30)
    assert min(served.values()) >= 5, served


def test_a_turns_end_wakes_the_next_in_line_not_everyone_waiting(monkeypatch):
    """With a class's frames in line, the end of a turn wakes the one whose turn is next: waking
    all of them to find out cost the process 0.7-1.2 ms more CPU a turn with 32 waiting (bench.turns)."""
    turns, visitors, holding = None, 16, []
    blocker = threading.Lock()
    blocker.acquire()

    def hold() -> None:
        with turns.turn("holder"):
            holding.append(True)
            blocker.acquire(timeout=30)

    def visit(name: str) -> None:
        with turns.turn(name, poll=30.0):  # no timeouts: every wake is a notification
            pass

    threads = [threading.Thread(target=hold)]
    threads += [threading.Thread(target=visit, args=(f"v{i}",)) for i in range(visitors)]
    woken = []

    class Counting(threading.Condition):  # in use after the threads are made: only the line's count
        def wait(self, timeout=None):
            notified = super().wait(timeout)
            woken.append(notified)
            return notified

    monkeypatch.setattr(threading, "Condition", Counting)
    turns = Turns(share=1.0)
    threads[0].start()
    deadline = time.monotonic() + 30
    while not holding:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    for thread in threads[1:]:
        thread.start()
    while turns.waiting < visitors:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    blocker.release()
    for thread in threads:
        thread.join(30)
    assert turns.turns == visitors + 1
    assert sum(woken) <= visitors + 2  # one a turn (all 16 at each turn's end: 136)
