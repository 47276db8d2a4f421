"""Screenshots the Pillow way: PNG, WebP, and the JPEGs :mod:`~xtyserver.serve.jpeg` declines.

A shell (``protocol/v1.md`` "Images"): steps 4-6 of :mod:`xtyserver.serve.image`,
imported on the first image that needs it.
"""

from __future__ import annotations

import io
from concurrent.futures import Executor, wait
from typing import Final

from PIL import ExifTags, Image, ImageOps

from xtyserver.errors import ImageError
from xtyserver.protocol.images import TOO_LARGE, ImageLimits, Mime, PreparedImage, check_pixels
from xtyserver.serve import jpeg

__all__ = ["prepare"]

_PILLOW_FORMAT: Final[dict[str, str]] = {
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/webp": "WEBP",
}

_PIXEL_BLOCKS_KEPT: Final = 6
"""Pixel buffers Pillow keeps for reuse once freed (it keeps none by default).

A 1920x1080 screenshot goes through five images of 3-8 MB each; freed, the
next screenshot page-faulted them in again, a large share of its preparation
(``scripts/bench/image.py``). Kept, they cost about 30 MB resident."""

Image.core.set_blocks_max(_PIXEL_BLOCKS_KEPT)  # type: ignore[attr-defined]


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


def _clean_pixels(
    image: Image.Image,
    mime: Mime,
    limits: ImageLimits,
    bands: Executor | None,
    size: tuple[int, int] | None = None,
) -> Image.Image:
    """Decode, orient, downscale and copy the pixels into a metadata-free image.

    ``size``: the upright picture's size to bring it to (by default the one
    that fits ``max_side``).
    """
    if mime == "image/jpeg":
        # libjpeg decodes at a reduced scale when far larger than needed.
        image.draft(None, size or _fit(image.width, image.height, limits.max_side))
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
    # convert() to the same mode is a full copy; the fresh image below is the copy that counts.
    pixels = oriented if oriented.mode == mode else oriented.convert(mode)
    # Bilinear (antialiased) reads the same as Lanczos at half the CPU (scripts/bench/image.py).
    size = size or _fit(pixels.width, pixels.height, limits.max_side)
    return _fresh_copy(pixels, size, bands)


_BAND_MIN_PIXELS: Final = 512 * 1024
"""Output size from which :func:`_fresh_copy` resizes in two bands (two threads)."""


def _fresh_copy(
    image: Image.Image, size: tuple[int, int], bands: Executor | None = None
) -> Image.Image:
    """The pixels of ``image`` at ``size`` (bilinear) in a fresh, metadata-free image.

    A fresh ``Image.new`` with the pixels pasted in carries no info dict, so no
    metadata can reach the encoder. With ``bands``, a large RGB or grey image is
    resized in two horizontal bands on two threads (Pillow releases the GIL:
    9 ms instead of 16.5 ms for 1920x1080); each band's ``box`` takes the filter's
    support from the rows beyond it, so the result is the pixels of one resize.
    """
    width, height = size
    large = width * height >= _BAND_MIN_PIXELS
    if bands is not None and image.size != size and image.mode in ("RGB", "L") and large:
        banded = _banded_resize(image, size, bands)
        if banded is not None:
            return banded
    if image.size != size:
        image = image.resize(size, Image.Resampling.BILINEAR)
    clean = Image.new(image.mode, size)
    clean.paste(image)
    return clean


def _banded_resize(
    image: Image.Image, size: tuple[int, int], bands: Executor
) -> Image.Image | None:
    """``image.resize(size, BILINEAR)`` as two bands, the top one on ``bands``.

    None when ``bands`` no longer takes work (the server is stopping).
    """
    width, height = size
    split = height // 2
    cut = split * image.height / height  # the source row where the bottom band starts
    top_box = (0.0, 0.0, float(image.width), cut)
    bottom_box = (0.0, cut, float(image.width), float(image.height))
    try:
        top = bands.submit(image.resize, (width, split), Image.Resampling.BILINEAR, top_box)
    except RuntimeError:  # shut down
        return None
    try:
        bottom = image.resize((width, height - split), Image.Resampling.BILINEAR, bottom_box)
    finally:
        # Wait for the top band even when the bottom one failed: no band outlives the call.
        wait([top])
    upper = top.result()  # re-raises the helper's exception here
    out = Image.new(image.mode, size)
    out.paste(upper, (0, 0))
    out.paste(bottom, (0, split))
    return out


def _encode(image: Image.Image, mime: Mime, limits: ImageLimits) -> bytes:
    out = io.BytesIO()
    if mime == "image/png":
        image.save(out, format="PNG", compress_level=6)
    elif mime == "image/jpeg":
        # No optimize=True: 6 ms more per 1568x882 frame for about 8 % fewer bytes.
        image.save(out, format="JPEG", quality=limits.jpeg_quality)
    else:
        image.save(out, format="WEBP", quality=limits.webp_quality, method=4)
    return out.getvalue()


def prepare(
    data: bytes, mime: Mime, limits: ImageLimits, data_field: str, bands: Executor | None
) -> PreparedImage:
    """Check, decode, orient, downscale and re-encode ``data`` with Pillow.

    Raises:
        ImageError: No pixels, too many (Pillow's own guard included), or what
            :func:`xtyserver.serve.image.check_and_prepare` turns into one.
    """
    try:
        return _prepare(data, mime, limits, data_field, bands)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        # Pillow's own guard (the warning raises only under "warnings as errors").
        raise ImageError("image has too many pixels", code=TOO_LARGE, fields=[data_field]) from None


def _prepare(
    data: bytes, mime: Mime, limits: ImageLimits, data_field: str, bands: Executor | None
) -> PreparedImage:
    if mime == "image/webp":
        # Else Image.open imports all ~45 plugins for WebP, which stay resident.
        from PIL import WebPImagePlugin  # noqa: F401
    with Image.open(io.BytesIO(data), formats=[_PILLOW_FORMAT[mime]]) as image:
        # Only the header has been read so far.
        width, height = image.size
        check_pixels(width, height, limits, data_field)
        if mime == "image/jpeg" and max(width, height) <= limits.max_side:
            stripped = _jpeg_as_is(image, data)
            if stripped is not None:
                return PreparedImage(
                    mime=mime,
                    data=stripped,
                    width=width,
                    height=height,
                    original_width=width,
                    original_height=height,
                    original_bytes=len(data),
                )
        size = None
        if mime == "image/jpeg" and image.mode in ("RGB", "L") and _upright(image):
            prepared = jpeg.scaled(data, width, height, limits)
            if prepared is not None:
                return prepared
            # Without simplejpeg: the size its n/8 decode gives (the same picture).
            size = jpeg.scaled_size(width, height, limits.max_side)
        clean = _clean_pixels(image, mime, limits, bands, size)
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


def _jpeg_as_is(image: Image.Image, data: bytes) -> bytes | None:
    """The JPEG without metadata and not re-encoded, or None if it must be re-encoded.

    Needs an upright orientation, RGB or L, and a structure :func:`strip_jpeg`
    rebuilds; every pixel is still entropy-decoded (at 1/8 scale).
    """
    if image.mode not in ("RGB", "L") or not _upright(image):
        return None
    stripped = jpeg.strip_jpeg(data)
    if stripped is None:
        return None
    # Decode what will be sent (not the original), so the output is what was checked.
    with Image.open(io.BytesIO(stripped), formats=["JPEG"]) as check:
        if check.size != image.size or check.mode != image.mode:
            return None
        check.draft(check.mode, (max(1, check.width // 8), max(1, check.height // 8)))
        check.load()
    return stripped


def _upright(image: Image.Image) -> bool:
    """Pillow's verdict: the EXIF (or XMP) orientation is 1; a malformed block is not."""
    try:
        return bool(image.getexif().get(ExifTags.Base.Orientation, 1) == 1)
    except Exception:
        return False  # a malformed EXIF block: let the decoding path decide
