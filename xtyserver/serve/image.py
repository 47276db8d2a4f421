"""Screenshot checks: real PNG/JPEG/WebP, bounded size, no metadata, downscaled.

Pure: bytes in, bytes out, nothing written anywhere. The order of the checks is
the point (``protocol/v1.md`` "Images"): the cheapest refusal comes first and no
pixel is decoded before the header has shown the image is small enough.

1. The base64 length alone decides whether the decoded bytes would exceed
   ``max_decoded_bytes``; too long is refused before decoding anything.
2. Strict base64 decoding (no whitespace, no data-URL prefix, no junk): msgspec's
   decoder first (5x faster), ``binascii`` strict mode for whatever it refuses,
   so exactly the inputs ``binascii`` accepts are accepted.
3. Magic bytes must be PNG, JPEG or WebP and agree with the declared mime.
4. Pillow reads only the header; ``width * height`` is checked against
   ``max_pixels`` before any pixel is decoded (a decompression-bomb guard on top
   of Pillow's own, whose error is converted as well).
5. A JPEG already within ``max_side`` whose EXIF orientation is upright (the
   common screenshot) is not re-encoded: every pixel is entropy-decoded at 1/8
   scale (so a corrupt or truncated stream is still refused) and the file is
   rebuilt from its coding segments only: APP0-APP13, APP15 and COM segments
   (JFIF thumbnails, EXIF, XMP, ICC, IPTC, comments) and any bytes after EOI
   are dropped; only a 12-byte Adobe APP14 (colour transform flag) is kept.
6. Otherwise the pixels are decoded (a JPEG at the smallest DCT scale that is
   still at least the target size), oriented by the EXIF orientation tag,
   downscaled with Pillow's antialiasing bilinear (triangle) filter so the
   longest side is at most ``max_side``, copied into a fresh image (so no EXIF,
   XMP, ICC profile or text chunk survives) and re-encoded in the format they
   came in. Animated images keep their first frame only. A large RGB or
   greyscale image is resized in two horizontal bands on two threads (the same
   pixels as one resize), and Pillow keeps freed pixel buffers for the next
   screenshot instead of page-faulting fresh ones in.

Every failure is an :class:`~xtyserver.errors.ImageError` with code
``invalid_image`` or ``image_too_large``; no Pillow exception escapes.
"""

from __future__ import annotations

import binascii
import io
import re
from concurrent.futures import Executor, ThreadPoolExecutor, wait
from typing import Final

import anyio
import anyio.abc
import msgspec
from PIL import ExifTags, Image, ImageOps

from xtyserver.errors import ImageError
from xtyserver.protocol.images import SUPPORTED_MIMES, ImageLimits, Mime, PreparedImage

__all__ = [
    "SUPPORTED_MIMES",
    "BandHelper",
    "ImageLimits",
    "Mime",
    "PreparedImage",
    "check_and_prepare",
]


_PILLOW_FORMAT: Final[dict[str, str]] = {
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/webp": "WEBP",
}

_PIXEL_BLOCKS_KEPT: Final = 6
"""Pixel buffers Pillow keeps for reuse once freed (it keeps none by default).

A 1920x1080 screenshot goes through five images (decoded, two resized bands,
their join, the clean copy) of 3-8 MB each. Freed, they went back to the
system and the next screenshot page-faulted every page in again: 7-15 ms of
a 45 ms preparation on the benchmark machine (issue 12). Kept, they cost
about 30 MB that stay resident after the first such screenshot. A JPEG over
``max_side`` goes to libjpeg-turbo (:func:`_jpeg_scaled`) and one within it is
only checked at 1/8 scale, so a game sending JPEGs keeps no large block here
(``scripts/bench/rss.py``); PNG and WebP still do."""

Image.core.set_blocks_max(_PIXEL_BLOCKS_KEPT)  # type: ignore[attr-defined]

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


def _b64decode(data_b64: str) -> bytes | None:
    """Strict base64 decoding, or None when ``data_b64`` is not valid base64.

    msgspec decodes padded standard base64 about five times faster than
    ``binascii`` (0.7 ms vs 3.9 ms for a 1.6 MB screenshot) and accepts no
    more: no whitespace, no URL-safe alphabet, no missing or misplaced padding.
    Whatever it refuses goes to ``binascii.a2b_base64(strict_mode=True)``,
    which has the last word, so the inputs accepted are exactly the ones
    ``binascii`` accepts (it also takes a stray ``=`` after a full quad).
    """
    try:
        return msgspec.convert(data_b64, bytes)
    except msgspec.ValidationError:
        pass
    try:
        return binascii.a2b_base64(data_b64, strict_mode=True)
    except (binascii.Error, ValueError):
        return None


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


def _clean_pixels(
    image: Image.Image, mime: Mime, limits: ImageLimits, bands: Executor | None
) -> Image.Image:
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
    # convert() to the same mode is a full copy; the fresh image below is the copy that counts.
    pixels = oriented if oriented.mode == mode else oriented.convert(mode)
    # Pillow resamples RGBA premultiplied, so transparent pixels do not bleed.
    # Bilinear is Pillow's triangle filter widened by the scale (antialiased, not
    # point-sampled); for a screenshot it reads the same as Lanczos at half the
    # CPU (issue 12: 17 ms vs 36 ms for 1920x1080 -> 1568x882 here).
    size = _fit(pixels.width, pixels.height, limits.max_side)
    return _fresh_copy(pixels, size, bands)


_BAND_MIN_PIXELS: Final = 512 * 1024
"""Output size from which :func:`_fresh_copy` resizes in two bands (two threads)."""


def _fresh_copy(
    image: Image.Image, size: tuple[int, int], bands: Executor | None = None
) -> Image.Image:
    """The pixels of ``image`` at ``size`` (bilinear) in a fresh, metadata-free image.

    A fresh image made by ``Image.new`` with the pixels pasted in carries no
    info dict: no EXIF, XMP, ICC profile, text chunk or comment can reach the
    encoder. (paste() copies in C: 0.3 ms for 1568x882, where
    tobytes()/frombytes() took 1.5 ms.)

    With a band helper (``bands``, the server's :class:`BandHelper`), a large
    RGB or greyscale image is resized in two horizontal bands on two
    threads, pasted into the fresh image: Pillow releases the GIL while it
    resamples, so 1920x1080 -> 1568x882 takes 9 ms instead of 16.5 ms (issue
    12). Each band is resized from the full image with a ``box`` that is its
    share of the source rows; Pillow takes the filter's support from the rows
    outside the box as well, so the bands join without a seam and the result
    is the pixels of one resize (``tests/serve/test_image.py`` checks it). Images with
    an alpha channel (which Pillow resamples premultiplied, a conversion each
    band would repeat) and small ones are resized in one call.
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


class BandHelper:
    """The one helper thread that resizes top bands, owned by the server's task group.

    :meth:`run` is a task of the server: it makes the thread when the server
    starts and shuts it down (after the band it may be resizing) when the
    server stops, so no thread outlives the server. A pool of one rather than
    a thread per call: ``Thread.start()`` waits until the new thread holds the
    GIL, up to a switch interval (5 ms) on a busy event loop. Calls from
    several connections queue their bands; a band never waits on anything, so
    the queue always drains. Before :meth:`run` and after it ends,
    :attr:`executor` is None and screenshots are resized in one call.
    """

    def __init__(self) -> None:
        self.executor: ThreadPoolExecutor | None = None

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Hold the helper thread until cancelled."""
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="xty-image-band")
        self.executor = pool
        try:
            task_status.started()
            await anyio.sleep_forever()
        finally:
            self.executor = None
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(pool.shutdown)


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
        # No optimize=True: its second Huffman pass costs 6 ms on a 1568x882 frame
        # for about 8 % fewer bytes, which loopback or a provider upload repays less.
        image.save(out, format="JPEG", quality=limits.jpeg_quality)
    else:
        image.save(out, format="WEBP", quality=limits.webp_quality, method=4)
    return out.getvalue()


def check_and_prepare(
    mime: str,
    data_b64: str,
    limits: ImageLimits,
    *,
    field: str = "image",
    bands: Executor | None = None,
) -> PreparedImage:
    """Check a screenshot and return it cleaned and downscaled.

    Args:
        mime: The declared mime type: ``image/png``, ``image/jpeg`` or ``image/webp``.
        data_b64: The image file, base64 (standard alphabet, padded, no whitespace).
        limits: Size and quality limits.
        field: Path of the image object in the frame, used in error ``fields``.
        bands: The server's band helper thread (:class:`BandHelper`); None:
            every resize in one call on this thread.

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
    data = _b64decode(data_b64)
    if data is None:
        raise ImageError("image.data is not valid base64", code=_INVALID, fields=[data_field])
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
        return _prepare(data, declared, limits, data_field, bands)
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


def _prepare(
    data: bytes, mime: Mime, limits: ImageLimits, data_field: str, bands: Executor | None
) -> PreparedImage:
    if mime == "image/webp":
        # Image.open registers BMP, GIF, JPEG, PPM and PNG itself; for another
        # format it first imports all ~45 plugins: 5 MiB kept (issue 22, memory).
        from PIL import WebPImagePlugin  # noqa: F401
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
        if mime == "image/jpeg":
            scaled = _jpeg_scaled(image, data, limits)
            if scaled is not None:
                return msgspec.structs.replace(scaled, original_bytes=len(data))
        clean = _clean_pixels(image, mime, limits, bands)
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


# ---------------------------------------------------------------------------
# A JPEG over limits: libjpeg-turbo decodes straight to an n/8 scale


def jpeg_scale(width: int, height: int, max_side: int) -> int | None:
    """The largest n in 1..8 such that an n/8 decode fits ``max_side``; None when none does.

    libjpeg-turbo scales inside the inverse DCT in steps of 1/8 and rounds the
    output size up (``ceil(side * n / 8)``), so a 1920x1080 screenshot with the
    default 1568 limit decodes at 6/8 to 1440x810 with no resample at all.
    """
    longest = max(width, height)
    for n in range(8, 0, -1):
        if -(-longest * n // 8) <= max_side:
            return n
    return None


def _jpeg_scaled(image: Image.Image, data: bytes, limits: ImageLimits) -> PreparedImage | None:
    """Decode at the largest DCT scale that fits and re-encode, or None to use Pillow.

    Used for upright RGB and greyscale JPEGs whose n/8 decode is not smaller
    than half the limit (so the picture keeps the detail a resample would).
    The pixels are decoded into a fresh buffer and encoded from it: no segment
    of the original (EXIF, XMP, ICC, comments) can reach the output. A corrupt
    stream fails the decode (strict mode) and is refused like any other.
    """
    if image.mode not in ("RGB", "L"):
        return None
    try:
        if image.getexif().get(ExifTags.Base.Orientation, 1) != 1:
            return None
    except Exception:
        return None
    n = jpeg_scale(image.width, image.height, limits.max_side)
    if n is None or max(image.width, image.height) * n / 8 < limits.max_side / 2:
        return None  # far too large: Pillow's draft and a resample keep more detail
    import simplejpeg  # only a server that gets large JPEGs loads it (and numpy)

    colorspace = "RGB" if image.mode == "RGB" else "GRAY"
    width = -(-image.width * n // 8)
    height = -(-image.height * n // 8)
    pixels = simplejpeg.decode_jpeg(
        data, colorspace=colorspace, min_width=width, min_height=height, strict=True
    )
    out_height, out_width = int(pixels.shape[0]), int(pixels.shape[1])
    if max(out_width, out_height) > limits.max_side:
        return None  # a libjpeg-turbo that rounds differently: the safe path
    encoded = simplejpeg.encode_jpeg(
        pixels,
        quality=limits.jpeg_quality,
        colorspace=colorspace,
        colorsubsampling="420" if colorspace == "RGB" else "Gray",
    )
    return PreparedImage(
        mime="image/jpeg",
        data=bytes(encoded),
        width=out_width,
        height=out_height,
        original_width=image.width,
        original_height=image.height,
        original_bytes=len(data),
    )


# ---------------------------------------------------------------------------
# A JPEG within limits: keep its coding segments, drop everything else

_SOI, _EOI, _SOS, _APP14, _COM = 0xD8, 0xD9, 0xDA, 0xEE, 0xFE
_ENTROPY_END: Final = re.compile(rb"\xff[^\x00\xd0-\xd7\xff]")
"""A marker after entropy-coded data: 0xFF not followed by a stuffed 0x00, a
restart marker or a fill byte."""


def _is_metadata(marker: int, payload: bytes) -> bool:
    """APPn and COM segments carry metadata; a 12-byte Adobe APP14 only colour flags."""
    if marker == _APP14:
        return not (len(payload) == 12 and payload.startswith(b"Adobe"))
    return 0xE0 <= marker <= 0xEF or marker == _COM


def strip_jpeg(data: bytes) -> bytes | None:
    """Return the JPEG file with only its coding segments, or None if it is not well formed.

    Keeps SOI, tables, frame and scan headers, entropy-coded data and EOI; drops
    APPn (but a 12-byte Adobe APP14), COM, and anything after EOI. ``None`` for
    a file whose marker structure is broken (the caller decodes it instead).
    """
    if not data.startswith(b"\xff\xd8"):
        return None
    out = [b"\xff\xd8"]
    pos, end = 2, len(data)
    while pos < end:
        if data[pos] != 0xFF:
            return None
        while pos < end and data[pos] == 0xFF:  # fill bytes before a marker
            pos += 1
        if pos >= end:
            return None
        marker = data[pos]
        pos += 1
        if marker == _EOI:
            out.append(b"\xff\xd9")
            return b"".join(out)
        if marker == _SOI or 0xD0 <= marker <= 0xD7 or marker in (0x00, 0x01):
            # A stray SOI, restart or TEM outside entropy data: not a file we rebuild.
            return None
        if pos + 2 > end:
            return None
        length = int.from_bytes(data[pos : pos + 2], "big")
        if length < 2 or pos + length > end:
            return None
        segment_end = pos + length
        if not _is_metadata(marker, data[pos + 2 : segment_end]):
            out.append(bytes((0xFF, marker)) + data[pos:segment_end])
        pos = segment_end
        if marker == _SOS:
            found = _ENTROPY_END.search(data, pos)
            if found is None:
                return None
            out.append(data[pos : found.start()])
            pos = found.start()
    return None


def _jpeg_as_is(image: Image.Image, data: bytes) -> bytes | None:
    """The JPEG without metadata and not re-encoded, or None if it must be re-encoded.

    Needs an upright EXIF orientation, a mode a model reads (RGB or L) and a
    marker structure :func:`strip_jpeg` can rebuild; every pixel is still
    entropy-decoded (at 1/8 scale) so a corrupt stream is refused as before.
    """
    if image.mode not in ("RGB", "L"):
        return None
    try:
        if image.getexif().get(ExifTags.Base.Orientation, 1) != 1:
            return None
    except Exception:
        return None  # a malformed EXIF block: let the decoding path decide
    stripped = strip_jpeg(data)
    if stripped is None:
        return None
    # Decode what will be sent (not the original), so the output is what was checked.
    with Image.open(io.BytesIO(stripped), formats=["JPEG"]) as check:
        if check.size != image.size or check.mode != image.mode:
            return None
        check.draft(check.mode, (max(1, check.width // 8), max(1, check.height // 8)))
        check.load()
    return stripped
