"""Device selection: CUDA, then Apple MPS, then the CPU, with a name a page can show."""

from __future__ import annotations

import math
import platform
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch

DEVICES = ("auto", "cuda", "mps", "cpu")
DEFAULT_THREADS = torch.get_num_threads()  # what PyTorch picked for this machine, before anyone changed it


@dataclass(frozen=True)
class DeviceInfo:
    """The device training runs on and how to describe it."""

    device: torch.device
    name: str  # "NVIDIA H100 80GB HBM3", "Apple GPU (MPS)", "Intel(R) Xeon(R) ..."
    memory_gb: float | None  # total GPU memory on CUDA, else None
    threads: int  # CPU threads torch uses for intra-op parallelism

    @property
    def kind(self) -> str:
        return self.device.type

    def describe(self) -> str:
        """One line for a page: 'cuda: NVIDIA A100 (40.0 GB)' or 'cpu: ... (2 threads)'."""
        memory = f", {self.memory_gb:.1f} GB" if self.memory_gb else ""
        return f"{self.kind}: {self.name}{memory} · {self.threads} CPU thread{'s' * (self.threads != 1)}"


def _mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend and backend.is_available())


def available_devices() -> list[str]:
    """The device kinds this machine can train on, best first."""
    kinds = []
    if torch.cuda.is_available():
        kinds.append("cuda")
    if _mps_available():
        kinds.append("mps")
    return [*kinds, "cpu"]


def device_choices() -> list[str]:
    """What a page offers: 'auto', then each device kind this machine has."""
    return ["auto", *available_devices()]


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def pick_device(request: str = "auto") -> DeviceInfo:
    """Resolve 'auto' | 'cuda' | 'cuda:1' | 'mps' | 'cpu'; an unavailable device is a ValueError."""
    kind = request.split(":")[0]
    if kind not in DEVICES:
        raise ValueError(f"Unknown device {request!r}; choose one of {', '.join(DEVICES)}.")
    if kind == "auto":
        kind = available_devices()[0]
        request = kind
    if kind not in available_devices():
        raise ValueError(f"{kind.upper()} was asked for but is not available here; use 'auto' or 'cpu'.")
    device = torch.device(request)
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        device = torch.device("cuda", index)
        props = torch.cuda.get_device_properties(index)
        return DeviceInfo(device, props.name, props.total_memory / 1e9, torch.get_num_threads())
    if device.type == "mps":
        return DeviceInfo(device, "Apple GPU (MPS)", None, torch.get_num_threads())
    return DeviceInfo(device, cpu_name(), None, torch.get_num_threads())


def synchronize(device: torch.device) -> None:
    """Wait for queued kernels, so a timer measures work done rather than work launched."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


_BLAS_LIMIT: object = None  # threadpoolctl's limit, kept for the life of the process


def one_blas_thread() -> None:
    """NumPy's BLAS on one thread, for the rest of the process: for a server.

    OpenBLAS starts a thread per core and keeps them spinning between calls: measured here, a
    playground frame of the manual engine on the largest network cost 47 ms of its own thread
    and as much again of a second core, and a default frame 8 ms and 5 more. On a server each
    visitor's frame runs on one thread (CPU time the frame budget counts) and replicas run one
    per core; the second thread only took a core from the other visitors and the browsers.
    """
    global _BLAS_LIMIT
    from threadpoolctl import threadpool_limits

    _BLAS_LIMIT = threadpool_limits(limits=1, user_api="blas")


class ThreadCounts:
    """NumPy's BLAS threads, held in turns: a server's (`counts_in_turns`).

    OpenBLAS's count is the whole process's (one setting for every thread; torch's, by contrast,
    is each thread's own: `torch_threads`), and it changes a product's last bits, not only its
    speed. On a server a lone MNIST job trains on every core while visitors' frames train on
    one (pages/serving/jobs.py); were each to set the count it wants, a frame would change the
    job's count mid-step and the job a frame's, and neither run would be the one its link
    re-trains. So a block holds the count it runs on: blocks asking the count held now run
    together; a block asking another waits until they are done; and a block arriving after it
    waits behind it, whatever it asks (first come, first served: a job on every core gets its
    turn among a class's frames, and the frames theirs between its chunks). When no block holds
    it, the count is `base`.
    """

    def __init__(self, base: int = 1) -> None:
        self.base = base
        self.count = 0  # unknown until first set
        self.holders = 0
        self._line: deque[object] = deque()  # who waits, in order of arrival
        self._turn = threading.Condition()
        self._blas = None  # threadpoolctl's controllers of NumPy's BLAS: set without a scan each time
        self._base_seen = -math.inf  # when a block at `base` last ended (a visitor's frame, say)

    @contextmanager
    def hold(self, n: int) -> Iterator[None]:
        """Run the block with NumPy's BLAS on n threads, in turn with blocks at other counts."""
        ticket = object()
        with self._turn:
            self._line.append(ticket)
            try:
                while self._line[0] is not ticket or (self.holders and self.count != n):
                    self._turn.wait()
                if not self.holders:
                    self._set(n)
            finally:  # in its turn or not (an exception while waiting), out of the line
                self._line.remove(ticket)
                self._turn.notify_all()  # the next in line may run beside this block, or go first
            self.holders += 1
        try:
            yield
        finally:
            with self._turn:
                self.holders -= 1
                if n == self.base:
                    self._base_seen = time.monotonic()
                try:
                    if not self.holders:
                        self._set(self.base)
                finally:
                    self._turn.notify_all()

    def quiet(self, seconds: float) -> bool:
        """Whether no block at `base` runs now or ran in the last `seconds`: no visitor's frame
        trained lately (nor a job on a one-thread share, whose steps are held at `base` too)."""
        with self._turn:
            busy = self.holders and self.count == self.base
            return not busy and time.monotonic() - self._base_seen >= seconds

    def _set(self, n: int) -> None:
        if n == self.count:
            return
        if self._blas is None:
            from threadpoolctl import ThreadpoolController

            self._blas = ThreadpoolController().select(user_api="blas")
        for library in self._blas.lib_controllers:
            # threadpoolctl (3.8) lets only the first thread that set OpenBLAS's count set it again
            # (others "silently do nothing"): the server's startup thread, by `one_blas_thread`.
            # These turns are what keeps threads from fighting over it, so whoever's turn it is
            # takes the control first.
            if release := getattr(type(library), "clear_controlling_thread", None):
                release(force=True)
            library.set_num_threads(n)
        self.count = n


_COUNTS: ThreadCounts | None = None  # set by counts_in_turns(): a server
_held = threading.local()  # depth 1 while this thread is in a held block


def counts_in_turns() -> ThreadCounts:
    """From now on, a `torch_threads` block also holds NumPy's BLAS at its count, in turns with
    blocks at other counts (ThreadCounts); held by none, it is 1 (a server's: `one_blas_thread`)."""
    global _COUNTS
    if _COUNTS is None:
        _COUNTS = ThreadCounts()
    return _COUNTS


def quiet_for(seconds: float) -> bool:
    """Whether no block at one thread (a visitor's frame, a job on a one-thread share) ran in the
    last `seconds`; always, in a process that doesn't hold its counts in turns (a script, a notebook)."""
    return _COUNTS is None or _COUNTS.quiet(seconds)


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the block with n intra-op CPU threads, then put the previous number back.

    Small matmuls lose with more threads, and lose badly when the cores are shared (a browser
    on the same laptop, other visitors of a server): every op waits at a barrier for a thread
    that isn't running. With OpenMP (this wheel's), the setting is the calling thread's, and the
    one threads made later start with: measured here, a thread's `set_num_threads(1)` left
    another's matmuls on 2. The count can change a run's last bits, not only its speed: a
    reduction split over threads adds in another order (measured here: a 784-512-10 net after
    50 SGD steps at 1 and at 2 threads differed by up to 4.5e-8 in a weight). A run re-run to
    compare bit for bit needs the count it ran with. On a server (`counts_in_turns`) the block
    also holds NumPy's BLAS at n, in turn with blocks at other counts (ThreadCounts); a block
    inside a held one only sets torch's (the NumPy path's steps put torch on one).
    """
    if _COUNTS is not None and not getattr(_held, "depth", 0):
        with _COUNTS.hold(n):
            _held.depth = 1
            try:
                with torch_threads(n):
                    yield
            finally:
                _held.depth = 0
        return
    before = torch.get_num_threads()
    if n != before:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        # Unconditional: the block itself may have changed the count (the trainer's tuner does).
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


_flushing = threading.local()  # how deep this thread is in flush_denormals blocks


@contextmanager
def flush_denormals() -> Iterator[None]:
    """Run the block with denormal floats (below ~1.2e-38 in float32) read and written as 0, in
    this thread, then as before.

    A long run's tails fall there: Adam's first moments of weights the data no longer moves,
    the softmax of points the network is sure of. x86 computes denormals ~100 times slower than
    normal floats: measured here, a default playground run's steps cost up to 40% more by epoch
    6,000 than at 500, and nothing more with them flushed. The flag is the thread's floating-point
    state, so torch and NumPy in the block both see it; nothing training shows changes (the
    largest value it drops is 1e-38 of a number).
    """
    depth = getattr(_flushing, "depth", 0)
    if depth == 0 and not torch.set_flush_denormal(True):  # a CPU without the flags: nothing to do
        yield
        return
    _flushing.depth = depth + 1
    try:
        yield
    finally:
        _flushing.depth = depth
        if depth == 0:
            torch.set_flush_denormal(False)
