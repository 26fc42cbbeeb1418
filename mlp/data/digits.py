"""Turning a drawn or uploaded image into an MNIST-style digit.

MNIST digits are white on black, fit in a 20×20 box and sit in a 28×28 frame with their centre
of mass in the middle. A network trained on them expects exactly that, so a phone photo or a
mouse drawing goes through the same steps before it is shown to the model.
"""

from __future__ import annotations

import io
import math
import warnings
from typing import Any

import numpy as np

MAX_IMAGE_MB = 10  # a phone photo is 2-8 MB
# The most pixels decoded in full. At its peak a decode holds ~7 bytes a pixel (Pillow keeps
# RGB(A) in 4, then gray and alpha in 1 each), Pillow's WebP decoder ~15 (two more copies): a
# PNG at the limit adds 40 MB to the server, a WebP 48. A JPEG is decoded at 1/2 to 1/8 of its
# size first (a phone's 12 megapixels arrive as 0.75), so only other formats meet these limits.
MAX_PIXELS = 6_000_000
FORMAT_MAX_PIXELS = {"WEBP": 3_000_000}
WORK_SIDE = 512  # the longest side kept for finding the digit, which ends up 20 pixels tall
NOT_AN_IMAGE = "That file is not an image this app can read (try PNG or JPEG)."
TOO_LARGE = (
    "The image is {size}: far too large for a photo of one digit (the limit is {limit:g} "
    "megapixels; a JPEG may be larger)."
)
INK = 0.1  # a pixel brighter than this (of 1) is part of the digit


def image_to_gray(data: bytes) -> np.ndarray:
    """Any image file's bytes as a 2-D float32 array in [0, 1], its longest side at most
    WORK_SIDE; ValueError if it isn't an image or would take too much memory to decode."""
    from PIL import Image, ImageChops

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # sized up just below
            image = Image.open(io.BytesIO(data))  # lazy: the header only, no pixels yet
    except Image.DecompressionBombError:  # Pillow's own limit: over ~179 million pixels
        raise ValueError(TOO_LARGE.format(size="over 179 million pixels", limit=MAX_PIXELS / 1e6)) from None
    except Exception:  # Pillow raises many kinds for a file it can't read
        raise ValueError(NOT_AN_IMAGE) from None
    with image:
        image.draft("L", (WORK_SIDE, WORK_SIDE))  # a JPEG decodes smaller; other formats ignore it
        limit = FORMAT_MAX_PIXELS.get(image.format, MAX_PIXELS)
        if image.width * image.height > limit:  # refused before a pixel is decoded
            size = f"{image.width}×{image.height} pixels"
            raise ValueError(TOO_LARGE.format(size=size, limit=limit / 1e6))
        try:
            gray, alpha = _gray_and_alpha(image)  # decodes
        except Exception:  # a header that reads but pixels that don't
            raise ValueError(NOT_AN_IMAGE) from None
    if alpha is not None:  # transparent areas become paper
        gray.paste(255, mask=ImageChops.invert(alpha))
    if (factor := math.ceil(max(gray.size) / WORK_SIDE)) > 1:
        gray = gray.reduce(factor)  # each pixel the mean of a factor × factor box
    return np.asarray(gray, dtype=np.float32) / 255.0


def _gray_and_alpha(image: Any) -> tuple[Any, Any]:
    """An open PIL image as 8-bit gray and, if it has transparency, its alpha (else None).

    One byte a pixel each: Pillow keeps "LA" in four, so the alpha is never converted to that.
    """
    if image.mode in ("RGBA", "LA", "PA", "La", "RGBa"):
        return image.convert("L"), image.getchannel("A")
    if "transparency" in image.info:  # a palette entry or a colour marked transparent
        with image.convert("RGBA" if image.mode in ("RGB", "P") else "LA") as both:
            return both.convert("L"), both.getchannel("A")
    return image.convert("L"), None


def to_mnist(gray: np.ndarray) -> np.ndarray:
    """A 28×28 uint8 digit, white on black, scaled into 20×20 and centred by its centre of mass."""
    from PIL import Image

    gray = np.asarray(gray, dtype=np.float32)
    if gray.ndim != 2 or gray.size == 0:
        raise ValueError("Expected a 2-D grayscale image.")
    if np.median(gray) > 0.5:  # dark ink on light paper: flip to MNIST's white on black
        gray = 1.0 - gray
    gray = np.clip((gray - np.median(gray)) / max(1e-6, float(gray.max() - np.median(gray))), 0, 1)
    rows, cols = np.nonzero(gray > INK)
    if len(rows) == 0:
        raise ValueError("No digit found: the image is empty or has too little contrast.")
    crop = gray[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]
    h, w = crop.shape
    scale = 20.0 / max(h, w)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    small = np.asarray(
        Image.fromarray((crop * 255).astype(np.uint8)).resize(size, Image.LANCZOS), dtype=np.float32
    )
    digit = np.zeros((28, 28), dtype=np.float32)
    top, left = (28 - size[1]) // 2, (28 - size[0]) // 2
    digit[top : top + size[1], left : left + size[0]] = small
    # Shift so the centre of mass sits at the middle, as MNIST's were.
    ys, xs = np.indices(digit.shape)
    mass = digit.sum()
    dy, dx = round(13.5 - (ys * digit).sum() / mass), round(13.5 - (xs * digit).sum() / mass)
    digit = np.roll(digit, (dy, dx), axis=(0, 1))
    return np.clip(digit, 0, 255).astype(np.uint8)


def canvas_to_gray(pixels: bytes, side: int) -> np.ndarray:
    """A drawing canvas's alpha channel (side × side bytes, 255 = ink) as white-on-black [0, 1]."""
    if len(pixels) != side * side:
        raise ValueError(f"Expected {side * side} canvas bytes, got {len(pixels)}.")
    return np.frombuffer(pixels, dtype=np.uint8).reshape(side, side).astype(np.float32) / 255.0


def digit_from_image(data: bytes) -> np.ndarray:
    """An image file (a photo, a scan) as an MNIST-style 28×28 uint8 digit; ValueError if it has none."""
    return to_mnist(image_to_gray(data))


def digit_from_canvas(pixels: bytes, side: int) -> np.ndarray:
    """A drawing pad's ink as an MNIST-style 28×28 uint8 digit; ValueError if nothing was drawn."""
    return to_mnist(canvas_to_gray(pixels, side))
