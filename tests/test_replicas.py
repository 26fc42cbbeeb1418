"""The replica launcher's own checks (deploy/replicas.py), without nginx or the app: it refuses
ports another program holds before it starts anything; it routes only to a replica that proves it
is what answers its port, at the start and at every restart; its restarts wait longer each time,
then stop. The replicas here are small stand-ins (FAKE_REPLICA) that start in a blink.

The replicas behind a real nginx, and the launcher run whole: tests/test_scale_out.py.
"""

from __future__ import annotations

import asyncio
import http.server
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest

from deploy.identity import PATH, TOKEN_VAR, proof, replica_route
from deploy.ports import in_use, listen_address, refusal
from deploy.replicas import site_config, stop
from deploy.supervisor import Answer, Replicas, Restarts, who_answers
from tests.harness import ROOT, free_port


class SaysOk(http.server.BaseHTTPRequestHandler):
    """Another server than the app: "ok" to every GET, as Streamlit's health check says."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args) -> None:
        pass


@contextmanager
def other_server(port: int = 0) -> Iterator[int]:
    """Another HTTP server on 127.0.0.1 (on `port`, or a free one) until the block ends; yields its port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), SaysOk)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def launch(*args: str, folder) -> tuple[subprocess.CompletedProcess, float]:
    """`python -m deploy.replicas` with `args`, to its end (30 s at most); how long it took."""
    command = [sys.executable, "-m", "deploy.replicas", *args, "--folder", str(folder)]
    began = time.monotonic()
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=30)
    return run, time.monotonic() - began


# --- ports in use: refused before anything starts ------------------------------------------------


@pytest.mark.parametrize("held", [["replica"], ["nginx"], ["replica", "nginx"]])
def test_the_launcher_refuses_ports_another_server_holds(tmp_path, held):
    with other_server() as replica, other_server() as nginx:
        first = replica if "replica" in held else free_port()
        listen = nginx if "nginx" in held else free_port()
        folder = tmp_path / "launch"
        run, took = launch("-n", "1", "--first-port", str(first), "--listen", str(listen), folder=folder)
    print(f"refused in {took:.2f} s: {run.stderr.strip()}")
    assert run.returncode != 0 and run.stdout == ""
    message = run.stderr.strip()
    assert len(message.splitlines()) == 1 and message.endswith(".")  # one sentence, no traceback
    named = {"replica": f"{first} (a replica)", "nginx": f"{listen} (nginx)"}
    assert all((named[what] in message) == (what in held) for what in named), message
    assert "already in use" in message and "--first-port" in message and "--listen" in message
    assert not folder.exists()  # no replica, no nginx: not even their folder
    assert took < 10


def test_the_launcher_refuses_nginx_on_a_replica_port(tmp_path):
    first = free_port()
    run, _ = launch("-n", "2", "--first-port", str(first), "--listen", str(first + 1), folder=tmp_path / "x")
    assert run.returncode != 0 and f"nginx's port {first + 1} is also a replica's" in run.stderr
    assert not (tmp_path / "x").exists()


def test_a_port_counts_as_in_use_while_a_server_listens_on_it():
    with other_server() as port:
        assert in_use("127.0.0.1", port) and in_use("", port)  # nginx's `listen 8080`: every address
        assert refusal([port], str(free_port())) is not None
    assert not in_use("127.0.0.1", port)  # its connections closing don't hold it
    assert refusal([port], f"127.0.0.1:{free_port()}") is None


def test_nginx_listen_addresses():
    assert listen_address("8080") == ("", 8080)
    assert listen_address("127.0.0.1:8080") == ("127.0.0.1", 8080)
    assert listen_address("[::1]:8080") == ("::1", 8080)
    assert listen_address("*:80") == ("", 80)
    assert listen_address("unix:/run/mlp.sock") is None


# --- each replica proves it is what answers its port -------------------------------------------

# A replica in a blink: like `streamlit run app.py` it exits (1) when its port is taken, answers
# the health check, and proves its token (deploy/identity.py). Or it crashes, or never listens.
FAKE_REPLICA = """
import http.server, os, sys, time, urllib.parse
from deploy.identity import PATH, TOKEN_VAR, proof

port, how = int(sys.argv[1]), sys.argv[2]
if how == "crashes":
    sys.exit(3)
if how == "never listens":
    time.sleep(60)

class Replica(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == PATH:
            body = proof(os.environ[TOKEN_VAR], urllib.parse.parse_qs(url.query)["challenge"][0])
        elif url.path == "/_stcore/health":
            body = "ok"
        else:
            return self.send_error(404)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass

try:
    server = http.server.HTTPServer(("127.0.0.1", port), Replica)
except OSError:
    sys.exit(1)
server.serve_forever()
"""
QUICK = Restarts(first_wait=0.05, longest_wait=0.2, failures=4, start_timeout=20, steady=60)


@contextmanager
def replicas(
    tmp_path, how: str, ports: list[int], restarts: Restarts = QUICK
) -> Iterator[tuple[Replicas, list[str]]]:
    """Replicas of FAKE_REPLICA behaving `how`, on `ports`; what they said, as a list."""
    said: list[str] = []
    command = lambda port: [sys.executable, "-c", FAKE_REPLICA, str(port), how]  # noqa: E731
    supervised = Replicas(ports, {}, tmp_path, restarts, command, said.append)
    try:
        yield supervised, said
    finally:
        stop([p for p in supervised.processes() if p.poll() is None])


def watch_until(supervised: Replicas, done, what: str, timeout: float = 30) -> None:
    """Watch the replicas, as the launcher does, until `done()` (`timeout` s at most)."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"not {what} within {timeout} s"
        supervised.watch()
        time.sleep(0.02)


def test_a_replica_proves_its_token_and_nothing_else_can(tmp_path):
    port = free_port()
    with replicas(tmp_path, "serves", [port]) as (supervised, said):
        supervised.start(port)
        assert supervised.wait_up() is None and supervised.up() == [port] and said == []
        token = supervised.replicas[port].token
        assert who_answers(port, token) is Answer.OWN
        assert who_answers(port, "another start's token") is Answer.OTHER
    with other_server() as other:  # says "ok" to everything, the proof's address too
        assert who_answers(other, token) is Answer.OTHER
    assert who_answers(port, token) is Answer.NONE  # stopped: nothing answers


@pytest.mark.parametrize(
    ("token", "query", "status"),
    [
        ("t", "challenge=c", 200),
        ("", "challenge=c", 404),
        ("t", "", 404),
        ("t", "challenge=" + "c" * 65, 404),
    ],
)
def test_the_apps_route_answers_a_challenge_only_with_a_token(monkeypatch, token, query, status):
    from starlette.requests import Request

    monkeypatch.setenv(TOKEN_VAR, token)
    route = replica_route()
    request = Request(
        {"type": "http", "method": "GET", "path": PATH, "query_string": query.encode(), "headers": []}
    )
    with ThreadPoolExecutor(1) as thread:  # an event loop of its own: the browser tests' runs in this thread
        response = thread.submit(asyncio.run, route.endpoint(request)).result()
    assert route.path == PATH and response.status_code == status
    if status == 200:
        assert response.body.decode() == proof("t", "c") and response.headers["Cache-Control"] == "no-store"


def test_the_proof_needs_the_token_which_never_travels():
    assert proof("a", "challenge") != proof("b", "challenge") and proof("a", "x") != proof("a", "y")
    assert "a" * 64 not in proof("a" * 64, "challenge")


@pytest.mark.parametrize("how", ["serves", "never listens"])
def test_at_the_start_a_port_another_server_answers_is_refused(tmp_path, how):
    """Taken after the launcher's check of the ports: the replica can't listen, or doesn't yet."""
    with other_server() as port, replicas(tmp_path, how, [port]) as (supervised, _):
        process = supervised.start(port)
        failure = supervised.wait_up()
        assert supervised.up() == [] and process.poll() is not None  # ended, and never routed to
    reasons = ["another server answers on its port"]  # asked while the replica still ran...
    if how == "serves":
        reasons.append("another program holds its port")  # ...or once it had exited
    log = tmp_path / f"replica-{port}.log"
    assert failure in [f"The replica on port {port} did not start: {why} (see {log})." for why in reasons]


def test_a_replica_that_keeps_failing_is_started_later_each_time_then_given_up(tmp_path):
    port = free_port()
    with replicas(tmp_path, "crashes", [port]) as (supervised, said):
        supervised.start(port)
        watch_until(supervised, supervised.all_given_up, "given up")
        assert supervised.up() == []
        for _ in range(10):  # given up: never started again
            supervised.watch()
    start = f"The replica on port {port} did not start: it exited (3); not routed to, starting it again in"
    assert said[:3] == [f"{start} 0.05 s.", f"{start} 0.1 s.", f"{start} 0.2 s."]
    assert said[3:] == [
        f"The replica on port {port} did not start: it exited (3); after 4 failed starts in a row it is "
        f"given up: not routed to, not started again (see {tmp_path}/replica-{port}.log)."
    ]


def test_a_replica_whose_port_was_taken_while_it_was_down_is_not_routed_to_until_it_is_back(tmp_path):
    port, other_port = free_port(), free_port()
    restarts = Restarts(first_wait=0.05, longest_wait=0.05, failures=1000, start_timeout=20, steady=60)
    with replicas(tmp_path, "serves", [port, other_port], restarts) as (supervised, said):
        for p in (port, other_port):
            supervised.start(p)
        assert supervised.wait_up() is None
        supervised.replicas[port].process.kill()
        supervised.replicas[port].process.wait()
        with other_server(port):  # takes the port before the replica starts again
            watch_until(supervised, lambda: len(said) >= 3, "three failed starts")
            assert supervised.up() == [other_port]
            exited = f"The replica on port {port} exited (-9); not routed to, starting it again in 0.05 s."
            assert said[0] == exited
            taken = re.compile(
                rf"The replica on port {port} did not start: "
                r"another (program holds|server answers on) its port; not routed to"
            )
            assert all(taken.match(s) for s in said[1:]), said
        watch_until(supervised, lambda: supervised.up() == [port, other_port], "up again")  # the port is free
        assert said[-1] == f"The replica on port {port} is up again: routed to."
        assert who_answers(port, supervised.replicas[port].token) is Answer.OWN


def test_nginx_sends_nothing_to_a_replica_that_is_down():
    site = site_config(["127.0.0.1:8501", "127.0.0.1:8502"], 8080, down=["127.0.0.1:8502"])
    assert "    server 127.0.0.1:8502 down;" in site and "    server 127.0.0.1:8502 backup down;" in site
    assert "    server 127.0.0.1:8501;" in site and "    server 127.0.0.1:8501 backup;" in site
    assert PATH not in site  # the proof is asked of each replica, never through nginx
