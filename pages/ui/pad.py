"""A drawing pad for digits: a custom component (components v2, its front-end in
pages/ui/components/digit_pad/) that sends its ink to Python."""

import base64

from pages.ui.components import component

_PAD_SIDE = 56  # the pad sends its ink at 56 × 56; mlp.digits makes a 28 × 28 digit of it


def digit_pad(key: str) -> tuple[bytes | None, int]:
    """A drawing pad: the ink the user drew (side × side bytes, 255 = ink) or None, and the side."""
    result = component("digit_pad")(key=key, data={"side": _PAD_SIDE}, on_pixels_change=lambda: None)
    pixels = getattr(result, "pixels", None)
    return (base64.b64decode(pixels) if pixels else None), _PAD_SIDE
