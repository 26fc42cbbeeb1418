"""Device selection: CUDA, then Apple MPS, then the CPU, with a name a page can show."""

from __future__ import annotations

import platform
import threading
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


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the block with n intra-op CPU threads, then put the previous number back.

    Small matmuls lose with more threads, and lose badly when the cores are shared (a browser
    on the same laptop, other visitors of a server): every op waits at a barrier for a thread
    that isn't running. The setting is process-wide in PyTorch, so other work running while a
    block runs goes at its speed too. The count can change a run's last bits, not only its
    speed: a reduction split over threads adds in another order (measured here: a 784-512-10
    net after 50 SGD steps at 1 and at 2 threads differed by up to 4.5e-8 in a weight). A run
    re-run to compare bit for bit needs the count it ran with.
    """
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
