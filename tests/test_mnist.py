"""MNIST: the IDX parser, the bundled sample, and downloads against a local server."""

from __future__ import annotations

import gzip
import hashlib
import struct
from pathlib import Path

import numpy as np
import pytest

from mlp.data import mnist
from mlp.data.download import md5_of
from mlp.data.mnist import (
    IDXError,
    RemoteFile,
    cache_dir,
    load_mnist,
    load_sample,
    parse_idx,
    read_digits,
    read_idx_gz,
)

SAMPLE = Path(mnist.__file__).parent / "assets" / "mnist-sample"


def idx_bytes(array: np.ndarray, magic: int | None = None) -> bytes:
    magic = magic if magic is not None else 0x0800 + array.ndim
    return struct.pack(">I", magic) + struct.pack(f">{array.ndim}I", *array.shape) + array.tobytes()


def fake_mnist(n_train: int = 30, n_test: int = 10, seed: int = 0) -> dict[str, bytes]:
    """Four small, valid MNIST-format files (gzipped IDX), keyed by their real names."""
    rng = np.random.default_rng(seed)
    parts = {}
    for prefix, n in [("train", n_train), ("t10k", n_test)]:
        parts[f"{prefix}-images-idx3-ubyte.gz"] = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        parts[f"{prefix}-labels-idx1-ubyte.gz"] = (np.arange(n) % 10).astype(np.uint8)
    return {name: gzip.compress(idx_bytes(a), mtime=0) for name, a in parts.items()}


def files_for(blobs: dict[str, bytes]) -> dict[str, RemoteFile]:
    """What load_mnist expects of each file: the served bytes' MD5 and size."""
    return {
        role: RemoteFile(file.name, hashlib.md5(blobs[file.name]).hexdigest(), len(blobs[file.name]))
        for role, file in mnist.MNIST_FILES.items()
    }


@pytest.fixture
def served(file_server):
    """The fake files on the local server under /mnist/, and the matching checksums."""
    blobs = fake_mnist()
    for name, data in blobs.items():
        file_server.files[f"/mnist/{name}"] = data
    return file_server, f"{file_server.url}/mnist/", files_for(blobs)


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.glob("*.part")] if folder.exists() else []


# --- IDX parser --------------------------------------------------------------------------


def test_bundled_sample_parses_with_its_checksums():
    for name, md5 in mnist.SAMPLE_FILES.values():
        assert md5_of(SAMPLE / name) == md5
    images, labels = read_digits(
        SAMPLE / mnist.SAMPLE_FILES["images"][0], SAMPLE / mnist.SAMPLE_FILES["labels"][0]
    )
    assert images.shape == (5000, 28, 28) and images.dtype == np.uint8
    assert np.array_equal(np.bincount(labels), np.full(10, 500))
    assert images.max() == 255 and images.min() == 0


def test_sample_splits_4000_1000_stratified_and_read_only():
    data = load_sample("a test asked")
    assert (data.n_train, data.n_test) == (4000, 1000)
    assert np.array_equal(np.bincount(data.y_test), np.full(10, 100))
    assert data.source == "sample" and "because a test asked" in data.note and "CC BY-SA 3.0" in data.note
    assert np.array_equal(load_sample().x_test, data.x_test)
    with pytest.raises(ValueError, match="read-only"):
        data.x_train[0, 0, 0] = 1


def test_parse_idx_reads_what_it_was_given():
    array = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    assert np.array_equal(parse_idx(idx_bytes(array), 0x0803), array)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x00\x00", "shorter than the 4-byte header"),
        (idx_bytes(np.zeros(5, np.uint8), magic=0x0D03), "Not an IDX file of unsigned bytes"),
        (struct.pack(">II", 2051, 60000), "Truncated header: 3 dimensions need 16 bytes"),
        (idx_bytes(np.zeros((2, 28, 28), np.uint8))[:-10], "truncated"),
        (idx_bytes(np.zeros((2, 28, 28), np.uint8)) + b"xx", "too long"),
        (idx_bytes(np.zeros(4, np.uint8)), "Wrong magic number: expected 2051, found 2049"),
    ],
)
def test_malformed_idx_gets_a_clear_error_not_a_struct_error(data, message):
    with pytest.raises(IDXError, match=message):
        parse_idx(data, magic=2051)


def test_wrong_dims_and_mismatched_counts_are_refused(tmp_path):
    def write(name, array, magic=None):
        (tmp_path / name).write_bytes(gzip.compress(idx_bytes(array, magic)))
        return tmp_path / name

    labels = write("labels.gz", np.zeros(3, np.uint8))
    with pytest.raises(IDXError, match="Expected 28×28 digits"):
        read_digits(write("a.gz", np.zeros((3, 28, 27), np.uint8)), labels)
    with pytest.raises(IDXError, match="4 images but 3 labels"):
        read_digits(write("b.gz", np.zeros((4, 28, 28), np.uint8)), labels)
    with pytest.raises(IDXError, match="digits 0-9"):
        read_digits(write("c.gz", np.zeros((1, 28, 28), np.uint8)), write("d.gz", np.array([12], np.uint8)))


def test_damaged_gzip_is_an_idx_error(tmp_path):
    good = gzip.compress(idx_bytes(np.zeros(100, np.uint8)))
    (tmp_path / "cut.gz").write_bytes(good[: len(good) // 2])
    (tmp_path / "plain.gz").write_bytes(b"not gzip at all")
    for name in ("cut.gz", "plain.gz"):
        with pytest.raises(IDXError, match="not a readable gzip file"):
            read_idx_gz(tmp_path / name)


# --- download, cache, fallback -----------------------------------------------------------


def test_download_verifies_caches_and_reuses(served, tmp_path):
    server, mirror, files = served
    progress = []
    data = load_mnist(tmp_path, mirrors=[mirror], files=files, progress=lambda *a: progress.append(a))
    assert data.source == "mnist" and (data.n_train, data.n_test) == (30, 10)
    assert data.x_train.dtype == np.uint8 and data.y_train.dtype == np.int64
    assert "Full MNIST: 30 training and 10 test digits" in data.note
    for name, md5, _ in files.values():
        assert md5_of(tmp_path / name) == md5
    assert leftovers(tmp_path) == []
    assert progress and progress[-1][1] == progress[-1][2]  # the last report is the whole file
    served_before = len(server.requests)
    again = load_mnist(tmp_path, download=False, mirrors=[mirror], files=files)
    assert again.source == "mnist" and len(server.requests) == served_before
    assert np.array_equal(again.x_test, data.x_test)


def test_corrupt_download_is_never_cached_and_the_sample_takes_over(served, tmp_path):
    server, mirror, files = served
    name = files["train_images"][0]
    server.files[f"/mnist/{name}"] = b"\x1f\x8b" + b"garbage" * 100
    data = load_mnist(tmp_path, mirrors=[mirror], files=files, retries=2)
    assert data.source == "sample" and data.n_train == 4000
    assert "checksum mismatch" in data.note and "Using the bundled sample" in data.note
    assert not (tmp_path / name).exists() and leftovers(tmp_path) == []
    assert server.requests.count(f"/mnist/{name}") == 2  # retried before giving up


def test_truncated_download_is_never_cached(served, tmp_path):
    server, mirror, files = served
    name = files["test_images"][0]
    server.truncate.add(f"/mnist/{name}")
    data = load_mnist(tmp_path, mirrors=[mirror], files=files, retries=1)
    assert data.source == "sample"
    assert not (tmp_path / name).exists() and leftovers(tmp_path) == []


def test_missing_file_falls_back_with_the_http_status(served, tmp_path):
    server, mirror, files = served
    del server.files[f"/mnist/{files['test_labels'][0]}"]
    data = load_mnist(tmp_path, mirrors=[mirror], files=files)
    assert data.source == "sample" and "HTTP 404" in data.note


def test_second_mirror_serves_when_the_first_has_nothing(served, tmp_path):
    server, mirror, files = served
    data = load_mnist(tmp_path, mirrors=[f"{server.url}/gone/", mirror], files=files)
    assert data.source == "mnist"
    # One 404, no retry; the mirror that delivered goes first for the other three files.
    assert sum(r.startswith("/gone/") for r in server.requests) == 1


def test_corrupt_cached_file_is_detected_and_fetched_again(served, tmp_path):
    _, mirror, files = served
    load_mnist(tmp_path, mirrors=[mirror], files=files)
    name, md5, _ = files["train_labels"]
    (tmp_path / name).write_bytes((tmp_path / name).read_bytes()[:-7])  # truncated in the cache
    data = load_mnist(tmp_path, mirrors=[mirror], files=files)
    assert data.source == "mnist" and md5_of(tmp_path / name) == md5


def test_corrupt_cache_without_network_is_reported_not_used(served, tmp_path):
    server, mirror, files = served
    load_mnist(tmp_path, mirrors=[mirror], files=files)
    name = files["train_images"][0]
    (tmp_path / name).write_bytes(b"\x00" * 64)
    server.close()
    data = load_mnist(tmp_path, mirrors=[mirror], files=files, retries=1, timeout=2)
    assert data.source == "sample" and name in data.note
    assert not (tmp_path / name).exists()


def test_unreachable_network_falls_back_with_banner_text(tmp_path):
    data = load_mnist(tmp_path, mirrors=["http://127.0.0.1:9/"], retries=1, timeout=2)
    assert data.source == "sample" and (data.n_train, data.n_test) == (4000, 1000)
    assert data.note.startswith(
        "Using the bundled sample of 5,000 real MNIST digits (4,000 train / 1,000 test)"
    )
    assert "unreachable" in data.note


def test_downloads_off_and_nothing_cached_says_so(tmp_path):
    data = load_mnist(tmp_path, download=False)
    assert data.source == "sample" and data.reason == "the full MNIST has not been downloaded yet"
    assert f"Cache folder: {tmp_path}." in data.note  # the note, for the log, names the folder


def test_cache_folder_follows_root_then_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(mnist.ENV_VAR, str(tmp_path / "env"))
    assert cache_dir() == tmp_path / "env"
    assert cache_dir(tmp_path / "root") == tmp_path / "root"
    monkeypatch.delenv(mnist.ENV_VAR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "mlp-playground" / "mnist"


def test_the_validation_holdout_is_split_once_and_shared_read_only():
    data = load_sample()
    (x_train, y_train), (x_val, y_val) = data.holdout(0.1)
    assert (len(y_train), len(y_val)) == (3600, 400)
    assert np.array_equal(np.bincount(y_val), np.full(10, 40))
    assert data.holdout(0.1)[0][0] is x_train  # the same arrays for every run
    with pytest.raises(ValueError, match="read-only"):
        x_val[0, 0, 0] = 1


def test_a_challenges_part_keeps_300_test_digits_hidden_the_same_for_everyone():
    data = load_sample()
    part = data.challenge_part()
    x_hidden, y_hidden = part.hidden
    assert (part.n_train, part.n_test, len(y_hidden)) == (4000, 700, 300)
    assert np.array_equal(np.bincount(part.y_test), np.full(10, 70))  # stratified: every digit in both
    assert np.array_equal(np.bincount(y_hidden), np.full(10, 30))
    both = np.concatenate([part.x_test, x_hidden]).reshape(1000, -1)
    assert len(np.unique(both, axis=0)) == len(np.unique(data.x_test.reshape(1000, -1), axis=0))  # a split
    assert not (x_hidden.reshape(300, 1, -1) == part.x_test.reshape(1, 700, -1)).all(axis=2).any()
    assert data.challenge_part() is part and part.challenge_part() is part  # made once, shared
    assert part.x_train is data.x_train and part.holdout(0.1)[0][0] is data.holdout(0.1)[0][0]
    assert "(300 more kept hidden for the challenge)" in part.headline and data.hidden is None
    with pytest.raises(ValueError, match="read-only"):
        x_hidden[0, 0, 0] = 1
