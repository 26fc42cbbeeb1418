"""MNIST: download with checksums, an atomic cache, an IDX parser, and the bundled sample.

The full set (60,000 train / 10,000 test) comes from public mirrors that still serve the
original IDX files. When it can't be had, `load_mnist` falls back to the 5,000 real digits
bundled with the package and says why, so a lecture-hall Wi-Fi never stops a class.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import struct
import tempfile
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

from mlp.data.toy import split

# The PyTorch team's mirror first, then Google's CVDF copy; yann.lecun.com now answers 403/404.
MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
)
# role -> (file name, MD5), the sums torchvision checks.
MNIST_FILES = {
    "train_images": ("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
    "train_labels": ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
    "test_images": ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
    "test_labels": ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c"),
}
SAMPLE_FILES = {
    "images": ("sample-images-idx3-ubyte.gz", "744e2ef0be4e65cefdcd70f6deb02ba7"),
    "labels": ("sample-labels-idx1-ubyte.gz", "8487fb0a6448ce940e135cbf419639e6"),
}
IMAGES_MAGIC, LABELS_MAGIC = 2051, 2049  # 0x0803: uint8, 3 dims; 0x0801: uint8, 1 dim
ENV_VAR = "MLP_PLAYGROUND_DATA"  # overrides the cache folder
SAMPLE_TEST_FRACTION = 0.2  # 5,000 -> 4,000 train / 1,000 test, stratified

Progress = Callable[[str, int, "int | None"], None]  # (file name, bytes so far, total or None)


class IDXError(ValueError):
    """An IDX file that is not what it claims to be."""


class DownloadError(OSError):
    """No mirror delivered a file with the expected checksum."""


class NotCachedError(DownloadError):
    """The file is not in the cache, and downloading was not allowed."""


@dataclass
class MnistData:
    """Digits as uint8 (N, 28, 28) with int64 labels, and where they came from."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    source: str  # "mnist" (the full set), "sample" (the bundled 5,000 digits) or "synthetic"
    note: str  # what this is and why, in full (for a notebook or the server's log: it may name a path)

    def __post_init__(self) -> None:
        for array in (self.x_train, self.y_train, self.x_test, self.y_test):
            array.flags.writeable = False  # shared by every visitor of the app: read-only
        self._holdouts: dict[float, tuple] = {}

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
        raise IDXError(f"{Path(path).name} is not a readable gzip file ({err}).") from err
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


# --- Download and cache ------------------------------------------------------------------


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


def md5_of(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download_file(
    url: str, dest: Path, md5: str, timeout: float = 15.0, progress: Progress | None = None
) -> None:
    """Stream `url` to a temp file beside `dest`, check its MD5, then move it into place."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    request = urllib.request.Request(url, headers={"User-Agent": "mlp-playground"})
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        digest, done = hashlib.md5(usedforsecurity=False), 0
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            while block := response.read(1 << 16):
                out.write(block)
                digest.update(block)
                done += len(block)
                if progress is not None:
                    progress(dest.name, done, total)
        if total is not None and done != total:
            raise DownloadError(f"connection closed after {done:,} of {total:,} bytes")
        if digest.hexdigest() != md5:
            raise DownloadError(f"checksum mismatch (MD5 {digest.hexdigest()}, expected {md5})")
        os.replace(tmp, dest)  # atomic: the cache never holds a partial file
    finally:
        tmp.unlink(missing_ok=True)


def _describe(err: BaseException) -> str:
    if isinstance(err, urllib.error.HTTPError):
        return f"HTTP {err.code} {err.reason}"
    if isinstance(err, urllib.error.URLError):
        return f"unreachable ({err.reason})"
    return str(err) or type(err).__name__


def fetch(
    filename: str,
    md5: str,
    folder: Path,
    mirrors: Sequence[str] = MIRRORS,
    download: bool = True,
    retries: int = 2,
    timeout: float = 15.0,
    progress: Progress | None = None,
) -> Path:
    """A verified local copy of one file: the cache if its MD5 matches, else a fresh download."""
    dest = folder / filename
    if dest.exists():
        if md5_of(dest) == md5:
            return dest
        dest.unlink()  # corrupt or truncated: never used, fetched again below
    if not download:
        raise NotCachedError(f"the full MNIST has not been downloaded to {folder} yet")
    failures = []
    for mirror in mirrors:
        for attempt in range(retries):
            try:
                download_file(mirror + filename, dest, md5, timeout, progress)
                return dest
            except (OSError, ValueError) as err:  # URLError, HTTPError, timeouts, bad sums
                failures.append(f"{urlsplit(mirror).netloc or mirror}: {_describe(err)}")
                if isinstance(err, urllib.error.HTTPError) and err.code in (403, 404, 410):
                    break  # this mirror doesn't have it; retrying won't help
                if attempt + 1 < retries:
                    time.sleep(0.25 * (attempt + 1))
    raise DownloadError(f"{filename}: " + "; ".join(dict.fromkeys(failures)))


def load_mnist(
    root: Path | str | None = None,
    download: bool = True,
    *,
    mirrors: Sequence[str] = MIRRORS,
    files: Mapping[str, tuple[str, str]] = MNIST_FILES,
    retries: int = 2,
    timeout: float = 15.0,
    progress: Progress | None = None,
) -> MnistData:
    """The full MNIST from the cache or a mirror; the bundled sample, with the reason, if not.

    `files` maps train_images/train_labels/test_images/test_labels to (name, MD5); tests and
    private mirrors pass their own.
    """
    folder = cache_dir(root)
    try:
        paths = {
            role: fetch(name, md5, folder, mirrors, download, retries, timeout, progress)
            for role, (name, md5) in files.items()
        }
        x_train, y_train = read_digits(paths["train_images"], paths["train_labels"])
        x_test, y_test = read_digits(paths["test_images"], paths["test_labels"])
    except NotCachedError as err:
        return load_sample(str(err))
    except (OSError, IDXError) as err:
        return load_sample(f"the full set could not be loaded ({err})")
    note = (
        f"Full MNIST: {len(y_train):,} training and {len(y_test):,} test digits, cached in {folder}. "
        "MNIST by Yann LeCun, Corinna Cortes and Christopher J. C. Burges (CC BY-SA 3.0)."
    )
    return MnistData(x_train, y_train, x_test, y_test, "mnist", note)


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


def load_sample(reason: str = "it was asked for") -> MnistData:
    """The 5,000 bundled real MNIST digits, split 4,000 / 1,000 with every class in both."""
    x_train, y_train, x_test, y_test = _sample_split()
    labels_total = len(y_train) + len(y_test)
    note = (
        f"Using the bundled sample of {labels_total:,} real MNIST digits "
        f"({len(y_train):,} train / {len(y_test):,} test) because {reason}. "
        "MNIST by Yann LeCun, Corinna Cortes and Christopher J. C. Burges (CC BY-SA 3.0)."
    )
    return MnistData(x_train, y_train, x_test, y_test, "sample", note)


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


def main() -> None:
    """`python -m mlp.data.mnist`: download the full set into the cache (for a server before a class)."""
    import sys

    def progress(name: str, done: int, total: int | None) -> None:
        print(
            f"\r{name}: {done / 1e6:5.1f} MB" + (f" of {total / 1e6:.1f}" if total else ""),
            end="",
            file=sys.stderr,
        )

    data = load_mnist(progress=progress)
    print(file=sys.stderr)
    print(data.note)
    sys.exit(0 if data.source == "mnist" else 1)


if __name__ == "__main__":
    main()
