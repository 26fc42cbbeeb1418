"""Shared fixtures: a local file server for the download tests; the browser harness."""

from __future__ import annotations

import os
import re
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from streamlit.testing.v1 import AppTest

from tests.harness import ARTIFACTS, ROOT, chromium, chromium_path, serve_app, shoot, wait_for_app

__all__ = ["ARTIFACTS", "ROOT", "shoot", "wait_for_app"]  # what the test files import from here

# The app hides error details from visitors; tests want them, in AppTest and in the browser.
os.environ.setdefault("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", "full")
# Tests never touch the network or a developer's cache: an empty MNIST cache means the bundled
# sample, which is small enough to train in a test. (Tests of the download use their own root.)
os.environ["MLP_PLAYGROUND_DATA"] = tempfile.mkdtemp(prefix="mlp-test-mnist-")
os.environ.pop("MLP_PLAYGROUND_DOWNLOAD", None)
# Class rooms go to a throwaway SQLite file, never a developer's rooms or database.
os.environ["MLP_PLAYGROUND_STATE"] = tempfile.mkdtemp(prefix="mlp-test-state-")
os.environ.pop("MLP_DATABASE_URL", None)


# A test module that runs Streamlit (AppTest, the app's pages, its server) depends on the
# Streamlit release: CI runs those again on the oldest Streamlit the project supports. The
# library's own tests (mlp/ never imports streamlit) don't, and run once.
USES_STREAMLIT = re.compile(r"AppTest|open_page|\bstreamlit\b|from pages|import pages")


# With `-n 2`, the suite runs on two pytest-xdist workers (loadgroup: pyproject.toml): every test that drives
# Chromium runs on one of them, in file order (one browser and one app server for all of them,
# as without xdist; two at once on two cores took each twice as long), while the other worker
# takes the rest, which keeps the cores busy where a browser test waits on a page. The load tests
# (many visitors on one server: a flood's posting threads, the lecture hall) go last, after the
# other worker is done (~10 minutes here): beside it, a flood at the lowest priority posted 900
# times in 8 s, not the 1,600 its test requires. A test that uses the browser or a served app
# without the mark would start a second one on the other worker: collection refuses it.
SERVED = {"browser", "app_url", "fresh_app", "page"}


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items) -> None:
    """Mark every test of a module that runs Streamlit `streamlit` (see USES_STREAMLIT), and put
    every test that drives Chromium in xdist's group "browser" (one worker runs them all), the
    load tests last."""
    seen: dict[str, bool] = {}
    for item in items:
        path = str(item.path)
        if path not in seen:
            seen[path] = bool(USES_STREAMLIT.search(item.path.read_text()))
        if seen[path]:
            item.add_marker(pytest.mark.streamlit)
        if item.get_closest_marker("browser") or item.get_closest_marker("load"):
            item.add_marker(pytest.mark.xdist_group("browser"))
        elif used := sorted(served_fixtures(item)):
            raise pytest.UsageError(f"{item.nodeid} uses {', '.join(used)}: mark it `browser`")
    items.sort(key=lambda item: item.get_closest_marker("load") is not None)  # stable: files' order kept


def served_fixtures(item) -> set[str]:
    """The fixtures of SERVED (this file's, not a parameter of the same name) that `item` uses."""
    defs = getattr(item, "_fixtureinfo", None)
    found = defs.name2fixturedefs.items() if defs else ()
    return {
        name for name, fdefs in found if name in SERVED and any(d.func.__module__ == __name__ for d in fdefs)
    }


def open_page(page: str, query: dict[str, str] | None = None, timeout: float = 120) -> AppTest:
    """The app (app.py's shell) opened straight on `page`, as a link with `query` would open it."""
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    for key, value in (query or {}).items():
        app.query_params[key] = value
    app.switch_page(page).run()
    assert not app.exception, app.exception
    return app


class FileServer:
    """Serves in-memory files on 127.0.0.1; each path can be good, missing or cut short."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.truncate: set[str] = set()  # announce the full length, send half, hang up
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(self.path)
                body = server.files.get(self.path)
                if body is None:
                    self.send_error(404, "Not Found")
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2] if self.path in server.truncate else body)
                self.close_connection = True

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def blas_threads() -> int:
    """NumPy's BLAS threads now, as threadpoolctl reads them."""
    from threadpoolctl import threadpool_info

    return next(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")


@pytest.fixture
def blas_as_it_was() -> Iterator[None]:
    """NumPy's BLAS count put back as it was after the test (a server's turns change it)."""
    from threadpoolctl import threadpool_limits

    before = blas_threads()
    yield
    threadpool_limits(before, user_api="blas")


@pytest.fixture
def file_server() -> Iterator[FileServer]:
    server = FileServer()
    yield server
    server.close()


# --- browser harness (tests/harness.py) ------------------------------------------------------


def _require_browser() -> None:
    missing = None
    if chromium_path() is None:
        missing = "Chromium not found at /usr/bin/chromium (apt-get install chromium); .ci/run installs it"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            missing = "the playwright package is not installed (pip install -r requirements-dev.txt)"
    if missing:
        if os.environ.get("MLP_REQUIRE_BROWSER"):
            pytest.fail(f"Browser tests are required here but cannot run: {missing}")
        pytest.skip(missing)


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    """The app, served once for the whole test session."""
    _require_browser()
    with serve_app("streamlit.log") as url:
        yield url


@pytest.fixture
def fresh_app() -> Iterator[str]:
    """A server of its own that no browser has visited yet."""
    _require_browser()
    with serve_app("streamlit-fresh.log") as url:
        yield url


@pytest.fixture(scope="session")
def browser(app_url):
    from playwright.sync_api import expect

    # What a page shows may take a busy server a while: expect() waits like wait_for() does.
    expect.set_options(timeout=60_000)
    with chromium() as browser:
        yield browser


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture
def page(browser, app_url, request):
    """A fresh browser tab at 1400×900; screenshots go to tests/artifacts/ (and one on failure)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(90_000)  # generous: a first page load imports torch
    yield tab
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        shoot(tab, f"FAILED-{request.node.name}.png")  # the whole page, not only the viewport
    context.close()


@pytest.fixture
def clock(monkeypatch) -> list[float]:
    """The frames' clock, made by hand: [now]; a wait for a frame's slot moves it on."""
    from pages.serving import frames
    from pages.serving.turns import shared_turns

    now = [1000.0]

    def sleep(seconds: float) -> None:
        now[0] += max(0.0, seconds)

    monkeypatch.setattr(frames, "clock", lambda: now[0])
    monkeypatch.setattr(frames, "sleep", sleep)
    monkeypatch.setattr(shared_turns(), "players", lambda: 1)  # alone (other tests' turns fade in 3 s)
    return now


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A real PostgreSQL server for the session (tests/postgres.py); skipped where PostgreSQL or
    psycopg is missing, a failure where MLP_REQUIRE_POSTGRES is set (CI)."""
    from tests.postgres import missing, postgres_server

    if why := missing():
        if os.environ.get("MLP_REQUIRE_POSTGRES"):
            pytest.fail(f"PostgreSQL tests are required here but cannot run: {why}")
        pytest.skip(why)
    with postgres_server() as url:
        yield url
