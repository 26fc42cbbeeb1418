"""Training in the background: jobs, the views they publish, and one bounded executor per process.

A page never trains in its own script run and never touches the tensors a worker is writing:
it submits a job, and reads the latest view the worker published (plain numbers, arrays, a
copy of the weights). A job beyond the executor's slots waits in a queue and knows its place;
a job whose owner is gone is cancelled and freed: its owner (a visitor's session) was
garbage-collected, or has not looked at the job for `keepalive` seconds (a closed tab).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections import deque
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Protocol

from mlp.device import quiet_for, torch_threads
from mlp.errors import unexpected

_log = logging.getLogger(__name__)
ACTIVE = ("queued", "running")
CHUNK_SECONDS = 0.1  # training between two published views (Stop interrupts the step loop itself)
# A job starts alone when no other job trains or waits and no visitor's frame trained for this
# long: a job on every core holds NumPy's BLAS count, so frames would wait for its chunks.
QUIET_SECONDS = 2.0


class Work(Protocol):
    """What a job trains: a run that advances a little at a time and describes itself."""

    @property
    def finished(self) -> bool: ...

    @property
    def status(self) -> str:
        """How training ended: "done", "stopped" or "diverged"."""

    def advance(self, seconds: float) -> None: ...

    def stop(self, reason: str) -> None: ...

    def interrupt(self) -> None:
        """From another thread: return from advance() after the current step."""

    def finish(self) -> None:
        """After training, in the worker: whatever needs the final weights (an evaluation)."""

    def view(self) -> Any:
        """An immutable description for readers; built in the worker."""

    # Optional: `wide` (True: the work may train on every core when it starts alone) and
    # `use_threads(n)` (called before its first step with the count it trains on, to the end).


def machine_cores() -> int:
    """The cores this process may use."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, cores or 1)


def default_slots() -> int:
    """Concurrent jobs: $MLP_PLAYGROUND_TRAINING_JOBS, else one per core this process may use."""
    if os.environ.get("MLP_PLAYGROUND_TRAINING_JOBS", "").isdigit():
        return max(1, int(os.environ["MLP_PLAYGROUND_TRAINING_JOBS"]))
    return machine_cores()


class Job:
    """One run handed to an executor. Read `state`, `view`, `position`; call `stop()` or `cancel()`."""

    def __init__(
        self,
        work: Work,
        name: str,
        executor: Executor,
        owner: object | None = None,
        keepalive: float | None = None,
    ) -> None:
        self.work = work
        self.name = name
        self.state = "queued"  # queued, running, done, stopped, diverged, cancelled or failed
        self.message = ""
        self.view = work.view()  # replaced (never mutated) by the worker as training goes
        self.submitted = time.monotonic()
        self.started: float | None = None  # time.monotonic() when a worker took it
        self.threads = 0  # the CPU threads it trains on, from its start
        self.ended: float | None = None
        self._executor = executor
        self._stop: str | None = None  # the reason, once asked
        self._cancelled = False
        self._finished = threading.Event()
        # The owner's death cancels the job; the job holds no reference that would keep it alive.
        self._owner = None if owner is None else weakref.ref(owner, lambda _: self.cancel("Its page closed."))
        # A session outlives its closed tab until the server reaps it, which may be never on a
        # quiet server: an owner that stops looking for `keepalive` seconds has gone too.
        self.keepalive = keepalive
        self._seen = time.monotonic()

    def seen(self) -> None:
        """The owner looked at the job (a page drew it): it is still wanted."""
        self._seen = time.monotonic()

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def position(self) -> int:
        """How many jobs wait ahead of this one (0 once it runs)."""
        return self._executor.position(self)

    def stop(self, reason: str = "Stopped: the model keeps what it learned so far.") -> None:
        """Stop training after the current step; the work keeps its model and is finished as usual."""
        self._stop = reason
        self.work.interrupt()
        if self._executor.withdraw(self):  # it never started: nothing to keep
            self._end("stopped", reason)

    def cancel(self, reason: str = "Cancelled.") -> None:
        """Stop and drop the job: nothing of it is needed any more."""
        self._cancelled = True
        self.stop(reason)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job has ended (for scripts and tests); True if it did."""
        return self._finished.wait(timeout)

    def _end(self, state: str, message: str) -> None:
        self.state, self.message, self.ended = state, message, time.monotonic()
        self._finished.set()

    def timing(self) -> str:
        """'waited 0.01 s, trained 2.31 s': for the developers' debug captions."""
        now = time.monotonic()
        waited = (self.started or now) - self.submitted
        trained = ((self.ended or now) - self.started) if self.started else 0.0
        return f"waited {waited:.2f} s, trained {trained:.2f} s"

    def _orphaned(self) -> bool:
        if self.keepalive is not None and time.monotonic() - self._seen > self.keepalive:
            return True
        return self._owner is not None and self._owner() is None

    def run(self, threads: int) -> None:
        """Train to the end on `threads` CPU threads, a chunk at a time, publishing views; called
        by a worker thread. Each chunk holds the process's thread count (mlp.device.torch_threads):
        on a server, blocks at other counts (visitors' frames, other jobs) take turns between
        chunks, and every step of the run is on its count. A work that `holds_own_threads` holds
        them itself, around its steps only (a paced run's waits, a re-run's entries between)."""
        self.state, self.started, self.threads = "running", time.monotonic(), threads
        own = getattr(self.work, "holds_own_threads", False)  # it holds them around its steps itself

        def held() -> AbstractContextManager[None]:
            return nullcontext() if own else torch_threads(threads)

        try:
            if use_threads := getattr(self.work, "use_threads", None):
                use_threads(threads)
            abandoned = False
            while not self.work.finished and self._stop is None and not (abandoned := self._orphaned()):
                with held():
                    self.work.advance(CHUNK_SECONDS)
                self.view = self.work.view()
            if self._cancelled or abandoned:
                self._end("cancelled", self._stop or "Its page closed.")
                return
            with held():
                if self._stop is not None:
                    self.work.stop(self._stop)
                self.work.finish()
            self.view = self.work.view()
            status = self.work.status if self.work.status in ("stopped", "diverged") else "done"
            self._end(status, self._stop or "")
        except Exception as err:  # a worker must outlive any one job
            _log.exception("training job %s failed", self.name)  # the page says only what it means
            self._end("failed", f"Training failed. {unexpected(err)}")


class Executor:
    """At most `slots` jobs train at once, each on its own worker thread; the rest wait in order.

    A job's CPU threads are decided when it starts and kept to its end (the count changes a
    run's last bits, and its re-run must match it): every core of the machine when it starts
    alone (no other job, no visitor's frame for QUIET_SECONDS) and its work is `wide` (a
    visitor's MNIST run, not a challenge's, whose re-run at a class's Close trains on a share);
    else its share, `threads_per_job`: the cores ÷ the slots (all of them with one slot, a
    server set to one job at a time; one each with a slot a core). Its chunks hold that count
    (mlp.device.ThreadCounts): a frame that comes while a job trains on every core waits for
    the chunk (up to CHUNK_SECONDS), and the job for the frame.
    """

    def __init__(self, slots: int | None = None, threads_per_job: int | None = None) -> None:
        self.slots = slots or default_slots()
        self.cores = machine_cores()
        self.threads_per_job = threads_per_job or max(1, self.cores // self.slots)
        self._queue: deque[Job] = deque()
        self._running: set[Job] = set()
        # Reentrant: a job's owner can be collected (and cancel its job) while this thread holds it.
        self._lock = threading.Condition(threading.RLock())
        self._workers = [
            threading.Thread(target=self._serve, name=f"mlp-training-{i}", daemon=True)
            for i in range(self.slots)
        ]
        for worker in self._workers:
            worker.start()

    def submit(
        self, work: Work, name: str = "run", owner: object | None = None, keepalive: float | None = None
    ) -> Job:
        """Queue `work`; it starts as soon as a slot is free. `owner` dying cancels it, and so
        does `keepalive` seconds without a `job.seen()`."""
        job = Job(work, name, self, owner, keepalive)
        with self._lock:
            self._queue.append(job)
            self._lock.notify()
        return job

    def position(self, job: Job) -> int:
        with self._lock:
            return self._queue.index(job) if job in self._queue else 0

    def withdraw(self, job: Job) -> bool:
        """Take a job out of the queue if it hasn't started; True if it was waiting."""
        with self._lock:
            if job in self._queue:
                self._queue.remove(job)
                return True
            return False

    @property
    def load(self) -> tuple[int, int]:
        """(jobs training, jobs waiting) right now."""
        with self._lock:
            return len(self._running), len(self._queue)

    def threads_for(self, work: Work, alone: bool) -> int:
        """A job's threads as it starts: the machine's cores if it starts `alone` and its work
        may have them (`wide`), else its share."""
        if alone and getattr(work, "wide", False):
            return max(self.cores, self.threads_per_job)
        return self.threads_per_job

    def _serve(self) -> None:
        while True:
            with self._lock:
                while not self._queue:
                    self._lock.wait()
                job = self._queue.popleft()
                others = bool(self._running or self._queue)
                self._running.add(job)
            # Asked outside this lock: the counts' own lock can run a collected owner's cancel,
            # which takes this one.
            alone = not others and quiet_for(QUIET_SECONDS)
            try:
                job.run(self.threads_for(job.work, alone))
            finally:
                with self._lock:
                    self._running.discard(job)
                del job  # a finished job is only its owner's to keep


_shared: Executor | None = None
_shared_lock = threading.Lock()


def shared_executor() -> Executor:
    """The process's one executor, made on first use: every visitor's jobs queue here."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Executor()
        return _shared
