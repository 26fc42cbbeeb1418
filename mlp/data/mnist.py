"""MNIST: the mirrors and their checksums, an IDX parser, the cache, and the bundled sample.

The full set (60,000 train / 10,000 test) comes from public mirrors that still serve the
original IDX files, through `mlp.data.download` (bounded, checked, atomic, one download at a
time per cache folder). When it can't be had, `load_mnist` falls back to the 5,000 real digits
bundled with the package and says why, so a lecture-hall Wi-Fi never stops a class. From a
shell: `python -m mlp.data.mnist --help`.
"""

from __future__ import annotations

import argparse
import gzip
import os
import struct
import sys
import threading
import zlib
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

from mlp.data.download import (
    DEADLINE,
    TIMEOUT,
    CacheError,
    DownloadError,
    NotCachedError,
    Notice,
    Progress,
    RemoteFile,
    fetch_all,
    plain,
    size_text,
)
from mlp.data.toy import HIDDEN_SEED, split

# The PyTorch team's mirror first, then Google's CVDF copy; yann.lecun.com now answers 403/404.
MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
)
# role -> the file, with the MD5 sums torchvision checks.
MNIST_FILES = {
    "train_images": RemoteFile("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873", 9_912_422),
    "train_labels": RemoteFile("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432", 28_881),
    "test_images": RemoteFile("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3", 1_648_877),
    "test_labels": RemoteFile("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c", 4_542),
}
SAMPLE_FILES = {
    "images": ("sample-images-idx3-ubyte.gz", "744e2ef0be4e65cefdcd70f6deb02ba7"),
    "labels": ("sample-labels-idx1-ubyte.gz", "8487fb0a6448ce940e135cbf419639e6"),
}
IMAGES_MAGIC, LABELS_MAGIC = 2051, 2049  # 0x0803: uint8, 3 dims; 0x0801: uint8, 1 dim
ENV_VAR = "MLP_PLAYGROUND_DATA"  # overrides the cache folder
SAMPLE_TEST_FRACTION = 0.2  # 5,000 -> 4,000 train / 1,000 test, stratified
VAL_FRACTION = 0.1  # of the training digits, held out to watch over-fitting live (MnistData.holdout)
# A challenge keeps this much of the test digits hidden (MnistData.challenge_part): the sample's
# 1,000 -> 700 a page shows and checks, 300 the class board ranks on at the end (the full set's
# 10,000 -> 7,000 and 3,000). Kaggle keeps about this share private.
HIDDEN_FRACTION = 0.3
PARTS_KEPT = 16  # challenge parts kept made (one per class room that takes an MNIST challenge)
_PARTS = threading.Lock()
CREDIT = "MNIST by Yann LeCun, Corinna Cortes and Christopher J. C. Burges (CC BY-SA 3.0)."


class IDXError(ValueError):
    """An IDX file that is not what it claims to be."""


@dataclass
class MnistData:
    """Digits as uint8 (N, 28, 28) with int64 labels, and where they came from."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    source: str  # "mnist" (the full set), "sample" (the bundled 5,000 digits) or "synthetic"
    note: str  # what this is and why, in full (for a notebook or the server's log: it may name a path)
    reason: str = ""  # why not the full set, for a page's visitors: plain words, never a path
    # A challenge's part (challenge_part): the test digits kept back, never shown on a page
    hidden: tuple[np.ndarray, np.ndarray] | None = None
    part_seed: int | None = None  # the seed that chose them

    def __post_init__(self) -> None:
        for array in (self.x_train, self.y_train, self.x_test, self.y_test):
            array.flags.writeable = False  # shared by every visitor of the app: read-only
        self._holdouts: dict[float, tuple] = {}
        self._parts: OrderedDict[int, MnistData] = OrderedDict()

    def challenge_part(self, seed: int | None = None) -> MnistData:
        """The same digits with HIDDEN_FRACTION of the test digits kept back (stratified): a
        challenge's page trains, shows and checks on the rest, and the class board ranks on the
        hidden ones once the instructor closes the challenge (mlp.rooms). In a class room `seed`
        comes from a secret the room keeps (Rooms.room_seed), so which digits are hidden is the
        server's to know; without one (no room), HIDDEN_SEED. Made once per seed and shared, like
        `holdout`; the training digits are the same arrays."""
        if self.hidden is not None:
            return self
        seed = HIDDEN_SEED if seed is None else seed
        with _PARTS:  # one part per seed for every visitor, however many ask at once
            if seed not in self._parts:
                self._parts[seed] = self._split_hidden(seed)
                while len(self._parts) > PARTS_KEPT:
                    self._parts.popitem(last=False)
            self._parts.move_to_end(seed)
            return self._parts[seed]

    def _split_hidden(self, seed: int) -> MnistData:
        (x_test, y_test), hidden = split(self.x_test, self.y_test, HIDDEN_FRACTION, seed=seed)
        part = replace(self, x_test=x_test, y_test=y_test, hidden=hidden, part_seed=seed)
        part._holdouts = self._holdouts  # the training digits' split, shared too
        for array in hidden:
            array.flags.writeable = False
        return part

    def holdout(self, fraction: float) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        """(train, validation) from the training digits, stratified; split once and shared, read-only.

        Every run of every visitor reuses it, instead of copying 50 MB of pixels per run.
        """
        if fraction not in self._holdouts:
            parts = split(self.x_train, self.y_train, fraction, seed=0)
            for array in (*parts[0], *parts[1]):
                array.flags.writeable = False
            self._holdouts[fraction] = parts
        return self._holdouts[fraction]

    @property
    def n_train(self) -> int:
        return len(self.y_train)

    @property
    def n_test(self) -> int:
        return len(self.y_test)

    @property
    def headline(self) -> str:
        """One short line for a page's banner, fit to show a class: no paths, no error text."""
        digits = f"{self.n_train:,} training and {self.n_test:,} test digits"
        if self.hidden is not None:
            digits += f" ({len(self.hidden[1]):,} more kept hidden for the challenge)"
        if self.source == "mnist":
            return f"The full MNIST: {digits}."
        if self.source == "sample":
            return f"The bundled sample of real MNIST: {digits}."
        return f"Synthetic digits for benchmarks: {digits} of random noise."


# --- IDX ---------------------------------------------------------------------------------


def parse_idx(data: bytes, magic: int | None = None) -> np.ndarray:
    """Parse an uncompressed IDX buffer of unsigned bytes into a uint8 array."""
    if len(data) < 4:
        raise IDXError(f"Not an IDX file: {len(data)} bytes is shorter than the 4-byte header.")
    zero, dtype_code, ndim = struct.unpack_from(">HBB", data)
    found = struct.unpack_from(">I", data)[0]
    if zero != 0 or dtype_code != 0x08:
        raise IDXError(f"Not an IDX file of unsigned bytes: magic number {found} (0x{found:08x}).")
    if magic is not None and found != magic:
        raise IDXError(f"Wrong magic number: expected {magic}, found {found}.")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise IDXError(f"Truncated header: {ndim} dimensions need {header} bytes, file has {len(data)}.")
    dims = struct.unpack_from(f">{ndim}I", data, 4)
    expected = int(np.prod(dims, dtype=np.int64))
    payload = len(data) - header
    if payload != expected:
        raise IDXError(
            f"Payload is {payload:,} bytes but dimensions {dims} need {expected:,}: "
            f"the file is {'truncated' if payload < expected else 'too long'}."
        )
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(dims)


def read_idx_gz(path: Path | str, magic: int | None = None) -> np.ndarray:
    """Read a gzipped IDX file; a damaged file raises IDXError, never a struct or zlib error."""
    try:
        data = gzip.decompress(Path(path).read_bytes())
    except (OSError, EOFError, zlib.error) as err:
        raise IDXError(f"{Path(path).name} is not a readable gzip file ({plain(err)}).") from err
    try:
        return parse_idx(data, magic)
    except IDXError as err:
        raise IDXError(f"{Path(path).name}: {err}") from None


def read_digits(images_path: Path | str, labels_path: Path | str) -> tuple[np.ndarray, np.ndarray]:
    """Images (N, 28, 28) uint8 and labels (N,) int64 from a pair of IDX files, cross-checked."""
    images = read_idx_gz(images_path, IMAGES_MAGIC)
    labels = read_idx_gz(labels_path, LABELS_MAGIC)
    if images.shape[1:] != (28, 28):
        raise IDXError(f"Expected 28×28 digits; {Path(images_path).name} holds {images.shape[1:]}.")
    if len(images) != len(labels):
        raise IDXError(f"{len(images):,} images but {len(labels):,} labels.")
    if labels.size and labels.max() > 9:
        raise IDXError(f"Labels must be digits 0-9; found {labels.max()}.")
    return images, labels.astype(np.int64)


# --- The cache folder --------------------------------------------------------------------


def cache_dir(root: Path | str | None = None) -> Path:
    """Where MNIST is cached: `root`, else $MLP_PLAYGROUND_DATA, else the user cache folder."""
    if root is not None:
        return Path(root).expanduser()
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR]).expanduser()
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "mlp-playground" / "mnist"


def _why(err: BaseException) -> str:
    """Why the full set isn't here, for a visitor: every message above is path-free already."""
    if isinstance(err, (NotCachedError, CacheError)):
        return str(err)
    if isinstance(err, DownloadError):
        return f"the full set could not be downloaded ({err})"
    return f"the full set could not be read ({plain(err)})"


def load_mnist(
    root: Path | str | None = None,
    download: bool = True,
    *,
    mirrors: Sequence[str] = MIRRORS,
    files: Mapping[str, RemoteFile] = MNIST_FILES,
    retries: int = 2,
    timeout: float = TIMEOUT,
    deadline: float = DEADLINE,
    progress: Progress | None = None,
    notice: Notice | None = None,
) -> MnistData:
    """The full MNIST from the cache or a mirror; the bundled sample, with the reason, if not.

    `files` maps train_images/train_labels/test_images/test_labels to a RemoteFile; tests and
    private mirrors pass their own. It never raises for a missing network or cache folder.
    """
    folder = cache_dir(root)
    try:
        paths = fetch_all(files, folder, mirrors, download, retries, timeout, deadline, progress, notice)
        x_train, y_train = read_digits(paths["train_images"], paths["train_labels"])
        x_test, y_test = read_digits(paths["test_images"], paths["test_labels"])
    except (OSError, IDXError) as err:
        return load_sample(_why(err), folder)
    note = f"Full MNIST: {len(y_train):,} training and {len(y_test):,} test digits, cached in {folder}."
    return MnistData(x_train, y_train, x_test, y_test, "mnist", f"{note} {CREDIT}")


# --- The bundled sample, synthetic digits, what a server loads --------------------------------


@cache
def _sample_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The bundled digits, read and split once per process (read-only arrays, shared)."""
    folder = resources.files("mlp.data") / "assets" / "mnist-sample"
    with resources.as_file(folder) as path:
        images, labels = read_digits(path / SAMPLE_FILES["images"][0], path / SAMPLE_FILES["labels"][0])
    (x_train, y_train), (x_test, y_test) = split(images, labels, SAMPLE_TEST_FRACTION, seed=0)
    for array in (x_train, y_train, x_test, y_test):
        array.flags.writeable = False
    return x_train, y_train, x_test, y_test


def load_sample(reason: str = "it was asked for", folder: Path | None = None) -> MnistData:
    """The 5,000 bundled real MNIST digits, split 4,000 / 1,000 with every class in both.

    `reason` (why not the full set) is shown to visitors and names no path; the note, for logs,
    adds the cache `folder`.
    """
    x_train, y_train, x_test, y_test = _sample_split()
    labels_total = len(y_train) + len(y_test)
    note = (
        f"Using the bundled sample of {labels_total:,} real MNIST digits "
        f"({len(y_train):,} train / {len(y_test):,} test) because {reason}. "
        + (f"Cache folder: {folder}. " if folder is not None else "")
        + CREDIT
    )
    return MnistData(x_train, y_train, x_test, y_test, "sample", note, reason)


SYNTHETIC_VAR = "MLP_PLAYGROUND_SYNTHETIC_DIGITS"  # benchmarks: random digits of this many, no download
DOWNLOAD_VAR = "MLP_PLAYGROUND_DOWNLOAD"  # "1": a server may fetch the full set on its first visit


def synthetic(n_train: int = 60_000, n_test: int = 10_000, seed: int = 0) -> MnistData:
    """Random 28×28 uint8 'digits' with random labels, MNIST's size: for speed, not for learning."""
    rng = np.random.default_rng(seed)
    x_train = rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8)
    x_test = rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8)
    y_train, y_test = rng.integers(0, 10, n_train), rng.integers(0, 10, n_test)
    note = f"Synthetic digits for a benchmark: {n_train:,} training and {n_test:,} test images of noise."
    return MnistData(x_train, y_train, x_test, y_test, "synthetic", note)


def for_server(timeout: float = 10) -> MnistData:
    """What an app server loads: $MLP_PLAYGROUND_SYNTHETIC_DIGITS random digits for a benchmark;
    else the full set if cached (downloaded on the spot when $MLP_PLAYGROUND_DOWNLOAD is 1);
    else the bundled sample."""
    if os.environ.get(SYNTHETIC_VAR, "").isdigit():
        return synthetic(int(os.environ[SYNTHETIC_VAR]))
    return load_mnist(download=os.environ.get(DOWNLOAD_VAR) == "1", timeout=timeout)


# --- python -m mlp.data.mnist ------------------------------------------------------------------

DESCRIPTION = """\
Download the full MNIST (4 files, 11.6 MB) into the app's cache folder, checking each
file's size and MD5, so that an app server has it before a class. Files already there
and sound are not downloaded again; two downloads at once into one folder take turns."""
EPILOG = (
    """\
exit codes:
  0  the full MNIST is in the cache folder, checked (downloaded now or before)
  1  it could not be downloaded: no mirror answered in time or delivered a sound file
     (the app still works: it trains on the 5,000 digits it ships with)
  2  the command line was wrong
  3  the cache folder can't be created or written (choose another with --cache)

Mirrors, tried in turn unless --mirror says otherwise:
  """
    + "\n  ".join(MIRRORS)
    + """
Behind a proxy, set HTTPS_PROXY=http://host:port first."""
)


class _Printer:
    """The command's output: a line per file with its percent and megabytes, and each notice.

    On a terminal a file's line is redrawn as it grows; in a log, it is printed at 0, 25, 50,
    75 and 100% only."""

    def __init__(self) -> None:
        self.stream = sys.stderr
        self.tty = self.stream.isatty()
        self.shown: tuple[str, int] = ("", -1)  # (file, step) last printed
        self.width = 0  # of the line being redrawn, on a terminal

    def notice(self, line: str) -> None:
        self.end_line()
        print(line, file=self.stream, flush=True)

    def progress(self, name: str, done: int, total: int | None) -> None:
        if total:  # a step: a percent on a terminal, a quarter in a log
            percent = 100 * done // total
            step = percent if self.tty else percent // 25
            text = f"  {name}: {percent:3d}%  {size_text(done)} of {size_text(total)}"
        else:  # no length announced: a step per megabyte, or per 5 MB in a log
            step = done // (1_000_000 if self.tty else 5_000_000)
            text = f"  {name}: {size_text(done)}"
        if (name, step) == self.shown:
            return
        if self.tty:  # over the line before, padded where it was longer
            print("\r" + text.ljust(self.width), end="", file=self.stream, flush=True)
            self.width = len(text)
        else:
            print(text, file=self.stream, flush=True)
        self.shown = (name, step)

    def end_line(self) -> None:
        if self.tty and self.shown[1] >= 0:
            print(file=self.stream, flush=True)
        self.shown, self.width = ("", -1), 0


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m mlp.data.mnist`: download the full set into the cache (a server, before a class)."""
    parser = argparse.ArgumentParser(
        prog="python -m mlp.data.mnist",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--cache", metavar="FOLDER", help=f"the cache folder (default: ${ENV_VAR}, else {cache_dir()})")
    add("--timeout", type=float, default=10.0, metavar="S", help="wait S s for a silent mirror (%(default)g)")
    add("--deadline", type=float, default=DEADLINE, metavar="S", help="at most S s per file (%(default)g)")
    add("--retries", type=int, default=2, metavar="N", help="attempts per file and mirror (%(default)s)")
    add("--mirror", action="append", metavar="URL", help="a folder URL with the 4 files (repeatable)")
    args = parser.parse_args(argv)
    for name in ("timeout", "deadline", "retries"):
        if not getattr(args, name) > 0:
            parser.error(f"--{name} must be more than 0")
    folder, out = cache_dir(args.cache), _Printer()
    out.notice(f"The full MNIST, into {folder}:")
    try:
        fetch_all(
            MNIST_FILES,
            folder,
            args.mirror or MIRRORS,
            retries=args.retries,
            timeout=args.timeout,
            deadline=args.deadline,
            progress=out.progress,
            notice=out.notice,
        )
    except CacheError as err:
        out.notice(f"Can't download: {err}: {folder}. Choose another folder with --cache or ${ENV_VAR}.")
        return 3
    except DownloadError as err:
        out.notice(
            f"Could not download the full MNIST: {err}.\nThe app will train on its bundled sample of "
            "5,000 digits. Check that this machine is online (behind a proxy, that HTTPS_PROXY names it)."
        )
        return 1
    out.notice(f"Done: the four files are in {folder}, checked. {CREDIT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
