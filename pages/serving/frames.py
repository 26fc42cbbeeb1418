"""The 2D playground's frames, outside Streamlit's reruns: a playing canvas asks for each one itself.

A frame drawn through a Streamlit rerun costs the visitor's browser a whole page update: at 10
frames a second that was 100-200 ms of browser CPU a frame, and with a class on one machine the
browsers, not the server, ran out of time. So while a visitor plays, the plane's canvas
(pages/ui/plane.py) sends its token over a WebSocket to PATH, a message a frame (frame_socket;
or, if that socket never opens, GETs PATH with the token in a header: frame_endpoint); either
way the server trains one frame's steps in the visitor's turn (pages.serving.turns) and answers
with the boundary image and the numbers (~4 KB of JSON, one image decode and one canvas draw in
the browser). The canvas asks for the next frame only once it has drawn the last, and the line
hands turns out fairly, so a busy server gives each visitor fewer frames, never a frozen page.

The pace: a frame as soon as there is something new to show, up to a visitor's cap: at their
speed in steps a second, a frame every 1/cap s with the steps due since the last one, or below
`cap` steps a second, a frame a step. The cap is MAX_FPS for a visitor playing alone (TF
Playground animates at ~34), shared as more play (FPS_BUDGET a replica), and never below
CLASS_FPS, what every visitor had before: a class of 4 or more gets exactly that. A frame never
trains more than STEP_SECONDS of the speed's steps: when the server is busy each visitor gets
fewer frames, fairly (pages.serving.turns), each carrying at most what a frame carried at 10 frames
a second, so a class's pace falls no lower than it did then.

What a visitor may take is the server's to enforce, not the canvas's: frames no closer than the
pace allows per stream, at most FRAME_BUDGET of CPU time training a frame (a bigger setup
takes fewer steps a frame, and the plane says so), turns shared by compute used
(pages.serving.turns), and a stream plays only while its page is alive: each run of the page's
script, of its live panels or of its heartbeat renews a lease of LEASE_SECONDS, and so does
each frame over the tab's own frame socket: each of the page's runs that draws the plane
hands the canvas a fresh key with its data, and the socket that sends it first holds the
stream until it closes (a key is good once: a spent one, or a socket or an HTTP request
without the current key, renews nothing; the holder's key sent by another socket, a copy,
leaves no socket holding it). A closed tab's runs stop and its socket closes, so its token
stops training within that time even if someone replays it, its key too; a page
that is still open and lapsed (a server too busy to run its panels, a socket that reconnected
and waits for the page's next run) is stopped, tells its page, and the page's run renews the
lease and plays on. While the tab's socket keeps the lease, the page's heartbeat (a script
run that costs the browser ~0.13 s of CPU) comes rarely (pages/serving/live.py).

The token is a session's secret (random, never shown, sent in a header so that no access log
keeps it): a frame can only be had by the page the server gave it to. Streams are kept weakly:
a session's end ends its stream.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
import weakref
from typing import Any

import anyio
import streamlit as st
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from mlp.figures.network import unit_image
from mlp.figures.plane import shade_png
from mlp.links.format import FrameRate
from mlp.runs.playground import Playground
from mlp.runs.units import Unit, plane_caption, unit_name, unit_plane
from pages.serving.live import visitor
from pages.serving.turns import shared_turns

PATH = "/api/playground/frame"  # under the server's base URL path, if it has one (frame_path)
MAX_FPS = 40  # frames a second a visitor may have: one playing alone
FPS_BUDGET = 40  # frames a second a replica shares out among its players before...
CLASS_FPS = 10  # ...each falls back to this cap, however many play
STEP_SECONDS = 0.1  # a frame trains at most this many seconds of its speed's steps (10 frames a second's)
FRAME_BUDGET = 0.05  # seconds of CPU time a frame's training may take; the default frame takes ~6 ms
PACE_SECONDS = 2.0  # the plane says the pace isn't kept when, over this long, ...
PACE_KEPT = 0.95  # ...fewer than this share of the speed's steps were trained (frames came too late)
# A stream stops playing when its page has not run for this long ($MLP_PLAYGROUND_LEASE_SECONDS:
# a closed tab's run trains on until then)
LEASE_SECONDS = float(os.environ.get("MLP_PLAYGROUND_LEASE_SECONDS", "") or 90.0)
FRAME_THREADS = 64  # frames waiting for their turn; their own pool, apart from Streamlit's file serving
TOKEN_HEADER = "X-MLP-Stream"
MAX_MESSAGE = 256  # characters of a frame socket's message: a token is 22; longer closes the socket
GONE = "This page's session has ended on the server (it restarted, or you were away a long time)."
BUSY = "One frame at a time."
FAILED = "Training stopped: a frame failed on the server (its log has the details). Press Play to try again."

_log = logging.getLogger(__name__)
clock, sleep = time.monotonic, time.sleep  # the pace's clock, on its own (tests set it by hand)

_streams: weakref.WeakValueDictionary[str, Stream] = weakref.WeakValueDictionary()
_limiter: anyio.CapacityLimiter | None = None


class _PausedError(Exception):
    """The visitor paused while their frame waited for its turn."""


class Stream:
    """One visitor's playground as the frame route sees it: the run, its speed, whether it plays.

    The page sets these on every run of its script; the route trains and draws. One lock orders
    the two, so a Pause that the page has heard is never followed by a frame that trains.
    """

    def __init__(self, visitor: str) -> None:
        self.token = secrets.token_urlsafe(16)
        self.visitor = visitor  # the name this visitor's turns go by (pages/serving/live.py)
        self.lock = threading.Lock()
        self.run: Playground | None = None
        self.speed = 1  # steps a second while playing
        self._owed = 0.0  # steps due and not taken yet (a fraction of one, between frames)
        self._trained_at = 0.0  # monotonic time of the last frame that trained (or of Play, a frame early)
        self.playing = False
        self.focus: Unit | None = None  # the unit the plane shows instead of the output, if any
        self.seq = 0  # frames made so far: the canvas draws only a newer one than it has
        self.rate = FrameRate()  # the frames that trained, as the server built them
        self.in_flight = threading.Lock()  # one frame a visitor at a time (held by the route)
        self._next_slot = 0.0  # monotonic time before which this stream's next frame doesn't start
        self._failure: str | None = None
        self.note: str | None = None  # what the plane says about the last frame's steps, if anything
        self.pace = Pace()  # the steps skipped because frames came late
        self.lease = 0.0  # monotonic time until which the page is known to be alive
        self._holder: object | None = None  # the frame socket that renews the lease, if any
        self.key = ""  # what the canvas sends to hold the stream: new with each frame the page draws
        self._held_with = ""  # the key that made the holder the holder
        _streams[self.token] = self

    @property
    def path(self) -> str:
        """Where the canvas asks for this stream's frames (frame_path)."""
        return frame_path()

    header = TOKEN_HEADER  # the request header that carries the token over HTTP

    def update(self, run: Playground, speed: int, playing: bool, focus: Unit | None = None) -> dict[str, Any]:
        """The page's settings (and the unit on the plane, if any), then the frame they show now
        (drawn without training)."""
        with self.lock:
            if (run, speed) != (self.run, self.speed):
                self.note, self._owed, self.pace = None, 0.0, Pace()
            if self._failure is not None:  # a frame failed: the page says so, and plays on a click
                playing = False
            started = playing and not self.playing
            self.run, self.speed, self.playing, self.focus = run, speed, playing, focus
            # A faster speed's first frame needn't wait out the slower pace's slot
            self._next_slot = min(self._next_slot, clock() + self.frame_seconds)
            if started:  # the first frame trains the steps due since Play, at least a frame's
                self._trained_at = clock() - self.frame_seconds
                self.pace = Pace()
            self.renew()
            self.key = secrets.token_urlsafe(8)  # the page hands it to the canvas with this frame
            return self._frame(train=False)

    def renew(self) -> None:
        """The page ran (its script, or a live panel): it is alive, its frames may go on."""
        self.lease = clock() + LEASE_SECONDS

    def beat(self) -> bool:
        """The page's heartbeat: renew, and whether a frame socket keeps the lease too (then the
        page may beat rarely)."""
        self.renew()
        return self._holder is not None

    def present(self, socket: object, key: str) -> None:
        """On the event loop, for each message over a frame socket (`socket`, a connection's
        identity) with the `key` it sent, whatever its answer: the page's current key makes that
        socket the holder, whose frames renew the lease, until it closes (let_go); the key is
        then spent. The holder's key sent by another socket is a copy (someone who read the tab's
        messages): then no socket holds the stream until the page's next run gives a new key."""
        if not key:
            return
        given = key.encode()  # compare_digest takes any bytes (not any str)
        if self.key and secrets.compare_digest(given, self.key.encode()):
            self.key, self._held_with, self._holder = "", key, socket
        elif socket is not self._holder and secrets.compare_digest(given, self._held_with.encode()):
            self._holder = None

    def let_go(self, socket: object) -> None:
        """`socket` closed: it renews nothing more (the page's next run lets another take over).
        On the event loop, without the lock (a frame may hold it): none of this socket's is in flight."""
        if self._holder is socket:
            self._holder = None

    @property
    def alive(self) -> bool:
        return clock() < self.lease

    def pause(self) -> None:
        """No frame trains after this returns; a frame training now ends at its next chunk."""
        self.playing = False  # seen by the frame in flight without the lock, which it holds
        with self.lock:
            self.playing = False

    @property
    def frame_seconds(self) -> float:
        """The least time between two frames: 1 / the cap, or a step's time below `cap` steps a
        second (a frame with nothing new would cost the server and the browser for nothing)."""
        return max(1 / fps_cap(shared_turns().players()), 1 / max(1, self.speed))

    def reserve(self) -> float:
        """Seconds the caller (holding `in_flight`) waits before its frame: the server, not the
        canvas, holds a visitor to the pace (frame_seconds), so a replayed token gets no more
        frames than its tab would have."""
        now = clock()
        start = max(now, self._next_slot)
        self._next_slot = start + self.frame_seconds
        return start - now

    def due(self) -> int:
        """The steps this frame trains: the speed's since the last frame that trained, at most
        STEP_SECONDS' worth (and at least one, however slow the speed)."""
        now = clock()
        new = self.speed * (now - self._trained_at)
        owed = min(self._owed + new, max(1.0, self.speed * STEP_SECONDS))
        self.pace.add(now, new, self._owed + new - owed)
        # A frame a step (slow speeds) arrives a little early or late: the step is due either way
        steps = max(0, int(owed + 0.25))
        self._owed, self._trained_at = owed - steps, now  # a quarter step early is owed back
        return steps

    def take_failure(self) -> str | None:
        """Why the last frame failed, once, for the page to say; None if none did."""
        failure, self._failure = self._failure, None
        return failure

    def next_frame(self, socket: object | None = None) -> tuple[int, dict[str, Any]]:
        """Trains one frame's steps in this visitor's turn and draws it: (HTTP status, body).
        The caller holds `in_flight`; `socket`, the frame socket that asked (None: HTTP)."""
        try:
            self._heed()
            with shared_turns().turn(self.visitor, heed=self._heed), self.lock:
                self._heed()  # paused (or the page gone) while this frame waited
                if socket is not None and socket is self._holder:  # the tab's own socket
                    self.renew()
                return 200, self._frame(train=True)
        except _PausedError:
            return 200, {"playing": False}
        except Exception:  # the server's log gets the traceback; the page, a sentence
            _log.exception("a playground frame failed")
            self.playing, self._failure = False, FAILED
            return 500, {"playing": False, "error": FAILED}

    def _heed(self) -> None:
        if not self.alive:
            self.playing = False  # the page's next run, if it is open, renews and plays on
        if not self.playing:
            raise _PausedError

    def _stopped(self) -> bool:
        return not (self.playing and self.alive)

    def _frame(self, train: bool) -> dict[str, Any]:
        """Holding self.lock: trains a frame's share of `speed` if `train`, then the frame as plain data."""
        start, run = time.perf_counter(), self.run
        assert run is not None, "the page sets the run before any frame"
        if train:
            asked = self.due()
            took = run.run(asked, budget=FRAME_BUDGET, stop=self._stopped) if asked else 0
            capped = took < asked and not run.trainer.finished and not self._stopped()
            kept = self.pace.kept()
            late = late_note(kept, self.speed) if kept < PACE_KEPT else None
            self.note = capped_note(took, asked, self.speed) if capped else late
        live = run.view.live_frame()
        if live.finished:
            self.playing = False
        self.seq += 1
        focus = self.focus if self.focus is not None and unit_name(run, self.focus) else None
        discrete, classes = run.settings.discretize, run.points.classes
        frame = {
            "seq": self.seq,
            "step": live.step,
            # A unit on the plane: its own map, at the plane's resolution (one more forward pass).
            "image": unit_image(unit_plane(run, focus))
            if focus
            else shade_png(live.shade, classes, discrete),
            "discrete": discrete,
            "focus": "{},{}".format(*focus) if focus else "",
            "view": plane_caption(run, focus) if focus else "",
            "metrics": live.metrics,
            "banner": live.banner,
            "finished": live.finished,
            "playing": self.playing,
            "note": self.note if self.playing else None,
            "interval": self.frame_seconds,  # the pace now: players come and go between page runs
        }
        if train:
            self.rate.tick(time.perf_counter() - start)
        frame["build_ms"] = round(1000 * (time.perf_counter() - start), 1)
        return frame


def fps_cap(players: int) -> float:
    """Frames a second a visitor may have while `players` play (the visitor among them)."""
    return max(CLASS_FPS, min(MAX_FPS, FPS_BUDGET / max(1, players)))


def frame_steps(speed: int) -> int:
    """The most steps a frame trains at `speed` steps a second: what it carries when frames come
    10 a second or fewer (a busy server's; at MAX_FPS a frame carries a quarter of that)."""
    return max(1, round(speed * STEP_SECONDS))


def capped_note(took: int, asked: int, speed: int) -> str:
    """What the plane says when a frame took `took` of the `asked` steps `speed` (steps a
    second) called for."""
    return (
        f"{speed * took / asked:,.0f} of {speed:,} steps a second: this setup needs more than the "
        f"{FRAME_BUDGET * 1000:.0f} ms of training the server gives each visitor's frame."
    )


class Pace:
    """The steps a stream's speed called for over the last PACE_SECONDS, and those skipped because
    its frames came later than STEP_SECONDS apart (a busy server's turns, a busy browser): a
    late frame trains a frame's share, not every step it missed, so the page never falls behind
    and then races. What is skipped is said, not hidden (late_note)."""

    def __init__(self) -> None:
        self._frames: list[tuple[float, float, float]] = []  # (when, steps due, steps skipped)

    def add(self, now: float, due: float, skipped: float) -> None:
        self._frames = [f for f in self._frames if f[0] > now - PACE_SECONDS] + [(now, due, skipped)]

    def kept(self) -> float:
        """The share of the steps due that were trained, over the window (1 until it is full)."""
        if not self._frames or self._frames[-1][0] - self._frames[0][0] < PACE_SECONDS / 2:
            return 1.0
        due = sum(f[1] for f in self._frames)
        return 1.0 - sum(f[2] for f in self._frames) / due if due > 0 else 1.0


def late_note(kept: float, speed: int) -> str:
    """What the plane says when late frames skipped steps: the pace it keeps, and why."""
    return (
        f"{kept * speed:,.0f} of {speed:,} steps a second: frames are reaching this tab late (a busy "
        "server or a busy browser), and the steps they missed are skipped rather than piled up."
    )


def _claim(token: str) -> Stream | tuple[int, dict[str, Any]]:
    """The token's stream, its one frame in flight now taken; else the answer (HTTP status, body)."""
    stream = _streams.get(token[:64])
    if stream is None:
        return 410, {"error": GONE}
    if not stream.in_flight.acquire(blocking=False):
        return 429, {"error": BUSY}
    return stream


def serve_frame(token: str) -> tuple[int, dict[str, Any]]:
    """The route's answer for a stream's token, all in the caller's thread: (HTTP status, body)."""
    stream = _claim(token)
    if not isinstance(stream, Stream):
        return stream
    try:
        sleep(stream.reserve())
        return stream.next_frame()
    finally:
        stream.in_flight.release()


async def answer(token: str, socket: object | None = None) -> tuple[int, dict[str, Any]]:
    """serve_frame, with the checks that cost nothing made on the event loop: only a live
    session's one frame at a time takes a worker thread. `socket`: the frame socket asking."""
    global _limiter
    stream = _claim(token)
    if not isinstance(stream, Stream):
        return stream
    try:
        await anyio.sleep(stream.reserve())  # on the event loop: a wait takes no thread
        if _limiter is None:  # made on the server's event loop, once
            _limiter = anyio.CapacityLimiter(FRAME_THREADS)
        return await anyio.to_thread.run_sync(stream.next_frame, socket, limiter=_limiter)
    finally:
        stream.in_flight.release()


async def frame_endpoint(request: Request) -> JSONResponse:
    """A frame over HTTP: the token in a header, the answer's status as the HTTP status."""
    status, body = await answer(request.headers.get(TOKEN_HEADER, ""))
    return JSONResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


async def frame_socket(socket: WebSocket) -> None:
    """Frames over one connection: each text message the canvas sends is a token (and the key
    the page last gave it, after a space), and the answer is the frame route's, its status
    inside (`{"status": 200, "seq": ...}`). A request over HTTP costs a browser ~8 ms more than a
    message (its network service and browser process handle each one; bench.browser_fps), and on
    a class's machines that was a third of a frame. Same token, same pace, same one frame in
    flight as over HTTP; the token is never in the URL (an access log keeps only the upgrade).
    The tab's own socket also renews its stream's lease (Stream.present), until it closes."""
    await socket.accept()
    asked: set[str] = set()  # the tokens this socket asked for: the streams it may hold
    try:
        while True:
            message = await socket.receive()
            if message["type"] == "websocket.disconnect":
                return  # the tab closed or left the page: nothing is owed to it
            text = message.get("text") or ""  # bytes are no token: 410
            if len(text) > MAX_MESSAGE:
                await socket.close(code=1009)  # "message too big": no page sends one
                return
            token, _, key = text.partition(" ")
            if (stream := _streams.get(token[:64])) is not None:  # as _claim looks it up
                asked.add(token[:64])  # before the frame: let go of whatever this socket holds
                stream.present(socket, key)
            status, body = await answer(token, socket)
            reply = JSONResponse({"status": status, **body}).body.decode()  # as the HTTP route encodes it
            try:
                await socket.send_text(reply)
            except (WebSocketDisconnect, RuntimeError, OSError):
                return  # the tab went (or closed its end) while its frame was drawn
    finally:
        for stream in filter(None, map(_streams.get, asked)):
            stream.let_go(socket)


def frame_path() -> str:
    """Where the route answers: PATH, under `server.baseUrlPath` when the app is served below one."""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}{PATH}" if base else PATH


def plane_stream() -> Stream:
    """This visitor's stream of frames, made on their first visit to the playground."""
    if "pg_stream" not in st.session_state:
        st.session_state.pg_stream = Stream(visitor())
    return st.session_state.pg_stream


def routes() -> list[Route]:
    """The app's own routes, for app.py's st.App (made once the server's config is read)."""
    return [Route(frame_path(), frame_endpoint, methods=["GET"]), WebSocketRoute(frame_path(), frame_socket)]
