"""mlp.data.digits: drawn and photographed digits made MNIST-like."""

import io

import numpy as np
import pytest
from PIL import Image

from mlp.data.digits import canvas_to_gray, image_to_gray, to_mnist


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
