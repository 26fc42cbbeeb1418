"""Files into a cache folder, bounded and checked: what the MNIST download stands on.

A download is bounded three ways: a timeout for each silence, a deadline for each file, and
each file's known size (plus a margin), checked as the bytes arrive; its MD5 decides whether
it is kept, and it reaches the cache atomically or not at all. One download runs at a time per
cache folder: a lock for the threads of a process (a server's visitors) and a lock file for
other processes; the others wait for it, then use what it cached. Every message names no
local path, so a page can show it to a class; the waiting notices speak of MNIST, the one set
this app downloads.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from http import HTTPStatus
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

try:
    import fcntl  # POSIX: a lock file makes other processes' downloads wait their turn
except ImportError:  # Windows: the threads of one process still take turns
    fcntl = None


class RemoteFile(NamedTuple):
    """One file a mirror serves: its name, its MD5 and its size in bytes."""

    name: str
    md5: str
    size: int


TIMEOUT = 15.0  # seconds a mirror may stay silent: to connect, to answer, between two reads
DEADLINE = 180.0  # seconds one file may take in all (the largest, 9.9 MB, at 55 kB/s)
SIZE_MARGIN = 1.1  # a mirror may send at most 110% of a file's size (its MD5 decides the rest)
LOCK_WAIT = 900.0  # seconds to wait for another download into the same cache before giving up
LOCK_FILE = ".download.lock"  # in the cache folder: held (flock) by the process downloading

Progress = Callable[[str, int, "int | None"], None]  # (file name, bytes so far, total or None)
Notice = Callable[[str], None]  # one line on what a download is doing: trying a mirror, waiting


class DownloadError(OSError):
    """No mirror delivered a file with the expected checksum. The message names no local path."""


class NotCachedError(DownloadError):
    """The file is not in the cache, and downloading was not allowed."""


class CacheError(OSError):
    """The cache folder can't be created, read or written: this machine's fault, not a mirror's."""


def plain(err: BaseException) -> str:
    """An error in words, without the path an OSError carries (`[Errno 13] ...: '/home/...'`)."""
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    return str(err) or type(err).__name__


def md5_of(path: Path) -> str:
    """The MD5 of a file, read a megabyte at a time."""
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextmanager
def _cache_errors(verb: str = "written") -> Iterator[None]:
    """An OSError in here is the cache folder's: say so, in words without its path."""
    try:
        yield
    except OSError as err:
        raise CacheError(f"the cache folder can't be {verb} ({plain(err)})") from err


def _is_cached(path: Path, md5: str) -> bool:
    """Whether `path` holds the file whose MD5 is `md5` (a damaged copy counts as missing)."""
    with _cache_errors("read"):
        return path.is_file() and md5_of(path) == md5


class _Partial:
    """Bytes on their way into the cache: a temp file beside `dest`, moved into place only by
    `keep` (atomically: the cache never holds a partial file) and deleted otherwise."""

    def __init__(self, dest: Path) -> None:
        self.dest = dest
        with _cache_errors():
            fd, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
        self.path, self.file = Path(name), os.fdopen(fd, "wb")

    def write(self, block: bytes) -> None:
        with _cache_errors():
            self.file.write(block)

    def keep(self) -> None:
        with _cache_errors():
            self.file.close()
            os.replace(self.path, self.dest)

    def __enter__(self) -> _Partial:
        return self

    def __exit__(self, *exc: object) -> None:
        self.file.close()
        with suppress(OSError):  # left behind, a temp name is never taken for a cached file
            self.path.unlink(missing_ok=True)


# Downloads take turns per cache folder: a lock per folder for the threads of this process,
# and the last failure of each, so that visitors who waited for it don't all try again.
_LOCKS: dict[Path, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()
_FAILURES: dict[Path, tuple[float, str]] = {}  # folder -> (time.monotonic(), why) of the last failure


def _lock_file(handle, until: float, notice: Notice | None) -> None:
    """flock `handle` (released when it closes), polling so that the wait ends at `until`."""
    told = False
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > until:
                raise DownloadError(
                    "another process's download into the same cache folder is taking too long"
                ) from None
            if not told and notice is not None:
                notice("Another program is downloading MNIST into the same cache: waiting for it.")
            told = True
            time.sleep(0.1)
        except OSError:
            return  # a file system without locks (some network drives): the moves stay atomic


@contextmanager
def _download_turn(folder: Path, wait: float, notice: Notice | None) -> Iterator[float]:
    """Hold the cache folder's turn to download, waiting at most `wait` seconds for it; yields
    the time waiting began (a failure recorded after it is one this caller waited for)."""
    key = folder.resolve()
    with _LOCKS_GUARD:
        lock = _LOCKS.setdefault(key, threading.Lock())
    began = time.monotonic()
    if not lock.acquire(blocking=False):
        if notice is not None:
            notice("Someone else is downloading MNIST into the same cache: waiting for it.")
        if not lock.acquire(timeout=wait):
            raise DownloadError(f"another download into the same cache has been running for over {wait:g} s")
    try:
        with _cache_errors():
            folder.mkdir(parents=True, exist_ok=True)
            handle = open(folder / LOCK_FILE, "ab")  # noqa: SIM115 (closed below, releasing the flock)
        with handle:
            if fcntl is not None:
                _lock_file(handle, began + wait, notice)
            yield began
    finally:
        lock.release()


# --- Download ----------------------------------------------------------------------------


def size_text(n: int) -> str:
    """Bytes in words: '9.9 MB', '28.9 kB', '512 bytes'."""
    if n >= 1e6:
        return f"{n / 1e6:.1f} MB"
    return f"{n / 1e3:.1f} kB" if n >= 1e3 else f"{n} bytes"


def _length(response: http.client.HTTPResponse) -> int | None:
    value = response.headers.get("Content-Length", "")
    return int(value) if value.isdigit() else None


def _open(request: urllib.request.Request, timeout: float) -> http.client.HTTPResponse:
    """urlopen, with a mirror that never answers (a stalled proxy) reported as unreachable."""
    try:
        return urllib.request.urlopen(request, timeout=timeout)
    except TimeoutError as err:  # waiting for the answer's first line, after connecting
        raise urllib.error.URLError(err) from err


def download_file(
    url: str,
    dest: Path,
    expected: RemoteFile,
    timeout: float = TIMEOUT,
    deadline: float = DEADLINE,
    progress: Progress | None = None,
) -> None:
    """Stream `url` into `dest` through a temp file, checking its size and MD5 on the way.

    Bounded: `timeout` seconds of silence; `deadline` seconds in all (checked between reads, so
    at most one `timeout` late); the file's size plus a margin, refused before reading when the
    mirror announces more and checked as bytes arrive when it doesn't. A mirror's fault raises
    DownloadError (or the URLError / HTTPError / timeout), the cache folder's CacheError.
    """
    limit = int(expected.size * SIZE_MARGIN)
    request = urllib.request.Request(url, headers={"User-Agent": "mlp-playground"})
    with _Partial(dest) as part, _open(request, timeout) as response:
        total, done, stop = _length(response), 0, time.monotonic() + deadline
        if total is not None and total > limit:
            raise DownloadError(f"it announced {size_text(total)} for a file of {size_text(expected.size)}")
        digest = hashlib.md5(usedforsecurity=False)
        while block := response.read1(1 << 16):  # whatever has arrived: a trickle can't hide
            done += len(block)
            if done > limit:
                raise DownloadError(
                    f"it sent over {size_text(limit)} for a file of {size_text(expected.size)}"
                )
            part.write(block)
            digest.update(block)
            if progress is not None:
                progress(dest.name, done, total)
            if time.monotonic() > stop:
                raise DownloadError(
                    f"too slow: {size_text(done)} of {size_text(expected.size)} in {deadline:g} s"
                )
        if total is not None and done != total:
            raise DownloadError(f"connection closed after {done:,} of {total:,} bytes")
        if digest.hexdigest() != expected.md5:
            raise DownloadError(f"checksum mismatch (MD5 {digest.hexdigest()}, expected {expected.md5})")
        part.keep()


def _describe(err: BaseException, timeout: float) -> str:
    """What went wrong with a mirror, in a few words (the status phrase is ours, not the mirror's)."""
    if isinstance(err, urllib.error.HTTPError):
        try:
            return f"HTTP {err.code} {HTTPStatus(err.code).phrase}"
        except ValueError:
            return f"HTTP {err.code}"
    if isinstance(err, urllib.error.URLError):  # before the answer began
        if isinstance(err.reason, TimeoutError):  # socket.timeout is TimeoutError since Python 3.10
            return f"no answer within {timeout:g} s"
        return f"unreachable ({plain(err.reason) if isinstance(err.reason, BaseException) else err.reason})"
    if isinstance(err, TimeoutError):  # in the middle of the file
        return f"stalled: nothing for {timeout:g} s"
    return plain(err)


def _download(
    file: RemoteFile,
    folder: Path,
    mirrors: Sequence[str],
    retries: int,
    timeout: float,
    deadline: float,
    progress: Progress | None,
    notice: Notice | None,
) -> str:
    """Download one file from the first mirror that delivers it; returns that mirror.

    A mirror that can't be reached or hasn't the file is left at once; one that fails mid-way
    (a cut, a bad checksum, a server error) gets `retries` attempts in all.
    """
    failures = []
    for mirror in mirrors:
        host = urlsplit(mirror).netloc or mirror
        for attempt in range(retries):
            if notice is not None:
                notice(f"{file.name}: downloading from {host}…")
            try:
                download_file(mirror + file.name, folder / file.name, file, timeout, deadline, progress)
                return mirror
            except CacheError:
                raise
            except (OSError, ValueError, http.client.HTTPException) as err:
                why = _describe(err, timeout)
                failures.append(f"{host}: {why}")
                if notice is not None:
                    notice(f"{file.name}: {host}: {why}")
                if isinstance(err, urllib.error.HTTPError):
                    hopeless = err.code in (403, 404, 410)  # it hasn't the file
                else:
                    hopeless = isinstance(err, urllib.error.URLError)  # it can't be reached
                if hopeless:
                    break  # retrying won't help: on to the next mirror
                if attempt + 1 < retries:
                    time.sleep(0.25 * (attempt + 1))
    raise DownloadError(f"{file.name}: " + "; ".join(dict.fromkeys(failures)))


def fetch_all(
    files: Mapping[str, RemoteFile],
    folder: Path,
    mirrors: Sequence[str],
    download: bool = True,
    retries: int = 2,
    timeout: float = TIMEOUT,
    deadline: float = DEADLINE,
    progress: Progress | None = None,
    notice: Notice | None = None,
    wait: float = LOCK_WAIT,
) -> dict[str, Path]:
    """Each of `files` (role -> file), verified in `folder`: cached, else downloaded.

    One download runs at a time per folder; a caller that waited for another's uses what it
    cached (or, when it failed in this process, its reason: no second try at once). Raises
    NotCachedError (not cached, `download` off), DownloadError or CacheError, none naming a path.
    """
    paths = {role: folder / file.name for role, file in files.items()}
    missing = [file for file in files.values() if not _is_cached(folder / file.name, file.md5)]
    if not missing:
        return paths
    if not download:
        damaged = [file.name for file in missing if (folder / file.name).exists()]
        if damaged:
            raise NotCachedError(f"the cached {', '.join(damaged)} is damaged and downloading is off")
        raise NotCachedError("the full MNIST has not been downloaded yet")
    with _download_turn(folder, wait, notice) as began:
        key = folder.resolve()
        failed = _FAILURES.get(key)
        if failed is not None and failed[0] > began:
            raise DownloadError(failed[1])
        order = list(mirrors)
        for file in missing:
            if _is_cached(folder / file.name, file.md5):
                continue  # the download this one waited for brought it
            with _cache_errors():
                (folder / file.name).unlink(missing_ok=True)  # damaged: never used
            try:
                mirror = _download(file, folder, order, retries, timeout, deadline, progress, notice)
            except DownloadError as err:
                _FAILURES[key] = (time.monotonic(), str(err))
                raise
            order.remove(mirror)
            order.insert(0, mirror)  # the next files try the mirror that answered first
    return paths
