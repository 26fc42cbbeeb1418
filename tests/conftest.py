"""Shared fixtures: a local file server for the download tests; the browser harness."""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

# The app hides error details from visitors; tests want them, in AppTest and in the browser.
os.environ.setdefault("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", "full")
# Tests never touch the network or a developer's cache: an empty MNIST cache means the bundled
# sample, which is small enough to train in a test. (Tests of the download use their own root.)
os.environ["MLP_PLAYGROUND_DATA"] = tempfile.mkdtemp(prefix="mlp-test-mnist-")
os.environ.pop("MLP_PLAYGROUND_DOWNLOAD", None)


def open_page(page: str, query: dict[str, str] | None = None, timeout: float = 120) -> AppTest:
    """The app (app.py's shell) opened straight on `page`, as a link with `query` would open it."""
    app = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=timeout)
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


@pytest.fixture
def file_server() -> Iterator[FileServer]:
    server = FileServer()
    yield server
    server.close()


# --- browser harness -----------------------------------------------------------------------

import shutil  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("MLP_TEST_ARTIFACTS", ROOT / "tests" / "artifacts"))
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str | None:
    candidates = [os.environ.get("CHROMIUM_PATH"), "/usr/bin/chromium", shutil.which("chromium")]
    return next((c for c in candidates if c and Path(c).exists()), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


@contextmanager
def serve_app(log_name: str) -> Iterator[str]:
    """`streamlit run app.py` on 127.0.0.1 and a free port, until the block ends."""
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    command += ["--server.address", "127.0.0.1", "--server.port", str(port)]
    command += ["--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    url = f"http://127.0.0.1:{port}"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open(ARTIFACTS / log_name, "w") as log:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while not _healthy(url):
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"streamlit did not become healthy on {url}; see {ARTIFACTS / log_name}")
                time.sleep(0.3)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


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


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="session")
def browser(app_url):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


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
        tab.screenshot(path=str(ARTIFACTS / f"FAILED-{request.node.name}.png"))
    context.close()


def wait_for_app(tab, heading: str | None = None) -> None:
    """Wait until the page's title is drawn and Streamlit has stopped running the script."""
    tab.wait_for_selector('[data-testid="stMain"] h1', state="visible")
    if heading:
        tab.get_by_role("heading", name=heading).first.wait_for(state="visible")
    quiet = 0
    while quiet < 3:  # the running indicator must stay away for a few polls in a row
        tab.wait_for_timeout(150)
        running = tab.locator('[data-testid="stStatusWidget"]').count() > 0
        quiet = 0 if running else quiet + 1


def shoot(tab, name: str, width: int = 1400) -> None:
    """Screenshot the whole page: Streamlit scrolls inside its main block, so grow the viewport."""
    selector = '[data-testid="stMain"], [data-testid="stMainBlockContainer"]'
    height = tab.evaluate(
        "(sel) => Math.max(...[...document.querySelectorAll(sel)].map(e => e.scrollHeight), 900)", selector
    )
    old = tab.viewport_size
    tab.set_viewport_size({"width": width, "height": min(int(height) + 40, 6000)})
    tab.wait_for_timeout(400)
    tab.screenshot(path=str(ARTIFACTS / name))
    tab.set_viewport_size(old)
