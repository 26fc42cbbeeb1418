"""The launcher's replicas: each start proves that it is what answers its port before nginx routes
to it, and a replica that exits is started again, later each time, then given up.

A replica's port can answer without the replica: another server that held the port first (the
replica then exits, "Port 8501 is not available"), or one that took it while the replica was
down. Streamlit's health check can't tell them apart, so each start gets a token of its own
(deploy/identity.py) and counts as up only once what answers its port proves it has that token.
"""

from __future__ import annotations

import hmac
import http.client
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from deploy.identity import PATH, TOKEN_VAR, proof
from deploy.ports import in_use

ROOT = Path(__file__).resolve().parents[1]


def replica_command(port: int) -> list[str]:
    """`streamlit run app.py` for one replica, on 127.0.0.1:`port`: no browser, no file watcher."""
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    command += ["--server.address", "127.0.0.1", "--server.port", str(port)]
    return [*command, "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"]


# Straight to the address asked, whatever proxy the environment names (http_proxy and the like).
_direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def healthy(url: str) -> bool:
    """Whether Streamlit at `url` answers its health check."""
    try:
        with _direct.open(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


class Answer(Enum):
    """Who answers HTTP on a replica's port."""

    OWN = "own"  # the replica started with the token: it proved it
    OTHER = "other"  # something else: an answer without the proof
    NONE = "none"  # nothing (yet)


def who_answers(port: int, token: str) -> Answer:
    """Whether the server on 127.0.0.1:`port` is the replica started with `token`, asked with a
    challenge of this call's own (deploy/identity.py)."""
    challenge = secrets.token_hex(16)
    try:
        with _direct.open(f"http://127.0.0.1:{port}{PATH}?challenge={challenge}", timeout=2) as response:
            said = response.read(200).decode("ascii", "replace").strip()
    except urllib.error.HTTPError as error:  # a server error may pass (a replica still starting)
        return Answer.NONE if error.code >= 500 else Answer.OTHER
    except http.client.HTTPException:  # an answer, not in HTTP
        return Answer.OTHER
    except OSError:  # refused, or no answer in time
        return Answer.NONE
    return Answer.OWN if hmac.compare_digest(said, proof(token, challenge)) else Answer.OTHER


@dataclass(frozen=True)
class Restarts:
    """When a replica that exited starts again, and when the launcher stops trying."""

    first_wait: float = 1.0  # seconds before the first new start; doubled after each failed one
    longest_wait: float = 30.0  # the wait between starts grows to this at most
    failures: int = 5  # failed starts in a row, then the replica is given up
    start_timeout: float = 120.0  # seconds a start has to prove itself (a replica imports torch)
    steady: float = 60.0  # a replica that exits sooner after its start has failed a start too


class State(Enum):
    STARTING = "starting"  # its process runs, it hasn't proved itself yet
    UP = "up"  # proved itself and answers its health check: nginx routes to it
    WAITING = "waiting"  # to be started again
    GIVEN_UP = "given up"


@dataclass
class Replica:
    """One replica's port and log, and its current start: the process and the token it alone has."""

    port: int
    log: Path
    process: subprocess.Popen | None = None
    token: str = ""
    state: State = State.WAITING
    started: float = 0.0  # when the current process started (time.monotonic)
    resume: float = 0.0  # when WAITING: when it starts again
    failures: int = 0  # failed starts in a row


class Replicas:
    """The replicas on `ports`, logs in `folder`: started, proved, watched and started again.

    `watch` is one look at every replica; the launcher calls it every half second and routes
    nginx to `up()`. `say` hears what happens, in sentences.
    """

    def __init__(
        self,
        ports: Sequence[int],
        env: Mapping[str, str],
        folder: Path,
        restarts: Restarts = Restarts(),
        command: Callable[[int], list[str]] = replica_command,
        say: Callable[[str], None] = lambda text: print(text, flush=True),
    ) -> None:
        self.replicas = {port: Replica(port, folder / f"replica-{port}.log") for port in ports}
        self.env, self.restarts, self.command, self.say = dict(env), restarts, command, say

    def start(self, port: int) -> subprocess.Popen:
        """Start the replica on `port` with a fresh token; its output goes to its log."""
        replica = self.replicas[port]
        replica.token = secrets.token_hex(32)
        env = self.env | {TOKEN_VAR: replica.token}
        with open(replica.log, "a") as out:
            replica.process = subprocess.Popen(self.command(port), cwd=ROOT, env=env, stdout=out, stderr=out)
        replica.state, replica.started = State.STARTING, time.monotonic()
        return replica.process

    def wait_up(self, ports: Sequence[int] | None = None) -> str | None:
        """Until each replica on `ports` (all of them) has proved itself; None then, or a sentence
        on the first that can't (nothing is started again)."""
        waiting = [self.replicas[port] for port in (self.replicas if ports is None else ports)]
        while waiting:
            for replica in list(waiting):
                if (failure := self._check_start(replica)) is not None:
                    return f"The replica on port {replica.port} did not start: {failure} (see {replica.log})."
                if replica.state is State.UP:
                    waiting.remove(replica)
            time.sleep(0.2)  # a replica takes seconds to start: a look every 0.2 s is plenty
        return None

    def watch(self) -> None:
        """One look at every replica: a start that proved itself is up, one that exited or failed
        waits to start again (given up after Restarts.failures in a row)."""
        now = time.monotonic()
        for replica in self.replicas.values():
            if replica.state is State.UP and replica.process.poll() is not None:
                if now - replica.started >= self.restarts.steady:
                    replica.failures = 0  # a replica that ran a while starts afresh
                self._failed(replica, f"exited ({replica.process.returncode})")
            elif replica.state is State.STARTING:
                if (failure := self._check_start(replica)) is not None:
                    self._failed(replica, f"did not start: {failure}")
                elif replica.state is State.UP:
                    self.say(f"The replica on port {replica.port} is up again: routed to.")
            elif replica.state is State.WAITING and now >= replica.resume:
                self.start(replica.port)

    def up(self) -> list[int]:
        """The ports of the replicas that proved themselves (nginx routes to these only)."""
        return [port for port, replica in self.replicas.items() if replica.state is State.UP]

    def all_given_up(self) -> bool:
        return all(replica.state is State.GIVEN_UP for replica in self.replicas.values())

    def processes(self) -> list[subprocess.Popen]:
        """Every replica process started last (running or not)."""
        return [r.process for r in self.replicas.values() if r.process is not None]

    def _check_start(self, replica: Replica) -> str | None:
        """A starting replica: marked up once it proves itself and answers its health check; why
        it failed, if it did (its process then ended)."""
        if replica.process.poll() is not None:
            if in_use("127.0.0.1", replica.port):
                return "another program holds its port"
            return f"it exited ({replica.process.returncode})"
        answer = who_answers(replica.port, replica.token)
        if answer is Answer.OTHER:
            replica.process.kill()  # it can't have its port
            replica.process.wait()
            return "another server answers on its port"
        if answer is Answer.OWN and healthy(f"http://127.0.0.1:{replica.port}"):
            replica.state = State.UP  # its failed starts still count, until it has run Restarts.steady
        elif time.monotonic() - replica.started > self.restarts.start_timeout:
            replica.process.kill()
            replica.process.wait()
            return f"it did not answer within {self.restarts.start_timeout:.0f} s"
        return None

    def _failed(self, replica: Replica, what: str) -> None:
        """A replica exited or failed to start: it waits to start again, or is given up."""
        replica.failures += 1
        where = f"The replica on port {replica.port}"
        if replica.failures >= self.restarts.failures:
            replica.state = State.GIVEN_UP
            self.say(
                f"{where} {what}; after {replica.failures} failed starts in a row it is given up: "
                f"not routed to, not started again (see {replica.log})."
            )
            return
        wait = min(self.restarts.first_wait * 2 ** (replica.failures - 1), self.restarts.longest_wait)
        replica.state, replica.resume = State.WAITING, time.monotonic() + wait
        self.say(f"{where} {what}; not routed to, starting it again in {wait:g} s.")
