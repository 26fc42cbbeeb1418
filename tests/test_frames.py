"""pages/serving/frames.py: the playground's frames over HTTP, one visitor's stream at a time."""

import gc
import itertools
import json
import threading
import time
from dataclasses import replace

import pytest
from streamlit import config

from mlp.lessons.playground import PRESETS, Settings
from mlp.runs.playground import current_run
from pages.serving.frames import (
    BUSY,
    CLASS_FPS,
    FAILED,
    FRAME_BUDGET,
    GONE,
    LEASE_SECONDS,
    MAX_FPS,
    PATH,
    STEP_SECONDS,
    Stream,
    capped_note,
    fps_cap,
    frame_path,
    frame_steps,
    late_note,
    routes,
    serve_frame,
)
from pages.serving.turns import shared_turns
from tests.harness import free_port

QUICK = replace(Settings(), epochs=10)  # full batch: one step an epoch, ten steps in all


def playing(settings: Settings = PRESETS["moons"], speed: int = 100) -> Stream:
    stream = Stream("visitor")
    stream.update(current_run(None, settings), speed, playing=True)
    return stream


def test_each_frame_trains_one_frames_steps_and_draws_them(clock):
    stream = playing(speed=100)
    answers = []
    for _ in range(3):  # a tab asking every 0.1 s (a busy server's pace): 10 steps a frame
        clock[0] += STEP_SECONDS
        answers.append(serve_frame(stream.token))
    assert [status for status, _ in answers] == [200] * 3
    frames = [body for _, body in answers]
    assert [f["step"] for f in frames] == [10, 20, 30]
    assert [f["seq"] for f in frames] == [2, 3, 4]  # after the page's own frame, 1
    assert [label for label, _ in frames[-1]["metrics"]] == [
        "Epoch",
        "Step",
        "Train loss",
        "Test loss",
        "Test accuracy",
    ]
    assert dict(frames[-1]["metrics"])["Step"] == "30"
    assert frames[-1]["image"].startswith("data:image/png;base64,")
    assert frames[-1]["playing"] and not frames[-1]["finished"] and frames[-1]["banner"] is None


@pytest.mark.parametrize(("speed", "apart"), [(100, 1 / MAX_FPS), (2000, 1 / MAX_FPS), (5, 0.2), (1, 1.0)])
def test_the_server_holds_a_stream_to_its_pace(clock, speed, apart):
    stream = playing(speed=speed)
    # A replayer asking back to back waits its turn: slot after slot, MAX_FPS a second at most,
    # and below MAX_FPS steps a second a frame a step
    assert stream.frame_seconds == pytest.approx(apart)
    assert [round(stream.reserve() / apart, 6) for _ in range(3)] == [0.0, 1.0, 2.0]
    clock[0] += 10.0  # a tab that asks at its own pace never waits
    assert stream.reserve() == 0.0
    clock[0] += apart
    assert stream.reserve() == 0.0


def test_a_visitors_cap_is_shared_as_more_play_and_never_below_a_class_pace():
    assert [fps_cap(n) for n in (0, 1, 2, 3, 4, 16, 50)] == [MAX_FPS, MAX_FPS, 20, 40 / 3, 10, 10, 10]
    assert fps_cap(4) == CLASS_FPS == 1 / STEP_SECONDS  # a class: a frame every 0.1 s, as before


def test_others_playing_slow_a_visitors_frames_to_their_share(clock, monkeypatch):
    monkeypatch.setattr(shared_turns(), "players", lambda: 2)
    assert playing(speed=100).frame_seconds == pytest.approx(1 / 20)
    monkeypatch.setattr(shared_turns(), "players", lambda: 16)
    stream = playing(speed=100)
    assert stream.frame_seconds == pytest.approx(STEP_SECONDS)
    start = clock[0]
    assert [serve_frame(stream.token)[1]["step"] for _ in range(3)] == [10, 20, 30]  # 10 a frame
    assert clock[0] - start == pytest.approx(2 * STEP_SECONDS)


def test_each_frame_tells_the_canvas_the_pace_as_players_come_and_go(clock, monkeypatch):
    monkeypatch.setattr(shared_turns(), "players", lambda: 16)
    stream = playing(speed=100)  # Play pressed in a class: the page's run said 0.1 s
    assert serve_frame(stream.token)[1]["interval"] == pytest.approx(STEP_SECONDS)
    monkeypatch.setattr(shared_turns(), "players", lambda: 1)  # the class left; no page run since
    assert serve_frame(stream.token)[1]["interval"] == pytest.approx(1 / MAX_FPS)


def test_a_faster_speed_does_not_wait_out_the_slower_speeds_slot(clock):
    stream = playing(speed=1)  # a frame a second
    serve_frame(stream.token)
    assert stream.reserve() == pytest.approx(1.0)  # the next slot, a second on
    stream.update(stream.run, 1000, playing=True)  # sped up before that slot came
    assert stream.reserve() <= 1 / MAX_FPS + 1e-9


def test_with_the_server_to_itself_a_visitor_gets_max_fps_at_their_speed(clock):
    stream = playing(speed=100)
    start, frames = clock[0], [serve_frame(stream.token)[1] for _ in range(MAX_FPS)]
    assert clock[0] - start == pytest.approx((MAX_FPS - 1) / MAX_FPS)  # MAX_FPS frames in a second...
    steps = [b["step"] - a["step"] for a, b in itertools.pairwise(frames)]
    assert set(steps) <= {2, 3} and frames[-1]["step"] in (99, 100)  # ...at 100 steps a second


@pytest.mark.parametrize("speed", [100, 2000])
def test_a_busy_servers_frames_carry_no_more_steps_than_at_ten_a_second(clock, speed):
    stream = playing(speed=speed)
    for gap in (0.25, 1.0, 5.0):  # a frame's turn came late: its steps are capped, not piled up
        before = stream.run.trainer.step_count
        clock[0] += gap
        serve_frame(stream.token)
        assert stream.run.trainer.step_count - before <= frame_steps(speed) == speed * STEP_SECONDS


def test_frames_that_come_late_skip_steps_and_the_plane_says_how_many_a_second_it_keeps(clock):
    on_time, late = playing(speed=100), playing(speed=100)
    for _ in range(40):  # 40 a second: every step trained, nothing to say
        clock[0] += 1 / MAX_FPS
        _, frame = serve_frame(on_time.token)
    assert frame["note"] is None and frame["step"] == pytest.approx(100, abs=2)
    for _ in range(12):  # 4 a second (a busy server's turns, a busy browser): 10 steps a frame
        clock[0] += 0.25
        _, frame = serve_frame(late.token)
    assert frame["step"] == 120  # 40 of the 100 steps due each second
    assert frame["note"] == late_note(0.4, 100)
    assert frame["note"].startswith("40 of 100 steps a second: frames are reaching this tab late")
    for _ in range(2 * MAX_FPS + 2):  # on time again: the note goes once the window has passed
        clock[0] += 1 / MAX_FPS
        _, frame = serve_frame(late.token)
    assert frame["note"] is None


def test_the_page_draws_its_frame_without_training():
    stream = Stream("visitor")
    run = current_run(None, PRESETS["moons"])
    first = stream.update(run, 10, playing=False)
    second = stream.update(run, 10, playing=True)
    assert first["step"] == second["step"] == 0 and second["seq"] == first["seq"] + 1


def test_a_paused_stream_never_trains():
    stream = playing()
    stream.pause()
    assert serve_frame(stream.token) == (200, {"playing": False})
    assert stream.run.trainer.step_count == 0


def test_the_end_of_a_run_stops_the_stream_and_says_so(clock):
    stream = playing(QUICK, speed=60)
    clock[0] += 0.1 - 1 / MAX_FPS  # the first frame's turn comes 0.1 s after Play: 6 steps
    _, first = serve_frame(stream.token)
    clock[0] += 1.0
    _, last = serve_frame(stream.token)
    assert (first["step"], first["finished"]) == (6, False)
    assert (last["step"], last["finished"], last["playing"], last["banner"]) == (10, True, False, "info")
    assert serve_frame(stream.token) == (200, {"playing": False})  # no frame after the end


def test_a_diverging_run_stops_with_its_banner(clock):
    stream = playing(replace(PRESETS["moons"], optimizer="sgd", activation="leaky_relu", lr=10.0), speed=100)
    for _ in range(50):
        _, frame = serve_frame(stream.token)
        if not frame.get("playing", True) or frame.get("finished"):
            break
    assert frame["finished"] and frame["banner"] == "error" and not stream.playing


def test_an_unknown_or_ended_session_gets_410_with_a_message():
    assert serve_frame("not-a-token") == (410, {"error": GONE})
    stream = playing()
    token = stream.token
    del stream
    gc.collect()
    assert serve_frame(token) == (410, {"error": GONE})  # the session's end ends its stream


def test_tokens_are_long_and_never_repeat():
    tokens = {Stream("v").token for _ in range(200)}
    assert len(tokens) == 200 and min(len(t) for t in tokens) >= 20


def test_one_frame_at_a_time_per_visitor():
    stream = playing()
    with stream.in_flight:  # a frame of this visitor's is being made
        assert serve_frame(stream.token) == (429, {"error": BUSY})
    assert serve_frame(stream.token)[0] == 200


def test_a_pause_heard_while_a_frame_waits_for_its_turn_ends_the_wait_without_training():
    stream = playing()
    answer, holding, release = [], threading.Event(), threading.Event()

    def hold_the_line() -> None:  # another visitor's frame holds the turn
        with shared_turns().turn("someone else"):
            holding.set()
            release.wait(30)

    holder = threading.Thread(target=hold_the_line)
    holder.start()
    assert holding.wait(30)
    waiter = threading.Thread(target=lambda: answer.append(serve_frame(stream.token)))
    waiter.start()
    for _ in range(3000):  # until the frame stands in line behind the other visitor's
        if shared_turns().waiting:
            break
        time.sleep(0.01)
    assert shared_turns().waiting == 1
    stream.pause()  # the click: heard within the line's poll (0.1 s)
    waiter.join(10)
    release.set()
    holder.join(30)
    assert not waiter.is_alive() and answer == [(200, {"playing": False})]
    assert stream.run.trainer.step_count == 0


@pytest.mark.parametrize("speed", [10, 70])
def test_frames_add_up_to_the_same_run_as_step_clicks(clock, speed):
    """The frames' steps are the run's steps: a link stepped the same number of times gives the
    same weights whichever way the steps were taken."""
    settings = replace(PRESETS["moons"], batch_size=16, dropout=0.3)
    stream = playing(settings, speed=speed)
    for _ in range(5):
        serve_frame(stream.token)
    alone = current_run(None, settings)
    alone.run(stream.run.trainer.step_count)
    assert alone.trainer.step_count > 0
    for a, b in zip(stream.run.model.parameters(), alone.model.parameters(), strict=True):
        assert a.equal(b)


@pytest.mark.parametrize(("base", "path"), [("", PATH), ("mlp", "/mlp" + PATH), ("/a/b/", "/a/b" + PATH)])
def test_the_route_lives_under_the_servers_base_url_path(base, path):
    before = config.get_option("server.baseUrlPath")
    config.set_option("server.baseUrlPath", base)
    try:
        assert frame_path() == path and [r.path for r in routes()] == [path, path]  # HTTP and WebSocket
    finally:
        config.set_option("server.baseUrlPath", before)


def test_a_frame_that_fails_stops_the_run_and_tells_the_page_once(monkeypatch):
    stream = playing()

    def broken(steps: int) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(stream.run, "run", broken)
    assert serve_frame(stream.token) == (500, {"playing": False, "error": FAILED})
    assert not stream.playing and serve_frame(stream.token) == (200, {"playing": False})
    # The canvas asks the page to rerun, whose Play is still on: the failure is said, not retried
    stream.update(stream.run, stream.speed, playing=True)
    assert not stream.playing and serve_frame(stream.token) == (200, {"playing": False})
    assert stream.take_failure() == FAILED and stream.take_failure() is None
    monkeypatch.undo()
    stream.update(stream.run, stream.speed, playing=True)  # Play, pressed again once it was said
    assert stream.playing and serve_frame(stream.token)[0] == 200


HEAVY = replace(Settings(), hidden=(128,) * 8, n=2000, speed=2000)  # the sidebar's largest setup


def test_a_frame_trains_only_the_steps_that_fit_its_budget_and_the_plane_says_so():
    stream = playing(HEAVY, speed=2000)
    stream.run.compare(True)  # both engines: twice the work a step
    frames = [serve_frame(stream.token)[1] for _ in range(3)]
    steps = [f["step"] for f in frames]
    assert 0 < steps[0] < steps[1] < steps[2] < 200  # it moves, a few steps a frame
    assert stream.run.twin.step_count == stream.run.trainer.step_count  # in lockstep
    assert frames[-1]["note"].endswith(capped_note(1, 10, 2000).split(" of ", 1)[1])  # "… of 2,000 …"
    assert "of 2,000 steps a second" in frames[-1]["note"] and "50 ms" in frames[-1]["note"]
    cpu = time.thread_time()
    stream.run.run(200, budget=FRAME_BUDGET)
    step = stream.run.step_seconds
    # at most the budget plus one step's overshoot (a frame takes at least one step)
    assert time.thread_time() - cpu <= FRAME_BUDGET + 2 * step + 0.02


@pytest.mark.parametrize("speed", [1, 5, 30])
def test_a_slow_speed_takes_a_frame_a_step_on_time(clock, speed):
    """Below MAX_FPS steps a second every frame shows a new step, 1/speed s apart: no frame
    draws what the last one drew."""
    stream = playing(QUICK, speed=speed)
    start = clock[0]
    assert [serve_frame(stream.token)[1]["step"] for _ in range(5)] == [1, 2, 3, 4, 5]
    assert clock[0] - start == pytest.approx(4 / speed)
    assert frame_steps(speed) == max(1, speed // 10)


def test_a_frame_a_step_a_little_early_or_late_still_takes_its_step(clock):
    stream = playing(QUICK, speed=5)
    steps = []
    for jitter in (0.0, -0.03, 0.04, -0.04, 0.0):  # each tab's request lands a little off the beat
        clock[0] += 0.2 + jitter
        steps.append(serve_frame(stream.token)[1]["step"])
    assert steps == [1, 2, 3, 4, 5]


def test_a_frame_that_fits_its_budget_takes_every_step_and_says_nothing(clock):
    stream = playing(speed=100)
    clock[0] += STEP_SECONDS
    _, frame = serve_frame(stream.token)
    assert frame["step"] == 10 and frame["note"] is None
    stream.update(stream.run, 200, playing=True)
    assert stream.note is None


def test_the_budget_counts_the_twin_and_a_stop_ends_training_between_chunks():
    run = current_run(None, HEAVY)
    run.run(1)  # the cost of a step is known from now on
    asked = iter([False, True])
    assert run.run(200, stop=lambda: next(asked)) == 2  # one chunk of one step, then stopped
    run.step_seconds = 1e-6  # a stale estimate: the second chunk would be all 200 steps
    assert run.run(200, stop=lambda: True) >= 1  # a frame always moves, however asked


def test_a_stream_whose_page_stopped_running_stops_playing(clock):
    stream = playing()

    def frame() -> tuple[int, dict]:
        clock[0] += STEP_SECONDS  # a frame every 0.1 s: 10 steps each
        return serve_frame(stream.token)

    assert frame()[1]["step"] == 10
    assert LEASE_SECONDS - 1 < stream.lease - clock[0] <= LEASE_SECONDS  # the page just ran
    stream.lease = clock[0] + 1
    stream.renew()  # a live panel ran: the tab is open
    assert stream.lease - clock[0] > LEASE_SECONDS - 1
    assert frame()[1]["step"] == 20
    stream.lease = clock[0] - 0.001  # nothing from the page for LEASE_SECONDS: a closed tab
    assert frame() == (200, {"playing": False})  # its token, replayed
    assert not stream.playing and stream.run.trainer.step_count == 20
    stream.update(stream.run, 100, playing=True)  # the page's next run, if it is still open
    assert frame()[1]["step"] == 30


def test_a_pause_ends_a_frame_in_flight_at_its_next_chunk():
    stream = playing(HEAVY, speed=2000)
    stream.run.run(1)
    started, answer = threading.Event(), []
    chunks = []
    original = stream.run.trainer.run_steps

    def slow_chunk(n, callback=None):  # each chunk lets the test pause in between
        chunks.append(n)
        started.set()
        time.sleep(0.05)
        return original(1, callback)

    stream.run.trainer.run_steps = slow_chunk
    stream.run.step_seconds = 1e-6  # so that without a pause the frame would go on and on
    frame = threading.Thread(target=lambda: answer.append(serve_frame(stream.token)))
    frame.start()
    assert started.wait(30)
    stream.pause()  # waits for the frame: it must end at its next chunk, not after 200 steps
    frame.join(30)
    assert not frame.is_alive() and len(chunks) <= 2
    assert stream.run.trainer.step_count <= 3


def test_a_playing_pages_heartbeat_comes_often_enough_to_keep_its_lease():
    from pages.serving.live import HEARTBEAT_SECONDS, MAX_PANEL_SECONDS

    assert 2 * HEARTBEAT_SECONDS < LEASE_SECONDS  # one beat may be late, not two
    # While the tab's socket holds the lease the beat is rare; a socket that reconnects holds
    # nothing until the page's next run, and the slow panels renew the lease meanwhile (if they
    # are late, it lapses and the page's run plays on: test_a_stream_whose_page_stopped_running...)
    assert MAX_PANEL_SECONDS < LEASE_SECONDS


def test_a_unit_on_the_plane_is_its_map_in_every_frame_while_it_plays():
    from mlp.figures.network import unit_image
    from mlp.runs.units import unit_plane

    stream = Stream("visitor")
    run = current_run(None, PRESETS["moons"])
    boundary = stream.update(run, 100, playing=True)
    assert boundary["focus"] == boundary["view"] == ""
    shown = stream.update(run, 100, playing=True, focus=(1, 0))
    assert shown["focus"] == "1,0" and shown["view"].startswith("Layer 1, unit 1: its output a")
    assert shown["image"] == unit_image(unit_plane(run, (1, 0))) != boundary["image"]
    status, frame = serve_frame(stream.token)  # the next frame, trained: still the unit's map
    assert status == 200 and frame["focus"] == "1,0" and frame["step"] > 0
    assert frame["image"] == unit_image(unit_plane(run, (1, 0)))
    gone = stream.update(run, 100, playing=False, focus=(9, 0))  # a unit the network no longer has
    assert gone["focus"] == "" and gone["image"] != shown["image"]


@pytest.fixture
def socket_url():
    """The frame routes on a server of their own (uvicorn, as Streamlit serves them), and the
    frame socket's ws:// URL."""
    import uvicorn
    from starlette.applications import Starlette

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(Starlette(routes=routes()), host="127.0.0.1", port=port, log_config=None)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server didn't start"
        time.sleep(0.01)
    yield f"ws://127.0.0.1:{port}{PATH}"
    server.should_exit = True
    thread.join(10)


def test_the_frame_socket_answers_each_token_it_is_sent_with_the_routes_answer(socket_url):
    from websockets.sync.client import connect

    stream = playing(speed=100)
    with connect(socket_url) as socket:
        answers = []
        for token in (stream.token, stream.token, "guessed", b"\x00" * 5000, stream.token):
            socket.send(token)
            answers.append(json.loads(socket.recv(timeout=30)))
    assert [a["status"] for a in answers] == [200, 200, 410, 410, 200]
    assert answers[2] == answers[3] == {"status": 410, "error": GONE}
    seqs = [a["seq"] for a in answers if a["status"] == 200]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3  # three frames, in order, each new
    assert all(
        a["playing"] and a["image"].startswith("data:image/png") for a in answers if a["status"] == 200
    )


def test_a_paused_stream_answers_over_the_socket_that_it_stopped(socket_url):
    from websockets.sync.client import connect

    stream = playing(speed=100)
    stream.pause()
    with connect(socket_url) as socket:
        socket.send(stream.token)
        assert json.loads(socket.recv(timeout=30)) == {"status": 200, "playing": False}


def test_the_frame_socket_closes_on_a_message_no_page_sends(socket_url):
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    with connect(socket_url) as socket:
        socket.send("x" * 5000)
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=30)
    assert closed.value.rcvd.code == 1009


def test_a_tab_that_goes_while_its_frame_is_drawn_leaves_the_stream_free_for_its_next_socket(socket_url):
    from websockets.sync.client import connect

    stream = playing(speed=100)
    stream._next_slot = time.monotonic() + 0.5  # this frame waits half a second for its slot...
    with connect(socket_url) as socket:
        socket.send(stream.token)
        deadline = time.monotonic() + 30
        while not stream.in_flight.locked():  # the server has taken the frame...
            assert time.monotonic() < deadline, "the frame never started"
            time.sleep(0.01)
        socket.socket.shutdown(2)  # ...and the tab is gone (no closing handshake) before it is drawn
    while stream.in_flight.locked():
        assert time.monotonic() < deadline, "the frame never ended"
        time.sleep(0.01)
    with connect(socket_url) as socket:  # the page's next socket gets its frames as before
        socket.send(stream.token)
        assert json.loads(socket.recv(timeout=30))["status"] == 200


def test_the_tabs_own_socket_renews_the_lease_and_no_replay_does(socket_url):
    """The socket that first sends the key the page's last run gave the canvas holds the stream:
    its frames renew the lease (so the page needn't beat often). The key is good once; a socket
    without it, a request over HTTP, or a socket opened after the holder closed renews nothing
    until the page draws the plane again; the holder's key sent by another socket (a copy)
    leaves no socket holding the stream."""
    from websockets.sync.client import connect

    stream = playing(speed=100)  # the page ran and drew the plane: it gave the canvas a key
    key = stream.key

    def ask(socket, key: str = "") -> int:
        socket.send(f"{stream.token} {key}" if key else stream.token)
        return json.loads(socket.recv(timeout=30))["status"]

    def renewed(ask_once, status: int = 200) -> bool:
        stream.lease = time.monotonic() + 5  # a lease about to lapse
        assert ask_once() == status
        return stream.lease > time.monotonic() + LEASE_SECONDS - 5

    def let_go() -> None:
        deadline = time.monotonic() + 30
        while stream._holder is not None:  # the server hears that the holder closed
            assert time.monotonic() < deadline, "the closed socket still holds the stream"
            time.sleep(0.01)

    assert key and not stream.beat()  # no socket holds it yet
    with connect(socket_url) as replay, connect(socket_url) as tab:
        assert not renewed(lambda: ask(replay))  # first to ask after the page's run, without the key
        assert not renewed(lambda: ask(replay, "a guess"))
        assert not renewed(lambda: ask(replay, "\u00e9t\u00e9"))  # any text: no failure either
        assert renewed(lambda: ask(tab, key))  # the tab's socket sends the page's key: it holds the stream
        assert stream.beat()  # the page's heartbeat may come rarely now
        assert renewed(lambda: ask(tab, key))  # the holder, with its key or without
        assert renewed(lambda: ask(tab))
        assert not renewed(lambda: serve_frame(stream.token)[0])  # over HTTP
        stream.renew()  # a live panel ran, just before the tab closed: no new key
    let_go()
    assert not stream.beat()
    with connect(socket_url) as replay:
        assert not renewed(lambda: ask(replay, key))  # the token and its key replayed: the lease runs out
    stream.update(stream.run, 100, playing=True)  # the page's next run draws the plane: a new key
    with connect(socket_url) as tab, connect(socket_url) as replay:
        with stream.in_flight:  # a frame in flight: the tab's, with the new key, is turned away...
            assert not renewed(lambda: ask(tab, stream.key), status=429)
        assert stream.key == "" and stream.beat()  # ...but its key made it the holder
        assert renewed(lambda: ask(tab))
        assert not renewed(lambda: ask(replay, key))  # an old key: nothing
        held_with = stream._held_with
        assert not renewed(lambda: ask(replay, held_with))  # the holder's key, copied from its messages...
        assert not stream.beat()  # ...and no socket holds the stream: the page beats often again
        assert not renewed(lambda: ask(tab))
