"""Screenshot checks: real PNG/JPEG/WebP, bounded size, no metadata, downscaled.

Pure: bytes in, bytes out, nothing written anywhere. The order of the checks is
the point (``protocol/v1.md`` "Images"): the cheapest refusal comes first and no
pixel is decoded before the header has shown the image is small enough.

1. The base64 length alone decides whether the decoded bytes would exceed
   ``max_decoded_bytes``; too long is refused before decoding anything.
2. Strict base64 decoding (no whitespace, no data-URL prefix, no junk).
3. Magic bytes must be PNG, JPEG or WebP and agree with the declared mime.
4. Pillow reads only the header; ``width * height`` is checked against
   ``max_pixels`` before any pixel is decoded (a decompression-bomb guard on top
   of Pillow's own, whose error is converted as well).
5. The pixels are decoded, oriented by the EXIF orientation tag, downscaled so
   the longest side is at most ``max_side``, copied into a fresh image (so no
   EXIF, XMP, ICC profile or text chunk survives) and re-encoded in the format
   they came in. Animated images keep their first frame only.

Every failure is an :class:`~xtyserver.errors.ImageError` with code
``invalid_image`` or ``image_too_large``; no Pillow exception escapes.
"""

from __future__ import annotations

import binascii
import io
from typing import Final

from PIL import ExifTags, Image, ImageOps

from xtyserver.errors import ImageError
from xtyserver.protocol.images import SUPPORTED_MIMES, ImageLimits, Mime, PreparedImage

__all__ = ["SUPPORTED_MIMES", "ImageLimits", "Mime", "PreparedImage", "check_and_prepare"]


_PILLOW_FORMAT: Final[dict[str, str]] = {
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/webp": "WEBP",
}

_TOO_LARGE: Final = "image_too_large"
_INVALID: Final = "invalid_image"


def _decoded_length(encoded_length: int, data_b64: str) -> int:
    """Return how many bytes ``data_b64`` decodes to, from its length and padding only."""
    padding = 0
    if data_b64.endswith("=="):
        padding = 2
    elif data_b64.endswith("="):
        padding = 1
    return (encoded_length * 3) // 4 - padding


def _sniff(data: bytes) -> Mime | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _fit(width: int, height: int, max_side: int) -> tuple[int, int]:
    """Return the size that fits ``max_side`` on the longest side, keeping the aspect."""
    longest = max(width, height)
    if longest <= max_side:
        return width, height
    if width >= height:
        return max_side, max(1, round(height * max_side / width))
    return max(1, round(width * max_side / height)), max_side


def _target_mode(image: Image.Image, mime: Mime) -> str:
    has_alpha = image.mode in ("RGBA", "LA", "PA", "RGBa", "La") or (
        image.mode == "P" and "transparency" in image.info
    )
    if mime == "image/jpeg":
        return "L" if image.mode == "L" else "RGB"
    return "RGBA" if has_alpha else "RGB"


def _clean_pixels(image: Image.Image, mime: Mime, limits: ImageLimits) -> Image.Image:
    """Decode, orient, downscale and copy the pixels into a metadata-free image."""
    if mime == "image/jpeg":
        # Let libjpeg decode at a reduced scale when the image is far larger
        # than needed: less memory and time for the same result.
        image.draft(None, _fit(image.width, image.height, limits.max_side))
    image.load()
    # Orientation lives in EXIF, which is about to be dropped: apply it first.
    oriented = image
    try:
        if image.getexif().get(ExifTags.Base.Orientation, 1) != 1:
            oriented = ImageOps.exif_transpose(image)
    except Exception:
        # A malformed EXIF block only costs the orientation, not the screenshot.
        oriented = image
    mode = _target_mode(oriented, mime)
    pixels = oriented.convert(mode)
    size = _fit(pixels.width, pixels.height, limits.max_side)
    if size != pixels.size:
        # Pillow resamples RGBA premultiplied, so transparent pixels do not bleed.
        pixels = pixels.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
    # A fresh image from raw pixels carries no info dict: no EXIF, XMP, ICC
    # profile, text chunk or comment can reach the encoder.
    return Image.frombytes(mode, pixels.size, pixels.tobytes())


def _encode(image: Image.Image, mime: Mime, limits: ImageLimits) -> bytes:
    out = io.BytesIO()
    if mime == "image/png":
        image.save(out, format="PNG", compress_level=6)
    elif mime == "image/jpeg":
        image.save(out, format="JPEG", quality=limits.jpeg_quality, optimize=True)
    else:
        image.save(out, format="WEBP", quality=limits.webp_quality, method=4)
    return out.getvalue()


def check_and_prepare(
    mime: str, data_b64: str, limits: ImageLimits, *, field: str = "image"
) -> PreparedImage:
    """Check a screenshot and return it cleaned and downscaled.

    Args:
        mime: The declared mime type: ``image/png``, ``image/jpeg`` or ``image/webp``.
        data_b64: The image file, base64 (standard alphabet, padded, no whitespace).
        limits: Size and quality limits.
        field: Path of the image object in the frame, used in error ``fields``.

    Returns:
        The prepared image, same format as received.

    Raises:
        ImageError: ``image_too_large`` (bytes or pixels over the limits) or
            ``invalid_image`` (bad base64, unknown or mismatched format,
            corrupt or truncated file), with the offending field path.
    """
    data_field = f"{field}.data"
    mime_field = f"{field}.mime"
    if mime not in _PILLOW_FORMAT:
        raise ImageError(
            "image.mime must be image/png, image/jpeg or image/webp",
            code=_INVALID,
            fields=[mime_field],
        )
    declared: Mime = mime  # type: ignore[assignment]

    encoded_length = len(data_b64)
    if _decoded_length(encoded_length, data_b64) > limits.max_decoded_bytes:
        raise ImageError(
            f"image is larger than {limits.max_decoded_bytes} bytes",
            code=_TOO_LARGE,
            fields=[data_field],
        )
    try:
        data = binascii.a2b_base64(data_b64, strict_mode=True)
    except (binascii.Error, ValueError):
        raise ImageError(
            "image.data is not valid base64", code=_INVALID, fields=[data_field]
        ) from None
    if not data:
        raise ImageError("image.data is empty", code=_INVALID, fields=[data_field])

    actual = _sniff(data)
    if actual is None:
        raise ImageError(
            "image.data is not a PNG, JPEG or WebP file", code=_INVALID, fields=[data_field]
        )
    if actual != declared:
        raise ImageError(
            f"image.mime says {declared} but the data is {actual}",
            code=_INVALID,
            fields=[mime_field],
        )

    try:
        return _prepare(data, declared, limits, data_field)
    except ImageError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        # Pillow's own guard (a warning only becomes an exception under a
        # "warnings as errors" filter; either way it means too many pixels).
        raise ImageError(
            "image has too many pixels", code=_TOO_LARGE, fields=[data_field]
        ) from None
    except MemoryError:
        raise ImageError(
            "image is too large to decode", code=_TOO_LARGE, fields=[data_field]
        ) from None
    except Exception:
        # Any decoder fault (truncated file, bad CRC, corrupt stream, Pillow
        # bug) is the peer's bad image, never a crash.
        raise ImageError(
            "image.data is corrupt or truncated", code=_INVALID, fields=[data_field]
        ) from None


def _prepare(data: bytes, mime: Mime, limits: ImageLimits, data_field: str) -> PreparedImage:
    with Image.open(io.BytesIO(data), formats=[_PILLOW_FORMAT[mime]]) as image:
        # Only the header has been read so far.
        width, height = image.size
        if width <= 0 or height <= 0:
            raise ImageError("image has no pixels", code=_INVALID, fields=[data_field])
        if width * height > limits.max_pixels:
            raise ImageError(
                f"image has {width}x{height} pixels, more than {limits.max_pixels}",
                code=_TOO_LARGE,
                fields=[data_field],
            )
        clean = _clean_pixels(image, mime, limits)
    encoded = _encode(clean, mime, limits)
    return PreparedImage(
        mime=mime,
        data=encoded,
        width=clean.width,
        height=clean.height,
        original_width=width,
        original_height=height,
        original_bytes=len(data),
    )
