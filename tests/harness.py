"""The app in a real browser: serve `streamlit run app.py` on 127.0.0.1, drive Debian's Chromium.

Shared by the browser tests (tests/conftest.py) and the browser benchmarks (bench/).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from deploy.replicas import healthy  # the one health check, also the replicas' launcher's

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
# In a page's own JavaScript: the step of the frame the playground's plane drew last (its canvas
# sits in the component's shadow root, which document.querySelector doesn't enter), or null.
PLANE_CANVAS_JS = (
    "document.querySelector('.st-key-pg_plane [data-testid=\"stBidiComponentIsolated\"]')"
    "?.shadowRoot?.querySelector('canvas')"
)
PLANE_STEP_JS = f"({PLANE_CANVAS_JS}?.dataset.step ?? null)"
# In a page's own JavaScript: window.__frames counts the frames the plane draws (each new step
# on its canvas), seen as they happen (a MutationObserver: no polling, which 32 tabs would pay for);
# window.__step is the step the last of them showed.
COUNT_FRAMES_JS = """() => {
  window.__frames = 0;
  window.__step = Number(PLANE_CANVAS?.dataset.step ?? 0);
  let watched = null, last = null;
  const watch = () => {
    const canvas = PLANE_CANVAS;
    if (!canvas || canvas === watched) return;
    watched = canvas;
    new MutationObserver(() => {
      if (canvas.dataset.step !== last) {
        window.__frames += 1;
        window.__step = Number(canvas.dataset.step);
        last = canvas.dataset.step;
      }
    }).observe(canvas, { attributes: true, attributeFilter: ["data-step"] });
  };
  watch();
  setInterval(watch, 1000);  // a page's rerun may draw a new canvas
}""".replace("PLANE_CANVAS", PLANE_CANVAS_JS)


def plane_metric(tab, label: str):
    """A locator of the playground's number under `label` ("Epoch", "Step", "Test accuracy", …),
    shown with the plane (pages/ui/plane.py; Playwright's locators enter its shadow root)."""
    return tab.locator(f'.plane .metric[data-label="{label}"] .value')


def plane_metrics(tab) -> list[str]:
    """Every number shown with the plane, label and value: ["Epoch\\n3", "Step\\n3", …]."""
    return tab.locator(".plane .metric").all_inner_texts()


class ServerError(RuntimeError):
    """The app did not come up."""


def frame_statuses(tab) -> list[int]:
    """The statuses of the frames `tab`'s plane gets over its frame socket from now on (a list
    that grows as they come; pages/serving/frames.py's frame_socket)."""
    from pages.serving.frames import PATH

    statuses: list[int] = []

    def watch(socket) -> None:
        if PATH in socket.url:
            socket.on("framereceived", lambda answer: statuses.append(json.loads(answer)["status"]))

    tab.on("websocket", watch)
    return statuses


# An init script for a tab whose frame socket never opens (a proxy that won't upgrade the frame
# route's path): the plane's canvas then asks for its frames over HTTP, as it did before it had one.
NO_FRAME_SOCKET_JS = """(() => {
  const Real = window.WebSocket;
  window.WebSocket = function (url, protocols) {
    return new Real(String(url).includes("/api/playground/frame") ? "ws://127.0.0.1:9/" : url, protocols);
  };
  Object.assign(window.WebSocket, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });
  window.WebSocket.prototype = Real.prototype;
})()"""


def chromium_path() -> str | None:
    candidates = [os.environ.get("CHROMIUM_PATH"), "/usr/bin/chromium", shutil.which("chromium")]
    return next((c for c in candidates if c and Path(c).exists()), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve_app(
    log_name: str, options: dict[str, str] | None = None, env: dict[str, str] | None = None
) -> Iterator[str]:
    """`streamlit run app.py` on 127.0.0.1 and a free port, until the block ends; yields its URL.

    `options` are extra --section.option values; `env` extra environment variables.
    """
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    command += ["--server.address", "127.0.0.1", "--server.port", str(port)]
    command += ["--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    for name, value in (options or {}).items():
        command += [f"--{name}", value]
    url = f"http://127.0.0.1:{port}"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    if worker := os.environ.get("PYTEST_XDIST_WORKER"):  # a log each: two workers serve at once
        log_name = f"{worker}-{log_name}"
    with open(ARTIFACTS / log_name, "w") as log:
        proc = subprocess.Popen(
            command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )
        serve_app.pid = proc.pid
        try:
            deadline = time.monotonic() + 90
            while not healthy(url):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise ServerError(
                        f"streamlit did not become healthy on {url}; see {ARTIFACTS / log_name}"
                    )
                time.sleep(0.3)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextmanager
def chromium() -> Iterator:
    """A headless Chromium (Debian's) driven by Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()


def button(tab, label: str):
    """A button by its label, whether or not Streamlit appends its shortcut to its accessible name
    ("Step Shortcut S")."""
    return tab.get_by_role("button", name=re.compile(rf"^{re.escape(label)}( Shortcut .+)?$"))


# In a page's own JavaScript: window.__mlpRuns counts the reruns this page asked Streamlit for
# (BackMsg's rerun_script, field 11, sent on its /_stcore/stream socket: a widget's change, a page
# link, a fragment's timer) and, as `answered`, how many had been asked when the server last
# started a run (ForwardMsg's new_session, field 4) or ended one (script_finished, field 6, other
# than "ended early for a rerun"). The status widget can't tell a rerun is coming: it shows only
# after a run has gone on for half a second, so a click's rerun that a busy server started late
# was invisible to the wait that followed the click.
RUNS_JS = """(() => {
  if (window.__mlpRuns) return;
  const runs = (window.__mlpRuns = { asked: 0, answered: 0 });
  const varint = (b, i) => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      const x = b[i++];
      v += (x & 127) * 2 ** shift;
      if (x < 128 || i >= b.length) return [v, i];
    }
  };
  const answers = (b) => {  // a ForwardMsg that starts a run or ends one (not for a rerun)
    let i = 0, key, n;
    while (i < b.length) {
      [key, i] = varint(b, i);
      const field = Math.floor(key / 8), wire = key & 7;
      if (field === 4) return true;  // new_session: a run starts
      if (wire === 0) { [n, i] = varint(b, i); if (field === 6) return n !== 2; }
      else if (wire === 2) { [n, i] = varint(b, i); i += n; }
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else return false;
    }
    return false;
  };
  const watched = new WeakSet();
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (String(this.url).includes("/_stcore/stream")) {
      if (!watched.has(this)) {
        watched.add(this);
        this.addEventListener("message", (e) => {
          if (e.data instanceof ArrayBuffer && answers(new Uint8Array(e.data))) runs.answered = runs.asked;
        });
      }
      const b = ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, 1)
        : data instanceof ArrayBuffer ? new Uint8Array(data, 0, 1) : null;
      if (b && b[0] === 0x5a) runs.asked += 1;  // field 11, length-delimited: rerun_script
    }
    return send.call(this, data);
  };
})()"""


def playwright_error() -> type[Exception]:
    """Playwright's error (imported on use: the harness loads without Playwright)."""
    from playwright.sync_api import Error

    return Error


def watch_runs_from_start(context) -> None:
    """Count reruns (RUNS_JS) in every page `context` opens from now on."""
    if not getattr(context, "_mlp_runs", False):
        context.add_init_script(RUNS_JS)
        context._mlp_runs = True


def watch_runs(tab) -> None:
    """Count `tab`'s reruns (RUNS_JS) in its page now, and in every page its context opens later."""
    watch_runs_from_start(tab.context)
    with suppress(playwright_error()):  # the page was navigating: the new one gets RUNS_JS from its context
        tab.evaluate(RUNS_JS)


def wait_for_app(tab, heading: str | None = None, title: bool = True) -> None:
    """Wait until the page's title is drawn (unless `title` is False: a tour's stop in projector
    mode has none), every rerun the page asked for (a click's, a link's) has started, Streamlit
    has stopped running the script and, in a link to projector mode, its style is in effect (it
    lands up to seconds after the page's first paint on a busy machine)."""
    watch_runs(tab)
    # The reruns asked so far (not those a fragment's timer asks for while this waits) must have
    # started; then the status widget's quiet polls wait for the run to end. The mark is kept in
    # the page: a page that replaces it (a link followed) starts a count of its own.
    with suppress(playwright_error()):
        tab.evaluate("() => { const runs = window.__mlpRuns; if (runs) runs.target = runs.asked; }")
    tab.wait_for_function("() => { const r = window.__mlpRuns; return r && r.answered >= (r.target ?? 0); }")
    if title:
        tab.wait_for_selector('[data-testid="stMain"] h1', state="visible")
    if heading:
        tab.get_by_role("heading", name=heading).first.wait_for(state="visible")
    quiet = 0
    while quiet < 3:  # the running indicator must stay away for a few polls in a row
        tab.wait_for_timeout(150)
        running = tab.locator('[data-testid="stStatusWidget"]').count() > 0
        quiet = 0 if running else quiet + 1
    if "present=1" in tab.url:  # projector mode's style (st.html, drawn after the page's first paint)
        tab.wait_for_function("() => getComputedStyle(document.documentElement).fontSize === '20px'")


def shared_context(browser, size: tuple[int, int] = (1280, 720)):
    """One browser context for many visitors who need no cookies of their own (the playground's
    players): each tab is still a Streamlit session of its own, but the tabs share the context's
    caches, so a playground after the first loads on about a third of Chromium's CPU (2.5 against
    7.5 CPU-seconds here: the scripts come compiled from the cache). A class's browsers are its
    students' own machines; on the suite's two cores, what a cold browser costs is taken from the
    server being measured. Visitors who sign in (a class room's students) need contexts of their
    own. Pass it where open_tab and open_tabs take a browser; close it when the class is done."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    context.mlp_shared = True
    return context


def leave(tab) -> None:
    """A visitor leaves: their tab closes, and their context with it unless it is shared."""
    if getattr(tab.context, "mlp_shared", False):
        tab.close()
    else:
        tab.context.close()


def visitor_tab(where, size: tuple[int, int] = (1280, 720), script: str | None = None):
    """A new tab for a visitor: in a context of their own when `where` is a browser, in `where`
    when it is a shared context (shared_context). A `script` runs in every page of a context of
    their own before the page's own (Playwright's init script); a shared context has its own."""
    if getattr(where, "mlp_shared", False):
        if script:
            raise ValueError("a shared context's init scripts are its own: open these in their own contexts")
        context = where
    else:
        context = where.new_context(viewport={"width": size[0], "height": size[1]})
        if script:
            context.add_init_script(script)
    watch_runs_from_start(context)
    return context.new_page()


def open_tab(
    browser,
    url: str,
    heading: str,
    timeout_ms: int,
    size: tuple[int, int] = (1280, 720),
    script: str | None = None,
):
    """A visitor of their own: a new browser context (no shared cookies or session) on `url`,
    once the page titled `heading` has drawn (with a shared_context as `browser`, a new tab in
    it). Every later wait gets `timeout_ms`. A `script` runs in every page of the context
    before the page's own (Playwright's init script)."""
    tab = visitor_tab(browser, size, script)
    tab.set_default_timeout(timeout_ms)
    tab.goto(url)
    wait_for_app(tab, heading=heading)
    return tab


def open_tabs(browser, urls: list[str], heading: str, timeout_ms: int, script: str | None = None) -> list:
    """Visitors of their own on each of `urls`, arriving at once: every tab asks for its page
    before any is waited on (a class opening a link together), then each is waited on until
    its page titled `heading` has drawn. As open_tab, without one tab's load after another's."""
    tabs = []
    for url in urls:
        tab = visitor_tab(browser, script=script)
        tab.set_default_timeout(timeout_ms)
        tab.goto(url, wait_until="commit")  # asked for; the browser loads them all meanwhile
        tabs.append(tab)
    for tab in tabs:
        tab.wait_for_load_state()
        wait_for_app(tab, heading=heading)
    return tabs


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
