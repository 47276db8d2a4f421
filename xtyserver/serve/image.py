"""Screenshot checks: real PNG/JPEG/WebP, bounded size, no metadata, downscaled.

Pure: bytes in, bytes out. The order of the checks is the point (``protocol/v1.md``
"Images"): the cheapest refusal comes first and no pixel is decoded before the
header has shown the image is small enough.

1. The base64 length alone decides whether the decoded bytes exceed ``max_decoded_bytes``.
2. Strict base64: exactly the inputs ``binascii`` strict mode accepts.
3. Magic bytes must be PNG, JPEG or WebP and agree with the declared mime.
4. ``width * height`` is checked against ``max_pixels`` from the header alone: a
   JPEG's own frame header (:mod:`~xtyserver.serve.jpeg`), else Pillow's.
5. An upright JPEG within ``max_side`` is entropy-decoded at 1/8 scale (a corrupt
   stream is refused) and sent rebuilt from its coding segments only.
6. An upright JPEG over ``max_side`` is decoded straight to the largest n/8 scale
   that fits; anything else is decoded, oriented, downscaled, copied into a fresh
   image (no EXIF, XMP, ICC or text survives) and re-encoded in its own format
   (:mod:`~xtyserver.serve.pillow_image`). Animated images keep their first frame.

Every failure is an :class:`~xtyserver.errors.ImageError` with code
``invalid_image`` or ``image_too_large``; no Pillow exception escapes.
"""

from __future__ import annotations

import binascii
from concurrent.futures import Executor, ThreadPoolExecutor

import anyio
import anyio.abc
import msgspec

from xtyserver.errors import ImageError
from xtyserver.protocol.images import (
    INVALID,
    SUPPORTED_MIMES,
    TOO_LARGE,
    ImageLimits,
    Mime,
    PreparedImage,
    check_pixels,
)
from xtyserver.serve import jpeg

__all__ = [
    "SUPPORTED_MIMES",
    "BandHelper",
    "ImageLimits",
    "Mime",
    "PreparedImage",
    "check_and_prepare",
]

_MIMES: frozenset[str] = frozenset(SUPPORTED_MIMES)


def _decoded_length(data_b64: str) -> int:
    """Return how many bytes ``data_b64`` decodes to, from its length and padding only."""
    padding = 2 if data_b64.endswith("==") else int(data_b64.endswith("="))
    return (len(data_b64) * 3) // 4 - padding


def _b64decode(data_b64: str) -> bytes | None:
    """Strict base64 decoding, or None when ``data_b64`` is not valid base64.

    msgspec is five times faster than ``binascii`` and accepts no more; whatever
    it refuses goes to ``binascii.a2b_base64(strict_mode=True)``, which has the
    last word (it also takes a stray ``=`` after a full quad).
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


class BandHelper:
    """The one helper thread that resizes top bands, owned by the server's task group.

    A pool of one rather than a thread per call: ``Thread.start()`` waits up to
    a switch interval (5 ms) for the GIL on a busy event loop. A band never
    waits on anything, so the queue always drains. Outside :meth:`run`,
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

    def refused(message: str, code: str = INVALID, at: str = data_field) -> ImageError:
        return ImageError(message, code=code, fields=[at])

    if mime not in _MIMES:
        raise refused("image.mime must be image/png, image/jpeg or image/webp", at=mime_field)
    declared: Mime = mime  # type: ignore[assignment]

    if _decoded_length(data_b64) > limits.max_decoded_bytes:
        raise refused(f"image is larger than {limits.max_decoded_bytes} bytes", TOO_LARGE)
    data = _b64decode(data_b64)
    if data is None:
        raise refused("image.data is not valid base64")
    if not data:
        raise refused("image.data is empty")

    actual = _sniff(data)
    if actual is None:
        raise refused("image.data is not a PNG, JPEG or WebP file")
    if actual != declared:
        raise refused(f"image.mime says {declared} but the data is {actual}", at=mime_field)

    try:
        return _prepare(data, declared, limits, data_field, bands)
    except ImageError:
        raise
    except MemoryError:
        raise refused("image is too large to decode", TOO_LARGE) from None
    except Exception:
        # Any decoder fault (a Pillow bug too) is the peer's bad image, never a crash.
        raise refused("image.data is corrupt or truncated") from None


def _prepare(
    data: bytes, mime: Mime, limits: ImageLimits, data_field: str, bands: Executor | None
) -> PreparedImage:
    if mime == "image/jpeg" and (frame := jpeg.frame_size(data)) is not None:
        width, height, components = frame
        check_pixels(width, height, limits, data_field)
        if max(width, height) > limits.max_side and components in (1, 3) and jpeg.upright(data):
            prepared = jpeg.scaled(data, width, height, limits)
            if prepared is not None:
                return prepared
    # Everything else, and whatever the JPEG reader above declined: Pillow decides.
    from xtyserver.serve import pillow_image

    return pillow_image.prepare(data, mime, limits, data_field, bands)
