"""MNIST download faults against a mirror on 127.0.0.1, the command line, and what visitors see.

Every fault ends with data (the full set or the bundled sample), a reason in plain words with no
path, and a cache that holds no bad file. No test touches the internet; every server loop is
bounded; the timeouts below are hang guards, not speed requirements.
"""

from __future__ import annotations

import array
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mlp.data import download, mnist
from mlp.data.mnist import RemoteFile, load_mnist, main
from tests.conftest import ROOT, open_page
from tests.test_mnist import fake_mnist, files_for

pytestmark = pytest.mark.timeout(60)  # a hang guard: each test here takes a few seconds at most

Route = Callable[[BaseHTTPRequestHandler], None]


class Mirror:
    """A mirror on 127.0.0.1 that answers each path the way a test says; every answer ends."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[str] = []
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # the end of the connection ends a body without a length

            def do_GET(self) -> None:
                mirror.requests.append(self.path)
                route = mirror.routes.get(self.path)
                with suppress(BrokenPipeError, ConnectionResetError):  # the client gave up on it
                    route(self) if route else self.send_error(404)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/mnist/"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def count(self, name: str) -> int:
        return self.requests.count(f"/mnist/{name}")

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def body(data: bytes, length: bool = True) -> Route:
    """A 200 answer with `data`, with or without its Content-Length."""

    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        if length:
            handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    return route


def status(code: int) -> Route:
    return lambda handler: handler.send_error(code)


def trickle(data: bytes, gap: float) -> Route:
    """The right length announced, then one byte every `gap` seconds (1 byte per 2 s, sped up)."""

    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        for i in range(min(len(data), 400)):  # at most 400 bytes: the client gives up long before
            handler.wfile.write(data[i : i + 1])
            handler.wfile.flush()
            time.sleep(gap)

    return route


def hang(data: bytes, seconds: float) -> Route:
    """Half the file, then silence for `seconds` (a stalled connection), then the end."""

    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data[: len(data) // 2])
        handler.wfile.flush()
        time.sleep(seconds)

    return route


def endless(blocks: int, announce: int | None = None) -> Route:
    """`blocks` blocks of 64 KiB of zeros (an answer that doesn't end), its length announced or not."""

    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        if announce is not None:
            handler.send_header("Content-Length", str(announce))
        handler.end_headers()
        for _ in range(blocks):
            handler.wfile.write(bytes(1 << 16))

    return route


def gated(route: Route, gate: threading.Event) -> Route:
    """`route`, once `gate` opens (at most 20 s later)."""

    def wait_then(handler: BaseHTTPRequestHandler) -> None:
        gate.wait(20)
        route(handler)

    return wait_then


@pytest.fixture
def mirror() -> Iterator[tuple[Mirror, dict[str, RemoteFile], dict[str, bytes]]]:
    """The local mirror serving four small valid files; their checks; their bytes by name."""
    blobs = fake_mnist()
    server = Mirror()
    for name, data in blobs.items():
        server.routes[f"/mnist/{name}"] = body(data)
    yield server, files_for(blobs), blobs
    server.close()


def cached(folder: Path) -> list[str]:
    """The cache's files (not the lock file, not a temp .part file)."""
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) if folder.exists() else []


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.part")) if folder.exists() else []


ABSOLUTE_PATH = re.compile(r"(^|[\s('\"=])(/|~/|[A-Za-z]:\\)[\w.~-]")


def assert_no_path(text: str, *folders: Path) -> None:
    """No absolute path, home folder or given folder in `text` (what a visitor may read)."""
    assert not ABSOLUTE_PATH.search(text), text
    assert os.path.expanduser("~") not in text, text
    for folder in folders:
        assert str(folder) not in text, text


def assert_fell_back(data: mnist.MnistData, why: str, folder: Path, files: dict[str, RemoteFile]) -> None:
    """The bundled sample, a reason that says `why` without a path, and no bad file cached."""
    assert data.source == "sample" and (data.n_train, data.n_test) == (4000, 1000)
    assert why in data.reason, data.reason
    assert_no_path(data.reason, folder)
    sums = {file.name: file.md5 for file in files.values()}
    assert all(download.md5_of(folder / name) == sums[name] for name in cached(folder))
    assert leftovers(folder) == []


# --- one mirror, one fault -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "why", "tries"),
    [(404, "HTTP 404 Not Found", 1), (500, "HTTP 500 Internal Server Error", 2)],
)
def test_http_errors_fall_back_and_only_server_errors_are_retried(mirror, tmp_path, code, why, tries):
    server, files, _ = mirror
    name = files["train_labels"].name
    server.routes[f"/mnist/{name}"] = status(code)
    data = load_mnist(tmp_path, mirrors=[server.url], files=files, retries=2)
    assert_fell_back(data, why, tmp_path, files)
    assert server.count(name) == tries


@pytest.mark.slow
def test_a_mirror_that_never_answers_is_left_after_one_timeout(mirror, tmp_path):
    server, files, blobs = mirror
    with socket.create_server(("127.0.0.1", 0), backlog=8) as silent:  # connects, never answers
        quiet = f"http://127.0.0.1:{silent.getsockname()[1]}/mnist/"
        notices = []
        data = load_mnist(
            tmp_path, mirrors=[quiet, server.url], files=files, timeout=1.5, notice=notices.append
        )
    assert data.source == "mnist" and cached(tmp_path) == sorted(blobs)
    host = quiet.split("/")[2]
    assert notices.count(f"{files['train_images'].name}: {host}: no answer within 1.5 s") == 1
    assert not any(host in line for line in notices[2:])  # the mirror that answered goes first


@pytest.mark.slow
def test_a_stall_mid_file_times_out_and_is_retried(mirror, tmp_path):
    server, files, blobs = mirror
    name = files["test_images"].name
    server.routes[f"/mnist/{name}"] = hang(blobs[name], seconds=4)
    data = load_mnist(tmp_path, mirrors=[server.url], files=files, retries=2, timeout=1)
    assert_fell_back(data, "stalled: nothing for 1 s", tmp_path, files)
    assert server.count(name) == 2


def test_a_trickle_meets_the_deadline_per_file(mirror, tmp_path):
    """1 byte every 2 s never trips a socket timeout; the file's overall deadline stops it."""
    server, files, blobs = mirror
    name = files["train_images"].name
    server.routes[f"/mnist/{name}"] = trickle(blobs[name], gap=0.05)
    data = load_mnist(tmp_path, mirrors=[server.url], files=files, retries=1, timeout=5, deadline=0.5)
    assert_fell_back(data, "too slow:", tmp_path, files)
    assert f"of {len(blobs[name]) / 1e3:.1f} kB in 0.5 s" in data.reason


@pytest.mark.parametrize("announced", [False, True])
def test_an_answer_past_the_files_size_is_refused_not_stored(mirror, tmp_path, monkeypatch, announced):
    """An answer that doesn't end stops at the file's cap as it streams; one that announces
    200 MB for a file of 40 bytes is refused before a byte is read."""
    server, files, blobs = mirror
    name = files["train_labels"].name  # 40 bytes: its cap is 110% of that
    size = 200 * 10**6
    server.routes[f"/mnist/{name}"] = endless(blocks=64, announce=size if announced else None)
    written = []  # bytes written to disk for this file
    real_write = download._Partial.write

    def write(part: download._Partial, block: bytes) -> None:
        if part.dest.name == name:
            written.append(len(block))
        real_write(part, block)

    monkeypatch.setattr(download._Partial, "write", write)
    data = load_mnist(tmp_path, mirrors=[server.url], files=files, retries=1)
    cap = int(files["train_labels"].size * download.SIZE_MARGIN)
    if announced:
        assert_fell_back(
            data, f"it announced 200.0 MB for a file of {len(blobs[name])} bytes", tmp_path, files
        )
        assert sum(written) == 0  # refused before a byte was read
    else:
        assert_fell_back(
            data, f"it sent over {cap} bytes for a file of {len(blobs[name])} bytes", tmp_path, files
        )
        assert sum(written) <= cap  # the disk never saw more than the cap


def cut(data: bytes) -> Route:
    """The full length announced, half the bytes sent, then the connection closed."""

    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data[: len(data) // 2])

    return route


@pytest.mark.parametrize(
    ("fault", "why"),
    [
        (lambda data: cut(data), "connection closed after"),
        (lambda data: body(data[: len(data) // 2], length=False), "checksum mismatch"),
        (lambda data: body(b"\x1f\x8b" + bytes(len(data) - 2)), "checksum mismatch"),
    ],
    ids=["truncated", "truncated-without-length", "bad-checksum"],
)
def test_truncated_or_wrong_files_are_never_cached(mirror, tmp_path, fault, why):
    server, files, blobs = mirror
    name = files["test_images"].name
    server.routes[f"/mnist/{name}"] = fault(blobs[name])
    data = load_mnist(tmp_path, mirrors=[server.url], files=files, retries=1)
    assert_fell_back(data, f"{name}: 127.0.0.1", tmp_path, files)
    assert why in data.reason


# --- the cache folder ------------------------------------------------------------------------

FS_IOC_GETFLAGS, FS_IOC_SETFLAGS, FS_IMMUTABLE_FL = 0x80086601, 0x40086602, 0x10  # linux/fs.h


def _immutable(folder: Path, on: bool) -> None:
    import fcntl

    fd = os.open(folder, os.O_RDONLY)
    try:
        flags = array.array("l", [0])
        fcntl.ioctl(fd, FS_IOC_GETFLAGS, flags, True)
        flags[0] = flags[0] | FS_IMMUTABLE_FL if on else flags[0] & ~FS_IMMUTABLE_FL
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, flags, True)
    finally:
        os.close(fd)


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` made read-only: by its mode, and for root (whom modes don't stop) by the immutable
    attribute, where the file system has it; else the test is skipped."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o555)
    immutable = False
    try:
        if os.access(folder, os.W_OK):  # root
            try:
                _immutable(folder, True)
                immutable = True
            except (OSError, ImportError) as err:
                pytest.skip(f"can't make a folder read-only for root here ({err})")
        yield
    finally:
        if immutable:
            _immutable(folder, False)
        folder.chmod(0o755)


def test_a_read_only_cache_folder_is_named_and_no_mirror_is_blamed(mirror, tmp_path, capsys):
    server, files, _ = mirror
    folder = tmp_path / "cache"
    with read_only(folder):
        data = load_mnist(folder, mirrors=[server.url], files=files)
        code = main(["--cache", str(folder), "--mirror", server.url, "--timeout", "1"])
    assert_fell_back(data, "the cache folder can't be written (", folder, files)
    assert server.requests == []  # found before asking any mirror
    assert code == 3 and "Choose another folder with --cache" in capsys.readouterr().err


# --- two at once ---------------------------------------------------------------------------------


def _two_at_once(server: Mirror, files, folder: Path, gate: threading.Event) -> list[mnist.MnistData]:
    """A download held at its first file until a second one is seen waiting; both results."""
    waiting, results = threading.Event(), [None, None]

    def load(i: int, notice) -> None:
        results[i] = load_mnist(folder, mirrors=[server.url], files=files, retries=1, notice=notice)

    first = threading.Thread(target=load, args=(0, None))
    first.start()
    while not server.requests and first.is_alive():  # the first is at its first file
        time.sleep(0.01)
    second = threading.Thread(target=load, args=(1, lambda line: "waiting" in line and waiting.set()))
    second.start()
    assert waiting.wait(20), "the second download did not wait for the first"
    gate.set()
    for thread in (first, second):
        thread.join(30)
    return results


def test_two_threads_one_download_the_other_waits_and_uses_it(mirror, tmp_path):
    server, files, blobs = mirror
    gate, name = threading.Event(), files["train_images"].name
    server.routes[f"/mnist/{name}"] = gated(body(blobs[name]), gate)
    results = _two_at_once(server, files, tmp_path, gate)
    assert [data.source for data in results] == ["mnist", "mnist"]
    assert all(server.count(n) == 1 for n in blobs)  # each file downloaded once, by the first


def test_visitors_waiting_for_a_failed_download_dont_all_try_again(mirror, tmp_path):
    server, files, _ = mirror
    gate, name = threading.Event(), files["train_images"].name
    server.routes[f"/mnist/{name}"] = gated(status(500), gate)
    results = _two_at_once(server, files, tmp_path, gate)
    assert [data.source for data in results] == ["sample", "sample"]
    assert results[0].reason == results[1].reason and "HTTP 500" in results[1].reason
    assert server.count(name) == 1 and cached(tmp_path) == []


CHILD = """
import functools, json, sys
from mlp.data.mnist import RemoteFile, load_mnist
print = functools.partial(print, flush=True)
files = {role: RemoteFile(*f) for role, f in json.loads(sys.argv[3]).items()}
data = load_mnist(sys.argv[1], mirrors=[sys.argv[2]], files=files, notice=print)
print("source:", data.source, flush=True)
"""


@pytest.mark.slow
@pytest.mark.skipif(download.fcntl is None, reason="no flock on this system: processes don't take turns")
def test_a_process_waits_for_another_process_download_then_uses_its_files(mirror, tmp_path):
    """This test holds the lock file as a downloading process would; a second process waits,
    and once the files are in place it uses them without asking the mirror."""
    import fcntl

    server, files, blobs = mirror
    tmp_path.joinpath(download.LOCK_FILE).touch()
    with open(tmp_path / download.LOCK_FILE, "ab") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(tmp_path), server.url, json.dumps(files)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert "waiting" in child.stdout.readline()  # "Another program is downloading ..."
            for name, data in blobs.items():  # what the other download brings, file by file
                (tmp_path / name).write_bytes(data)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    out, _ = child.communicate(timeout=30)
    assert out.strip().endswith("source: mnist") and server.requests == []


# --- the command line ----------------------------------------------------------------------------


def test_the_command_has_help_with_its_exit_codes(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    text = capsys.readouterr().out
    assert done.value.code == 0
    assert all(option in text for option in ("--cache", "--timeout", "--deadline", "--mirror"))
    assert "exit codes:" in text and all(f"\n  {code}  " in text for code in range(4))
    with pytest.raises(SystemExit) as done:
        main(["--timeout", "0"])
    assert done.value.code == 2


def test_the_command_runs_as_a_module_without_a_warning_first(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mlp.data.mnist", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "MLP_PLAYGROUND_DATA": str(tmp_path)},
    )
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m mlp.data.mnist")
    assert done.stderr == ""  # runpy's RuntimeWarning came here, before anything else


def test_the_command_shows_each_file_in_percent_and_megabytes(mirror, tmp_path, monkeypatch, capsys):
    server, files, blobs = mirror
    monkeypatch.setattr(mnist, "MNIST_FILES", files)  # the small files, with their checksums
    assert main(["--cache", str(tmp_path), "--mirror", server.url]) == 0
    err = capsys.readouterr().err
    for file in files.values():
        assert (
            f"  {file.name}: 100%  {download.size_text(file.size)} of {download.size_text(file.size)}" in err
        )
    assert "Done: the four files are in" in err and cached(tmp_path) == sorted(blobs)


@pytest.mark.slow
def test_the_command_says_promptly_when_no_mirror_answers(tmp_path, capsys):
    """A stalled proxy used to mean a minute of silence: now each try is a line, then the verdict."""
    with socket.create_server(("127.0.0.1", 0), backlog=8) as silent:
        quiet = f"http://127.0.0.1:{silent.getsockname()[1]}/"
        code = main(
            ["--cache", str(tmp_path), "--mirror", quiet, "--mirror", quiet + "b/", "--timeout", "0.3"]
        )
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("downloading from 127.0.0.1") == 2 and err.count("no answer within 0.3 s") >= 2
    assert "Could not download the full MNIST" in err and "bundled sample" in err


# --- what visitors see -------------------------------------------------------------------------


def test_reasons_never_name_a_path(mirror, tmp_path):
    """Every way the full set can be missing, told without the cache folder or any other path."""
    server, files, _ = mirror
    blocked = tmp_path / "a-file"
    blocked.write_text("a file where the cache folder should be")
    unreachable = "http://127.0.0.1:9/"
    cases = [
        load_mnist(tmp_path / "empty", download=False, files=files),
        load_mnist(blocked / "mnist", mirrors=[server.url], files=files),
        load_mnist(tmp_path / "net", mirrors=[unreachable], files=files, timeout=2),
    ]
    (tmp_path / "damaged").mkdir()
    (tmp_path / "damaged" / files["test_labels"].name).write_bytes(b"not gzip")
    cases.append(load_mnist(tmp_path / "damaged", download=False, files=files))
    for data in cases:
        assert data.source == "sample" and data.reason
        assert_no_path(data.reason + data.headline, tmp_path)
    assert [str(tmp_path) in data.note for data in cases] == [True] * len(cases)  # the log has it


def test_the_page_shows_a_failed_download_without_the_servers_paths(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("a file where the cache folder should be")
    monkeypatch.setenv(mnist.ENV_VAR, str(blocked / "mnist"))  # can't be created: fails before any network
    at = open_page("pages/mnist.py")
    at.button(key="mn_download").click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert errors == [
        "Download failed: the page keeps the bundled sample because the cache folder can't be written "
        "(Not a directory)."
    ]
    shown = [
        e.value
        for kind in ("info", "caption", "markdown", "error", "warning", "success")
        for e in at.get(kind)
    ]
    for text in shown:
        assert_no_path(text, tmp_path)
