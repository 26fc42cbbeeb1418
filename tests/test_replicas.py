"""The replica launcher's own checks (deploy/replicas.py), without nginx or the app: it refuses
ports another program holds before it starts anything; a replica proves it is what answers its
port (deploy/identity.py).

The replicas behind a real nginx, and the launcher run whole: tests/test_scale_out.py.
"""

from __future__ import annotations

import asyncio
import http.server
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
