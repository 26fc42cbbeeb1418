"""mlp.data.digits: drawn and photographed digits made MNIST-like."""

import io
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFile

from mlp.data.digits import MAX_PIXELS, canvas_to_gray, image_to_gray, to_mnist
from tests.conftest import ROOT


def png(array: np.ndarray, mode: str = "L") -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array, mode).save(buffer, format="PNG")
    return buffer.getvalue()


def test_a_dark_digit_on_white_paper_becomes_an_mnist_digit():
    paper = np.full((300, 200), 235, dtype=np.uint8)
    paper[40:260, 90:115] = 20  # a thick vertical stroke: a "1", off centre
    digit = to_mnist(image_to_gray(png(paper)))
    assert digit.shape == (28, 28) and digit.dtype == np.uint8
    assert digit[0].max() == 0 and digit[:, 0].max() == 0  # black border, white ink
    ys, _ = np.nonzero(digit > 30)
    assert ys.max() - ys.min() + 1 <= 21  # fits the 20-pixel box
    mass = digit.astype(float)
    centre = (
        (np.indices(digit.shape)[0] * mass).sum() / mass.sum(),
        (np.indices(digit.shape)[1] * mass).sum() / mass.sum(),
    )
    assert abs(centre[0] - 13.5) < 1 and abs(centre[1] - 13.5) < 1


def test_a_transparent_png_and_a_canvas_drawing_work():
    rgba = np.zeros((64, 64, 4), dtype=np.uint8)
    rgba[10:54, 28:36] = [0, 0, 0, 255]  # black ink on a transparent background
    assert to_mnist(image_to_gray(png(rgba, "RGBA"))).max() > 200
    ink = np.zeros((56, 56), dtype=np.uint8)
    ink[10:46, 20:30] = 255
    assert to_mnist(canvas_to_gray(ink.tobytes(), 56)).max() > 200


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"definitely not an image", "not an image"), (b"\x89PNG\r\n\x1a\nbroken", "not an image")],
)
def test_non_images_are_refused(data, message):
    with pytest.raises(ValueError, match=message):
        image_to_gray(data)


def test_an_empty_image_has_no_digit():
    with pytest.raises(ValueError, match="No digit found"):
        to_mnist(image_to_gray(png(np.full((50, 50), 255, dtype=np.uint8))))
    with pytest.raises(ValueError, match="Expected 3136"):
        canvas_to_gray(b"\x00" * 10, 56)


def png_header(width: int, height: int) -> bytes:
    """A PNG that declares width × height RGB pixels and holds none: only a decode would notice."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")
    )


@pytest.fixture
def decoded(monkeypatch) -> list[tuple[int, int]]:
    """The size of every image Pillow decodes from here on."""
    sizes = []
    load = ImageFile.ImageFile.load

    def recording(image):
        sizes.append(image.size)
        return load(image)

    monkeypatch.setattr(ImageFile.ImageFile, "load", recording)
    return sizes


def test_an_image_past_the_pixel_budget_is_refused_before_a_pixel_is_decoded(decoded):
    for width, height in [(5000, 5000), (3000, 2001)]:  # 25 megapixels; just past the 6 allowed
        with pytest.raises(ValueError, match=rf"{width}×{height} pixels: far too large .*6 megapixels"):
            image_to_gray(png_header(width, height))
    assert decoded == []
    webp = io.BytesIO()
    Image.new("RGB", (2000, 1600)).save(webp, "WEBP")  # Pillow's WebP decoder needs more a pixel
    with pytest.raises(ValueError, match=r"2000×1600 pixels: .*limit is 3 megapixels"):
        image_to_gray(webp.getvalue())
    assert decoded == [] and MAX_PIXELS == 6_000_000


def test_a_large_jpeg_is_decoded_at_a_fraction_of_its_size_and_still_read(decoded):
    photo = Image.new("L", (4000, 3000), 230)  # a phone's 12 megapixels: twice the budget
    ImageDraw.Draw(photo).line([(2000, 600), (2000, 2400)], fill=20, width=150)
    jpeg = io.BytesIO()
    photo.save(jpeg, "JPEG")
    gray = image_to_gray(jpeg.getvalue())
    assert set(decoded) == {(1000, 750)}  # libjpeg's 1/4 scale: 0.75 megapixels
    assert gray.shape == (375, 500)  # then halved, to at most 512 a side
    digit = to_mnist(gray)
    ys, xs = np.nonzero(digit > 128)
    assert ys.max() - ys.min() >= 17 and 11 <= xs.mean() <= 16  # a tall stroke, in the middle


PEAK = """
import re, sys
from mlp.data.digits import digit_from_image, image_to_gray

def peak():  # MB: this process's peak resident memory (ru_maxrss would count the parent's too)
    with open("/proc/self/status") as status:
        return int(re.search(r"VmHWM:\\s+(\\d+) kB", status.read()).group(1)) / 1024

data = sys.stdin.buffer.read()
image_to_gray(open(sys.argv[1], "rb").read())  # imports and warms up Pillow's decoders
before = peak()
try:
    digit_from_image(data)
except ValueError:
    pass
print(peak() - before)
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the peak from /proc")
@pytest.mark.parametrize("kind", ["PNG", "JPEG", "PNG at the budget"])
def test_a_25_megapixel_image_adds_under_50_mb_to_the_server(kind, tmp_path):
    """Measured as the process's peak resident memory, in a process of its own: a 25-megapixel
    PNG took the server from 489 to 771 MB before it was refused or read."""
    size = (2999, 2000) if kind == "PNG at the budget" else (5000, 5000)
    picture = Image.new("RGBA" if kind.startswith("PNG") else "RGB", size, "white")
    ImageDraw.Draw(picture).line(
        [(size[0] // 2, 100), (size[0] // 2, size[1] - 100)], fill="black", width=200
    )
    data = io.BytesIO()
    picture.save(data, kind.split()[0])
    small = tmp_path / "small.png"
    Image.new("L", (64, 64), 255).save(small)
    out = subprocess.run(
        [sys.executable, "-c", PEAK, str(small)], input=data.getvalue(), capture_output=True, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr.decode()
    assert float(out.stdout) < 50
