"""Replicas behind nginx, as docs/hosting.md runs them: three app processes on
127.0.0.1 and nginx in front, from deploy/nginx.conf with the replica block written for their
ports (deploy/replicas.py), each as a plain process.

Visitors are browser contexts (their own cookies, their own session) going through nginx. With
affinity each one's requests reach the replica that holds their session: they train, upload and
download. Killing a replica moves its visitors, and only them, to a fresh session on another
replica, and tells them so; the other visitors keep theirs. Without affinity (round robin)
uploads and downloads that reach a replica without the session fail: what docs/hosting.md warns of.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import expect

from deploy.ports import in_use
from deploy.replicas import (
    SITE,
    healthy,
    nginx_command,
    nginx_path,
    replica_env,
    site_config,
    start_nginx,
    stop,
)
from deploy.supervisor import Replicas
from mlp.io import model_from_bytes, model_to_bytes
from mlp.model import MLP
from tests.conftest import ARTIFACTS, ROOT, _require_browser, shoot, wait_for_app
from tests.harness import button, frame_statuses, free_port, plane_metric
from tests.test_replicas import other_server

COOKIE = "mlp_replica"  # deploy/nginx.conf's: the replica a visitor is pinned to
LOGS = ARTIFACTS / "scale-out"  # each replica's log, nginx's configs and logs (access.log: who served what)
MESSAGE = "The server that held your session went away."
SEED_LABEL = "Seed (initial weights, batch order)"
KILLS = 3  # replicas killed under a playing page, each time on a replica that has served no page


def test_the_shipped_nginx_config_is_what_the_script_writes():
    ports = [8501, 8502, 8503]
    assert site_config([f"127.0.0.1:{port}" for port in ports], 8080) == SITE.read_text()


def test_nginx_takes_every_upload_streamlit_takes():
    import tomllib  # Python 3.11+, like the tests that read it in tests/test_repo.py

    server = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]
    nginx_mb = int(re.search(r"client_max_body_size (\d+)m;", SITE.read_text())[1])
    assert nginx_mb > server["maxUploadSize"]  # the file and its form wrapping


@pytest.mark.skipif(nginx_path() is None, reason="nginx not found (apt-get install nginx)")
@pytest.mark.parametrize(("affinity", "down"), [(True, []), (False, []), (True, ["127.0.0.1:8502"])])
def test_nginx_accepts_the_config(tmp_path, affinity, down):
    site = site_config(["127.0.0.1:8501", "127.0.0.1:8502"], "127.0.0.1:8080", affinity, down)
    check = subprocess.run([*nginx_command(tmp_path, site), "-t"], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def wait_nginx(nginx: subprocess.Popen, url: str, logs: Path) -> None:
    """Until nginx answers at `url` (30 s at most)."""
    deadline = time.monotonic() + 30
    while not healthy(url):
        assert nginx.poll() is None and time.monotonic() < deadline, f"nginx did not start: see {logs}"
        time.sleep(0.1)


@pytest.mark.skipif(nginx_path() is None, reason="nginx not found (apt-get install nginx)")
def test_nginx_names_no_version(tmp_path):
    listen = f"127.0.0.1:{free_port()}"
    with other_server() as port:
        nginx = start_nginx(tmp_path, site_config([f"127.0.0.1:{port}"], listen))
        try:
            wait_nginx(nginx, f"http://{listen}", tmp_path)
            with urllib.request.urlopen(f"http://{listen}/", timeout=5) as response:
                assert response.headers["Server"] == "nginx"  # not nginx/1.22.1
            # An upload over client_max_body_size: nginx answers with its own error page.
            connection = http.client.HTTPConnection(listen, timeout=5)
            connection.putrequest("POST", "/")
            connection.putheader("Content-Length", str(100 << 20))
            connection.endheaders()
            refused = connection.getresponse()
            page = refused.read().decode()
            assert refused.status == 413 and refused.headers["Server"] == "nginx"
            assert "<center>nginx</center>" in page and "nginx/" not in page
            connection.close()
        finally:
            stop([nginx])


# --- the launcher, run whole ---------------------------------------------------------------------


class Launcher:
    """`python -m deploy.replicas` with `args`, its lines of output collected as they come."""

    def __init__(self, *args: str) -> None:
        command = [sys.executable, "-u", "-m", "deploy.replicas", *args]
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=lambda: self.lines.extend(self.process.stdout), daemon=True)
        self.reader.start()

    def said(self, text: str, timeout: float = 180) -> str:
        """Until a line containing `text` came (`timeout` s at most); that line."""
        deadline = time.monotonic() + timeout
        while not (found := [line for line in self.lines if text in line]):
            assert self.process.poll() is None, (
                f"the launcher exited ({self.process.returncode}): {self.lines}"
            )
            assert time.monotonic() < deadline, f"not said within {timeout} s: {text!r}; said {self.lines}"
            self.reader.join(0.1)
        return found[0].strip()

    def child_on(self, port: int) -> int:
        """The pid of the replica the launcher runs on `port` (Linux: read from /proc)."""
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError):
                ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
                arguments = (stat.parent / "cmdline").read_bytes().split(b"\0")
                if ppid == self.process.pid and str(port).encode() in arguments:
                    return int(stat.parent.name)
        raise AssertionError(f"no replica process on port {port}")


def free_pair() -> int:
    """A free port whose next one is free too."""
    for _ in range(50):
        if not in_use("127.0.0.1", (port := free_port()) + 1):
            return port
    raise AssertionError("no two free ports in a row")


@contextlib.contextmanager
def hold(port: int) -> Iterator[None]:
    """Another server on `port` as soon as it is free (10 s at most), until the block ends."""
    deadline = time.monotonic() + 10
    while True:
        try:
            with other_server(port):
                yield
                return
        except OSError:  # still held by the process that is dying
            assert time.monotonic() < deadline, f"port {port} stayed taken"
            time.sleep(0.01)


@pytest.mark.slow
@pytest.mark.skipif(nginx_path() is None, reason="nginx not found (apt-get install nginx)")
def test_the_launcher_never_routes_to_a_server_that_took_a_replicas_port(tmp_path):
    """Run whole: nginx routes only to the replicas that proved themselves; a replica's port
    taken while it was down is out of nginx's routing until the replica is back on it."""
    first, listen = free_pair(), f"127.0.0.1:{free_port()}"
    began = time.monotonic()
    launcher = Launcher("-n", "2", "--first-port", str(first), "--listen", listen, "--folder", str(tmp_path))
    try:
        launcher.said("2 replicas behind nginx")
        print(f"2 replicas behind nginx {time.monotonic() - began:.1f} s after the launch")
        url = f"http://{listen}"
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as response:
            assert response.headers["Server"] == "nginx"
        os.kill(launcher.child_on(first), signal.SIGKILL)  # r1 crashes, and another server takes its port
        with hold(first):
            launcher.said(f"The replica on port {first} exited (-9); not routed to")
            launcher.said(f"The replica on port {first} did not start: another")  # its restart found it
            assert {answering(url, "r1") for _ in range(20)} == {"r2"}  # r1's visitors reach r2, not it
        back = time.monotonic()
        launcher.said(f"The replica on port {first} is up again: routed to.", timeout=120)
        print(f"r1 back {time.monotonic() - back:.1f} s after its port was free")
        deadline = time.monotonic() + 10
        while answering(url, "r1") != "r1":  # nginx has reloaded its config
            assert time.monotonic() < deadline, "nginx did not route to r1 again"
            time.sleep(0.1)
        replicas = [launcher.child_on(port) for port in (first, first + 1)]
        launcher.process.terminate()
        assert launcher.process.wait(30) == 0
        assert not any(Path(f"/proc/{pid}").exists() for pid in replicas)  # it stopped them
    finally:
        if launcher.process.poll() is None:
            launcher.process.kill()
            launcher.process.wait()
    print("the launcher said:", *(line.rstrip() for line in launcher.lines), sep="\n  ")


# --- the replicas, nginx and the browsers ------------------------------------------------------


@dataclass
class Cluster:
    """Three replicas, nginx with affinity (`url`) and without (`round_robin`), one Chromium."""

    browser: object
    url: str
    round_robin: str
    ports: dict[str, int]  # replica name (r1, r2, r3: the cookie's values) -> port
    replicas: Replicas  # as the launcher runs them: each proves it is what answers its port

    def start(self, name: str, wait: bool = True) -> None:
        """Start replica `name` (again) and, unless told not to, wait until it has proved itself."""
        self.replicas.start(self.ports[name])
        if wait:
            self.wait_up(name)

    def wait_up(self, name: str) -> None:
        """Until replica `name`, started, has proved itself."""
        failure = self.replicas.wait_up([self.ports[name]])
        assert failure is None, failure

    def kill(self, name: str) -> None:
        """A crash: SIGKILL, no goodbye to its visitors."""
        process = self.process(name)
        process.kill()
        process.wait()

    def process(self, name: str) -> subprocess.Popen:
        return self.replicas.replicas[self.ports[name]].process


def rss_mb(pid: int) -> float:
    """Resident memory of a process, in MB (Linux)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", status)[1]) / 1024


@pytest.fixture(scope="module")
def cluster(browser) -> Iterator[Cluster]:
    """Three replicas and nginx in front; the suite's one browser (Playwright's sync API allows
    one at a time) visits them."""
    _require_browser()
    if nginx_path() is None:
        if os.environ.get("MLP_REQUIRE_BROWSER"):  # CI: a test that can't run is a failure
            pytest.fail("nginx not found (apt-get install nginx): the scale-out test can't run")
        pytest.skip("nginx not found (apt-get install nginx)")
    shutil.rmtree(LOGS, ignore_errors=True)
    LOGS.mkdir(parents=True)
    ports = {f"r{i}": free_port() for i in (1, 2, 3)}
    url, round_robin = (f"http://127.0.0.1:{free_port()}" for _ in range(2))
    cluster = Cluster(None, url, round_robin, ports, Replicas(list(ports.values()), replica_env(), LOGS))
    nginx: list[subprocess.Popen] = []
    try:
        for port in ports.values():
            cluster.replicas.start(port)
        failure = cluster.replicas.wait_up()
        assert failure is None, failure
        addresses = [f"127.0.0.1:{port}" for port in ports.values()]
        for base, affinity in ((url, True), (round_robin, False)):
            site = site_config(addresses, base.removeprefix("http://"), affinity)
            nginx.append(start_nginx(LOGS / ("nginx" if affinity else "nginx-round-robin"), site))
        deadline = time.monotonic() + 30
        while not (healthy(url) and healthy(round_robin)):
            alive = all(process.poll() is None for process in nginx)
            assert alive and time.monotonic() < deadline, f"nginx did not start: see {LOGS}"
            time.sleep(0.1)
        cluster.browser = browser
        warm_up(cluster)
        print("replica memory after its first visit:", memory(cluster))
        yield cluster
        print("replica memory at the end:", memory(cluster))
    finally:
        stop([*nginx, *cluster.replicas.processes()])


def memory(cluster: Cluster) -> str:
    """Each running replica's resident memory, as text."""
    return ", ".join(
        f"{name} {rss_mb(cluster.process(name).pid):.0f} MB"
        for name in cluster.ports
        if cluster.process(name).poll() is None
    )


def warm_up(cluster: Cluster) -> None:
    """A first visit to each replica at once (its first session imports torch, plotly, pandas)."""
    tabs = []
    for port in cluster.ports.values():
        tab = cluster.browser.new_page()
        tab.set_default_timeout(120_000)
        tab.goto(f"http://127.0.0.1:{port}/")
        tabs.append(tab)
    for tab in tabs:
        wait_for_app(tab)
        tab.close()


@pytest.fixture
def visitor(cluster, request) -> Iterator[Callable[..., object]]:
    """Opens a visitor (a browser context of its own) at `url`, pinned to `replica` if given.
    On failure each visitor's page is saved in tests/artifacts/."""
    tabs = []

    def open_visitor(url: str, replica: str | None = None):
        context = cluster.browser.new_context(viewport={"width": 1400, "height": 900})
        if replica is not None:
            context.add_cookies([{"name": COOKIE, "value": replica, "url": url}])
        tab = context.new_page()
        tab.set_default_timeout(90_000)
        tabs.append(tab)
        return tab

    yield open_visitor
    report = getattr(request.node, "report_call", None)
    for i, tab in enumerate(tabs):
        if report is not None and report.failed:
            shoot(tab, f"FAILED-{request.node.name}-{i}.png")
        tab.context.close()


def replica_of(tab) -> str:
    """The replica nginx pinned this visitor to (its cookie)."""
    return next(c["value"] for c in tab.context.cookies() if c["name"] == COOKIE)


def open_playground(tab, url: str, query: str = "") -> None:
    tab.goto(f"{url}/playground{query}")
    wait_for_app(tab, heading="2D playground")


def step_metric(tab):
    return plane_metric(tab, "Step")


def press(tab, name: str, times: int = 1) -> None:
    for _ in range(times):
        button(tab, name).click()
        wait_for_app(tab)


def points(n: int) -> bytes:
    """A CSV of `n` points in two classes."""
    return b"x1,x2,label\n" + b"".join(f"{i % 7},{i % 5},{i % 2}\n".encode() for i in range(n))


def choose_file(tab, name: str, csv: bytes) -> None:
    """Give the playground's "Your points" uploader a CSV."""
    box = tab.get_by_test_id("stSidebar").get_by_test_id("stFileUploader")
    box.locator("input[type=file]").set_input_files({"name": name, "mimeType": "text/csv", "buffer": csv})


def upload_points(tab, name: str, csv: bytes) -> None:
    """Upload a CSV of points, until the page trains on it."""
    choose_file(tab, name, csv)
    tab.get_by_text(f"Training on {name}:").wait_for(timeout=240_000)  # a suite's busy machine
    wait_for_app(tab)


def download(tab, label: str) -> bytes:
    with tab.expect_download() as event:
        tab.get_by_role("button", name=label).click()
    return Path(event.value.path()).read_bytes()


def answering(url: str, replica: str) -> str | None:
    """Which replica answers a request that carries `replica` in its cookie."""
    request = urllib.request.Request(f"{url}/_stcore/health", headers={"Cookie": f"{COOKIE}={replica}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        found = re.search(rf"{COOKIE}=(r\d)", " ".join(response.headers.get_all("Set-Cookie") or []))
    return found[1] if found else None


def answered_by(response) -> str | None:
    """Which replica answered an HTTP response, from the cookie nginx set on it."""
    found = re.search(rf"{COOKIE}=(r\d)", response.header_value("set-cookie") or "")
    return found[1] if found else None


# --- with affinity: everything works ----------------------------------------------------------


@pytest.mark.browser
def test_through_nginx_a_visitor_trains_uploads_and_downloads(cluster, visitor):
    tab = visitor(cluster.url)
    responses = []
    tab.on("response", lambda response: responses.append(response))
    frames = frame_statuses(tab)
    open_playground(tab, cluster.url, "?seed=4")
    press(tab, "Step", 3)
    expect(step_metric(tab)).to_have_text("3")
    tab.get_by_role("button", name="Play").click()  # frames through nginx's upgrade, from this replica
    # Past the 3 steps taken by hand: frames came (each carries the steps due since the last one)
    expect(step_metric(tab)).to_have_text(re.compile(r"^(?:[4-9]|[1-9][\d,]+)$"))
    tab.get_by_role("button", name="Pause").click()
    tab.get_by_role("button", name="Play").wait_for()
    assert frames and set(frames) == {200}

    tab.get_by_text("Export", exact=True).click()
    csv = download(tab, "Data (.csv)")
    assert csv.startswith(b"x1,x2,label\n") and csv.count(b"\n") > 100
    model, _ = model_from_bytes(download(tab, "Weights (.safetensors)"))
    assert model.config.d_in == 2

    upload_points(tab, "my-points.csv", csv)
    press(tab, "Step")
    expect(step_metric(tab)).to_have_text("1")  # a new run, on the uploaded points

    tab.get_by_test_id("stSidebarNav").get_by_text("MNIST").click()  # the same session, another page
    wait_for_app(tab, heading="MNIST")
    tab.get_by_role("tab", name="Keep it").click()
    wait_for_app(tab)
    uploader = tab.get_by_test_id("stFileUploader").locator("input[type=file]")
    mnist_model = model_to_bytes(MLP(784, [16], 10, seed=0))
    uploader.set_input_files(
        {"name": "mine.safetensors", "mimeType": "application/octet-stream", "buffer": mnist_model}
    )
    tab.get_by_text("Loaded from").wait_for()
    wait_for_app(tab)

    served = [r for r in responses if r.url.startswith(cluster.url)]  # not blob: URLs
    assert {answered_by(r) for r in served} == {replica_of(tab)}  # one replica answered them all
    uploads = [r for r in served if "/_stcore/upload_file/" in r.url]  # (downloads are no responses)
    assert uploads and all(r.ok for r in uploads), [(r.status, r.url) for r in uploads]
    assert tab.locator('[data-testid="stException"]').count() == 0


# --- without affinity: uploads and downloads fail ------------------------------------------------


Outcome = tuple[str | None, int, str]  # a request's replica, status and answer


def until_refused(tab, url: str, act: Callable[[int], Outcome]) -> list[Outcome]:
    """`act(attempt)` until the request it makes is refused, 8 times at most. Between attempts
    a request of its own moves the round robin on, so that they can't all reach one replica."""
    outcomes = []
    for attempt in range(8):
        outcomes.append(act(attempt))
        if outcomes[-1][1] >= 400:
            break
        tab.context.request.get(f"{url}/_stcore/health")
    return outcomes


def check_refused(outcomes: list[Outcome], status: int, says: str) -> None:
    """The last request was refused with `status`, saying `says`, by a replica other than the
    one (the session's) that took the requests before it."""
    *taken, (refused_by, last_status, answer) = outcomes
    assert last_status == status and says in answer, outcomes
    took = {replica for replica, _, _ in taken}
    assert len(took) <= 1 and refused_by not in took, outcomes


def upload(tab, name: str) -> Outcome:
    """Choose a CSV for the playground's uploader: the answer to its upload."""
    with tab.expect_response(lambda r: "/upload_file/" in r.url and r.request.method == "PUT") as put:
        choose_file(tab, name, points(40))
    return answered_by(put.value), put.value.status, put.value.text()


def click_download(tab, label: str, cluster: Cluster) -> Outcome:
    """Click a download button: who answered the file's request and how, from the round-robin
    nginx's access log (a download's answer never reaches the page), and how the download ended."""
    log = LOGS / "nginx-round-robin" / "access.log"

    def answers() -> list[tuple[str, str]]:
        return re.findall(r'"GET /media/\S+ HTTP/1.1" (\d+) replica=127.0.0.1:(\d+)', log.read_text())

    before = len(answers())
    with tab.expect_download() as event:
        tab.get_by_role("button", name=label).click()
    failure = event.value.failure()  # once the download has ended
    deadline = time.monotonic() + 30
    while len(answers()) == before:  # nginx logs a request as it ends
        assert time.monotonic() < deadline, f"no download request in {log}"
        time.sleep(0.05)
    status, port = answers()[-1]
    replica = next(name for name, p in cluster.ports.items() if p == int(port))
    return replica, int(status), failure or "downloaded"


@pytest.mark.browser
def test_without_affinity_uploads_and_downloads_reaching_another_replica_fail(cluster, visitor):
    url = cluster.round_robin
    tab = visitor(url)
    open_playground(tab, url)
    uploads = until_refused(tab, url, lambda i: upload(tab, f"p{i}.csv"))
    check_refused(uploads, 400, "Invalid session_id")  # Streamlit: "... without sticky sessions"
    tab.get_by_text("Export", exact=True).click()
    downloads = until_refused(tab, url, lambda _: click_download(tab, "History (.csv)", cluster))
    check_refused(downloads, 404, "")  # Streamlit: MediaFileStorageError, the file isn't there
    assert downloads[-1][2] != "downloaded"  # the browser got no file
    print(f"without affinity: {len(uploads)} uploads, {len(downloads)} downloads until one failed")


# --- a replica dies: its visitors, and only them, start again -------------------------------------


@pytest.mark.browser
def test_a_killed_replica_moves_its_visitors_to_a_fresh_session_and_no_one_else(cluster, visitor):
    moved, stays = visitor(cluster.url, replica="r1"), visitor(cluster.url, replica="r2")
    open_playground(moved, cluster.url, "?seed=4")
    open_playground(stays, cluster.url, "?seed=5")
    press(moved, "Step", 3)
    press(stays, "Step", 2)
    expect(step_metric(moved)).to_have_text("3")
    expect(step_metric(stays)).to_have_text("2")
    assert (replica_of(moved), replica_of(stays)) == ("r1", "r2")

    cluster.kill("r1")
    killed = time.monotonic()
    while replica_of(moved) == "r1":  # its page reconnects at once, through nginx, to a backup
        assert time.monotonic() < killed + 60, "the page did not reconnect"
        moved.wait_for_timeout(100)
    print(f"reconnected through nginx {time.monotonic() - killed:.1f} s after the kill")
    press(moved, "Step")  # its next click runs the page in the fresh session
    moved.get_by_test_id("stToast").get_by_text(MESSAGE).wait_for()
    shoot(moved, "scale-out-reconnected.png")
    expect(step_metric(moved)).to_have_text("0")  # the training is gone...
    assert seed(moved) == "4"  # ...the settings came back from the address bar
    press(moved, "Step")
    expect(step_metric(moved)).to_have_text("1")
    upload_points(moved, "after.csv", points(20))  # uploads reach its new replica

    press(stays, "Step")  # the other replica's visitor never noticed
    expect(step_metric(stays)).to_have_text("3")
    assert replica_of(stays) == "r2" and stays.get_by_test_id("stToast").count() == 0

    cluster.start("r1")  # back, and once nginx sends r1's visitors to it again...
    wait_routed(cluster, "r1")
    upload_points(moved, "later.csv", points(30))  # ...the moved visitor stays with its session
    assert replica_of(moved) != "r1"

    link = copied_link(moved)
    assert link == moved.url  # what a teacher copies, from the sidebar or the address bar
    student = visitor(cluster.url, replica="r3")  # a warm replica; which one doesn't matter here
    student.goto(link)
    wait_for_app(student, heading="2D playground")
    assert seed(student) == "4" and student.get_by_test_id("stToast").count() == 0  # nothing lost
    moved.reload()
    wait_for_app(moved, heading="2D playground")
    assert moved.get_by_test_id("stToast").count() == 0  # a reload: a new session, as asked


@pytest.mark.browser
def test_a_replica_killed_under_a_playing_page_always_says_so(cluster, visitor):
    """Three times a replica dies under a visitor who is playing (the plane fetching its frames,
    the panels redrawing on their timers), and each time the page lands on a replica that has
    served no page since it started: Streamlit is still in its pages-directory mode there
    (pages.ui.shell.require_shell). Each time the page says so, and never just starts again; a
    new tab, a reload and a shared link (the first page a fresh replica serves) never do."""
    began = time.monotonic()
    cluster.kill("r3")  # down meanwhile: a failover has one place to go, the fresh replica
    cluster.kill("r2")
    cluster.start("r2")
    host, fresh = "r1", "r2"  # the playing visitor's replica; the one that has served no page
    moved = None
    try:
        for kill in range(1, KILLS + 1):
            tab = visitor(cluster.url, replica=host)
            open_playground(tab, cluster.url, f"?seed={kill}")
            assert replica_of(tab) == host and tab.get_by_test_id("stToast").count() == 0  # a new tab
            if moved is not None:
                moved.goto("about:blank")  # the last visitor leaves before their replica dies again
            tab.get_by_role("button", name="Play").click()
            expect(step_metric(tab)).to_have_text(re.compile(r"^[1-9][\d,]+$"))  # its frames come
            cluster.wait_up(fresh)  # (started again after the last kill)
            wait_routed(cluster, fresh)
            cluster.kill(host)
            expect(tab.get_by_test_id("stToast").get_by_text(MESSAGE)).to_be_visible()
            expect(step_metric(tab)).to_have_text("0")  # the training is gone, and the page said so
            tab.get_by_role("button", name="Play").wait_for()
            wait_for_app(tab)  # the page's later runs keep the message
            assert tab.get_by_test_id("stToast").get_by_text(MESSAGE).is_visible(), f"kill {kill}"
            assert replica_of(tab) == fresh and seed(tab) == str(kill)
            print(f"kill {kill}: {host} -> {fresh}, said so ({time.monotonic() - began:.0f} s in)")
            cluster.start(host, wait=False)  # back, and fresh: the next kill's visitor lands on it
            host, fresh, moved = fresh, host, tab

        cluster.wait_up(fresh)
        wait_routed(cluster, fresh)
        student = visitor(cluster.url, replica=fresh)  # the first page this replica serves
        student.goto(copied_link(moved))
        wait_for_app(student, heading="2D playground")
        assert replica_of(student) == fresh and seed(student) == str(KILLS)
        assert student.get_by_test_id("stToast").count() == 0
        moved.reload()
        wait_for_app(moved, heading="2D playground")
        assert moved.get_by_test_id("stToast").count() == 0
    finally:
        for name in cluster.ports:  # the other tests' cluster: all three up
            if cluster.process(name).poll() is not None:
                cluster.start(name, wait=False)
        assert (failure := cluster.replicas.wait_up()) is None, failure
    print(f"{KILLS} kills under a playing page, each said: {time.monotonic() - began:.0f} s")


def wait_routed(cluster: Cluster, name: str) -> None:
    """Until nginx sends `name`'s visitors to it (it waits 10 s to try a failed replica again)."""
    deadline = time.monotonic() + 60
    while answering(cluster.url, name) != name:
        assert time.monotonic() < deadline, f"nginx did not route to {name} again"
        time.sleep(0.2)


def seed(tab) -> str:
    """The seed in the playground's sidebar."""
    box = tab.get_by_test_id("stSidebar").get_by_label(SEED_LABEL)
    box.wait_for()
    return box.input_value()


def copied_link(tab) -> str:
    """The link the page offers to copy (the sidebar's "Link to this setup")."""
    sidebar = tab.get_by_test_id("stSidebar")
    sidebar.get_by_text("Link to this setup").click()
    return sidebar.get_by_test_id("stCode").last.inner_text().strip()
