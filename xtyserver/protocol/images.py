"""Screenshot formats, limits and the prepared image as plain data (v1.md "Images").

Pure: the checks themselves need Pillow and live in :mod:`xtyserver.serve.image` (a
shell); the session only ever sees a :class:`PreparedImage`.
"""

from __future__ import annotations

import base64
from typing import Final, Literal

import msgspec

Mime = Literal["image/png", "image/jpeg", "image/webp"]

SUPPORTED_MIMES: Final[tuple[Mime, ...]] = ("image/png", "image/jpeg", "image/webp")


class ImageLimits(msgspec.Struct, frozen=True, kw_only=True):
    """Limits for screenshots.

    Attributes:
        max_decoded_bytes: Largest accepted image file, in bytes (8 MiB).
        max_pixels: Largest accepted ``width * height`` (decompression-bomb guard).
        max_side: Longest side after downscaling, in pixels.
        jpeg_quality: Quality for re-encoded JPEG (1-95).
        webp_quality: Quality for re-encoded lossy WebP (1-100).
    """

    max_decoded_bytes: int = 8 * 1024 * 1024
    max_pixels: int = 40_000_000
    max_side: int = 1568
    jpeg_quality: int = 85
    webp_quality: int = 85


class PreparedImage(msgspec.Struct, frozen=True, kw_only=True):
    """A checked, cleaned, downscaled screenshot, ready for the model.

    Attributes:
        mime: The mime type of ``data`` (the same as the one received).
        data: The re-encoded image file.
        width: Width of ``data`` in pixels.
        height: Height of ``data`` in pixels.
        original_width: Width of the image received.
        original_height: Height of the image received.
        original_bytes: Size of the image file received, in bytes.
    """

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
