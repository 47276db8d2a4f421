"""Screenshot formats, limits, the pixel count check and the prepared image (v1.md "Images").

Pure: the checks that decode need Pillow or libjpeg-turbo and live in
:mod:`xtyserver.serve.image` (a shell); the session only ever sees a
:class:`PreparedImage`.
"""

from __future__ import annotations

import base64
from typing import Final, Literal

import msgspec

from xtyserver.errors import ImageError
from xtyserver.protocol.limits import IMAGE_MAX_BYTES, IMAGE_MAX_SIDE_PX

Mime = Literal["image/png", "image/jpeg", "image/webp"]

SUPPORTED_MIMES: Final[tuple[Mime, ...]] = ("image/png", "image/jpeg", "image/webp")

TOO_LARGE: Final = "image_too_large"
INVALID: Final = "invalid_image"


class ImageLimits(msgspec.Struct, frozen=True, kw_only=True):
    """Limits for screenshots.

    Attributes:
        max_decoded_bytes: Largest accepted image file, in bytes (8 MiB).
        max_pixels: Largest accepted ``width * height`` (decompression-bomb guard).
        max_side: Longest side after downscaling, in pixels.
        jpeg_quality: Quality for re-encoded JPEG (1-95).
        webp_quality: Quality for re-encoded lossy WebP (1-100).
    """

    max_decoded_bytes: int = IMAGE_MAX_BYTES
    max_pixels: int = 40_000_000
    max_side: int = IMAGE_MAX_SIDE_PX
    jpeg_quality: int = 85
    webp_quality: int = 85


class PreparedImage(msgspec.Struct, frozen=True, kw_only=True):
    """A checked, cleaned, downscaled screenshot, re-encoded as ``data`` in the mime it came in."""

    mime: Mime
    data: bytes
    width: int
    height: int
    original_width: int
    original_height: int
    original_bytes: int

    def data_url(self) -> str:
        """Return the image as a ``data:`` URL for an OpenAI ``image_url`` content part."""
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


def check_pixels(width: int, height: int, limits: ImageLimits, field: str) -> None:
    """Refuse (naming ``field``) a picture without pixels or over ``max_pixels`` before decoding."""
    if width <= 0 or height <= 0:
        raise ImageError("image has no pixels", code=INVALID, fields=[field])
    if width * height > limits.max_pixels:
        raise ImageError(
            f"image has {width}x{height} pixels, more than {limits.max_pixels}",
            code=TOO_LARGE,
            fields=[field],
        )
