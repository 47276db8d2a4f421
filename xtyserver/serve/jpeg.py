"""JPEG screenshots without Pillow: segments, the frame header, orientation, scaled decode.

A shell (``protocol/v1.md`` "Images"). A game's screenshot is most often a JPEG
larger than ``max_side``: read here from its own marker segments, libjpeg-turbo
(``simplejpeg``, installed only beside the in-process embedding model's numpy)
decodes it straight to an n/8 scale, without Pillow. Without ``simplejpeg``, or
for what this module cannot vouch for (another orientation, CMYK, XMP, a broken
segment), None sends it the Pillow way (:mod:`xtyserver.serve.pillow_image`).
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Iterator
from types import ModuleType
from typing import Final, Literal

from xtyserver.protocol.images import ImageLimits, PreparedImage

__all__ = ["frame_size", "jpeg_scale", "scaled", "scaled_size", "strip_jpeg", "upright"]

_SOI, _EOI, _SOS, _APP1, _APP14, _COM = 0xD8, 0xD9, 0xDA, 0xE1, 0xEE, 0xFE
_ENTROPY_END: Final = re.compile(rb"\xff[^\x00\xd0-\xd7\xff]")
"""A marker after entropy-coded data: 0xFF not followed by a stuffed 0x00, a
restart marker or a fill byte."""
_SOF: Final = frozenset(
    (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF)
)
"""Start-of-frame markers (0xC4 DHT, 0xC8 JPG and 0xCC DAC are not frames)."""
_EXIF: Final = b"Exif\x00\x00"
_XMP: Final = b"http://ns.adobe.com/xap/1.0/\x00"
_ORIENTATION: Final = 0x0112


class _Malformed(Exception):
    """The marker structure is broken (never escapes this module)."""


def _segments(data: bytes, *, scans: bool = True) -> Iterator[tuple[int, int, int, int]]:
    """``(marker, payload start, segment end, next marker)`` of each segment, then EOI's.

    A scan header's next marker is past its entropy-coded data; with
    ``scans=False`` the first scan header ends the walk. Raises :class:`_Malformed`.
    """
    if not data.startswith(b"\xff\xd8"):
        raise _Malformed
    pos, end = 2, len(data)
    while pos < end:
        if data[pos] != 0xFF:
            raise _Malformed
        while pos < end and data[pos] == 0xFF:  # fill bytes before a marker
            pos += 1
        if pos >= end:
            raise _Malformed
        marker = data[pos]
        pos += 1
        if marker == _EOI:
            yield marker, pos, pos, pos
            return
        if marker == _SOI or 0xD0 <= marker <= 0xD7 or marker in (0x00, 0x01):
            # A stray SOI, restart or TEM outside entropy data: not a file we rebuild.
            raise _Malformed
        if pos + 2 > end:
            raise _Malformed
        length = int.from_bytes(data[pos : pos + 2], "big")
        if length < 2 or pos + length > end:
            raise _Malformed
        start, pos = pos + 2, pos + length
        stop = pos
        if marker == _SOS and not scans:
            yield marker, start, stop, stop
            return
        if marker == _SOS:
            found = _ENTROPY_END.search(data, pos)
            if found is None:
                raise _Malformed
            pos = found.start()
        yield marker, start, stop, pos
    raise _Malformed  # no EOI


def _is_metadata(marker: int, payload: bytes) -> bool:
    """APPn and COM segments carry metadata; a 12-byte Adobe APP14 only colour flags."""
    if marker == _APP14:
        return not (len(payload) == 12 and payload.startswith(b"Adobe"))
    return 0xE0 <= marker <= 0xEF or marker == _COM


def strip_jpeg(data: bytes) -> bytes | None:
    """Return the JPEG file with only its coding segments, or None if it is not well formed.

    Keeps SOI, tables, frame and scan headers, entropy-coded data and EOI; drops
    APPn (but a 12-byte Adobe APP14), COM, and anything after EOI.
    """
    out = [b"\xff\xd8"]
    try:
        for marker, start, stop, after in _segments(data):
            if marker == _EOI:
                out.append(b"\xff\xd9")
                return b"".join(out)
            if not _is_metadata(marker, data[start:stop]):
                out.append(bytes((0xFF, marker)) + data[start - 2 : stop])
            if after > stop:  # a scan's entropy-coded data
                out.append(data[stop:after])
    except _Malformed:
        return None
    return None  # pragma: no cover - _segments ends in EOI or raises


def _headers(data: bytes) -> list[tuple[int, bytes]] | None:
    """The segments before the first scan, as ``(marker, payload)``; None when broken."""
    found: list[tuple[int, bytes]] = []
    try:
        for marker, start, stop, _ in _segments(data, scans=False):
            if marker in (_SOS, _EOI):
                return found
            found.append((marker, data[start:stop]))
    except _Malformed:
        return None
    return None  # pragma: no cover


def frame_size(data: bytes) -> tuple[int, int, int] | None:
    """``(width, height, components)`` from the one frame header, or None.

    None when the header segments are broken, there is no frame header or more
    than one before the first scan, or the height is left to a DNL marker (0).
    """
    headers = _headers(data)
    if headers is None:
        return None
    frames = [payload for marker, payload in headers if marker in _SOF]
    if len(frames) != 1 or len(frames[0]) < 6:
        return None
    sof = frames[0]
    height = int.from_bytes(sof[1:3], "big")
    width = int.from_bytes(sof[3:5], "big")
    if width == 0 or height == 0:
        return None
    return width, height, sof[5]


def upright(data: bytes) -> bool:
    """True only when the picture certainly needs no turning: no orientation but 1.

    No XMP packet (Pillow reads ``tiff:Orientation`` there too), and no EXIF or
    one whose first IFD is well formed with no orientation tag or a SHORT 1.
    """
    headers = _headers(data)
    if headers is None:
        return False
    exif = [p for m, p in headers if m == _APP1 and p.startswith(_EXIF)]
    if any(m == _APP1 and p.startswith(_XMP) for m, p in headers) or len(exif) > 1:
        return False
    return not exif or _exif_orientation(exif[0][len(_EXIF) :]) == 1


def _exif_orientation(tiff: bytes) -> int | None:
    """The orientation in the first IFD of a TIFF block (1 when absent); None when unsure."""
    order: Literal["little", "big"]
    if tiff[:4] == b"II*\x00":
        order = "little"
    elif tiff[:4] == b"MM\x00*":
        order = "big"
    else:
        return None
    ifd = int.from_bytes(tiff[4:8], order)
    if ifd < 8 or ifd + 2 > len(tiff):
        return None
    count = int.from_bytes(tiff[ifd : ifd + 2], order)
    entries = ifd + 2
    if entries + 12 * count > len(tiff):
        return None
    found: list[int] = []
    for i in range(entries, entries + 12 * count, 12):
        if int.from_bytes(tiff[i : i + 2], order) != _ORIENTATION:
            continue
        kind = int.from_bytes(tiff[i + 2 : i + 4], order)
        values = int.from_bytes(tiff[i + 4 : i + 8], order)
        if kind != 3 or values != 1:  # not one SHORT: Pillow decides
            return None
        found.append(int.from_bytes(tiff[i + 8 : i + 10], order))
    if len(found) > 1:
        return None
    return found[0] if found else 1


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


def scaled_size(width: int, height: int, max_side: int) -> tuple[int, int] | None:
    """The size of the largest n/8 decode that fits ``max_side``; None when there is none.

    None as well when ``width`` x ``height`` already fits, or when that decode
    would be smaller than half the limit (a resample to the limit then keeps
    the detail a DCT scale would lose).
    """
    if max(width, height) <= max_side:
        return None
    n = jpeg_scale(width, height, max_side)
    if n is None or max(width, height) * n / 8 < max_side / 2:
        return None
    return -(-width * n // 8), -(-height * n // 8)


@functools.cache
def _simplejpeg() -> ModuleType | None:
    """``simplejpeg`` (and numpy) on the first large JPEG; None where it is not installed."""
    try:
        return importlib.import_module("simplejpeg")
    except ImportError:
        return None


def scaled(data: bytes, width: int, height: int, limits: ImageLimits) -> PreparedImage | None:
    """Decode at the largest DCT scale that fits and re-encode, or None to use Pillow.

    For an upright YCbCr, RGB or grey JPEG with a :func:`scaled_size`. Encoded
    from fresh pixels, no segment of the original reaches the output; a corrupt
    stream raises ``ValueError`` (strict mode), refused like any bad image.
    """
    size = scaled_size(width, height, limits.max_side)
    simplejpeg = _simplejpeg()
    if size is None or simplejpeg is None:
        return None
    _, _, colours, _ = simplejpeg.decode_jpeg_header(data)
    if colours not in ("YCbCr", "RGB", "Gray"):
        return None
    colorspace = "GRAY" if colours == "Gray" else "RGB"
    pixels = simplejpeg.decode_jpeg(
        data, colorspace=colorspace, min_width=size[0], min_height=size[1], strict=True
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
        original_width=width,
        original_height=height,
        original_bytes=len(data),
    )
