"""atheris harness over the screenshot checks (v1.md "Images").

Contract checked for every input (``xtyserver.serve.image.check_and_prepare``): it
either returns a :class:`PreparedImage` within the limits, or raises an
:class:`~xtyserver.errors.ImageError` with code ``invalid_image`` or
``image_too_large`` naming ``image.data`` or ``image.mime``. Anything else
escaping (a Pillow exception, MemoryError, an assertion below) is a crash.
"Within the limits" means: the declared mime, real magic bytes of that format,
``1 <= width, height <= max_side``, never upscaled (EXIF orientation may swap
the sides), the original within ``max_pixels`` and ``max_decoded_bytes``, and an
output that Pillow reopens at the stated size with no EXIF, XMP, ICC profile,
comment or PNG text left.

Input format: the first byte is a mode, the rest the payload.
Mode bits 0-1 pick the declared mime (png, jpeg, webp, or the unsupported
``image/gif``). Mode bit 2 clear: the payload is the image file and is
base64-encoded properly. Bit 2 set: the payload, read as Latin-1, *is* the
``data`` string (bad base64, whitespace, data-URL prefixes...). Run it (see
fuzz/README.md)::

    python fuzz/fuzz_image.py fuzz/findings/corpus/image fuzz/corpus/image
"""

from __future__ import annotations

import base64
import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PIL import Image

from xtyserver.errors import ImageError
from xtyserver.serve.image import ImageLimits, PreparedImage, check_and_prepare

MIMES = ("image/png", "image/jpeg", "image/webp", "image/gif")
_MAGIC = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/webp": (b"RIFF",),
}
_FORMAT = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WEBP"}
_METADATA_KEYS = ("exif", "icc_profile", "xmp", "XML:com.adobe.xmp", "comment", "Comment")

LIMITS = ImageLimits(max_decoded_bytes=512 * 1024, max_pixels=2_000_000, max_side=320)
"""Smaller than the server's defaults so each execution stays fast; same code paths."""

RAW_BASE64 = 0b100


def split_input(data: bytes) -> tuple[str, str]:
    """Turn a fuzzer input into ``(mime, data_b64)`` (format in the module docstring)."""
    if not data:
        return MIMES[0], ""
    mode, payload = data[0], data[1:]
    mime = MIMES[mode & 0b11]
    if mode & RAW_BASE64:
        return mime, payload.decode("latin-1")
    return mime, base64.b64encode(payload).decode("ascii")


def seed_of(mime: str, file: bytes) -> bytes:
    """The fuzzer input that declares ``mime`` and carries ``file`` (for corpus seeds)."""
    return bytes([MIMES.index(mime)]) + file


def _check_prepared(result: PreparedImage, mime: str, limits: ImageLimits) -> None:
    assert result.mime == mime, (result.mime, mime)
    assert any(result.data.startswith(m) for m in _MAGIC[mime]), result.data[:12]
    assert 1 <= result.width <= limits.max_side, result.width
    assert 1 <= result.height <= limits.max_side, result.height
    # EXIF orientation may swap the sides; either way nothing is upscaled.
    sides = sorted((result.width, result.height))
    original_sides = sorted((result.original_width, result.original_height))
    assert sides[0] <= original_sides[0] and sides[1] <= original_sides[1], "upscaled"
    assert result.original_width * result.original_height <= limits.max_pixels
    assert result.original_bytes <= limits.max_decoded_bytes
    with Image.open(io.BytesIO(result.data), formats=[_FORMAT[mime]]) as out:
        assert out.size == (result.width, result.height), (out.size, result.width, result.height)
        out.load()
        leaked = [key for key in _METADATA_KEYS if key in out.info]
        assert not leaked, f"metadata survives: {leaked}"
        assert len(out.getexif()) == 0, "EXIF survives"
        assert not getattr(out, "text", None), "PNG text survives"


def test_one_input(data: bytes) -> None:
    """Check the image contract on one input (the libFuzzer entry point)."""
    mime, data_b64 = split_input(data)
    try:
        result = check_and_prepare(mime, data_b64, LIMITS)
    except ImageError as exc:
        assert exc.code in ("invalid_image", "image_too_large"), exc.code
        assert exc.fields and set(exc.fields) <= {"image.data", "image.mime"}, exc.fields
        assert isinstance(exc.message, str) and exc.message
        return
    assert mime != "image/gif", "unsupported mime accepted"
    _check_prepared(result, mime, LIMITS)


def main() -> None:
    """Run under libFuzzer; arguments are libFuzzer's (corpus dirs, -max_total_time=...)."""
    import atheris

    atheris.instrument_all()
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
