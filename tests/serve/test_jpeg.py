"""JPEG screenshots without Pillow (xtyserver.serve.jpeg): frame header, orientation, scaled decode.

Pillow is the oracle: where this module vouches for a picture (its size, that
it is upright), Pillow must agree; where it does not, the Pillow way decides.
"""

from __future__ import annotations

import base64
import io
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import ExifTags, Image, ImageChops, ImageStat

from tests.property_budget import examples
from xtyserver.serve import jpeg
from xtyserver.serve.image import ImageLimits, check_and_prepare

ROOT = Path(__file__).resolve().parents[2]
XMP_ROTATED = (
    b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/'
    b'22-rdf-syntax-ns#"><rdf:Description xmlns:tiff="http://ns.adobe.com/tiff/1.0/" '
    b'tiff:Orientation="6"/></rdf:RDF></x:xmpmeta>'
)


def _jpeg(size: tuple[int, int] = (64, 48), mode: str = "RGB", **params: object) -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, "white" if mode != "CMYK" else (0, 0, 0, 0)).save(out, "JPEG", **params)
    return out.getvalue()


def _exif(orientation: int | None, order: str = "<") -> bytes:
    exif = Image.Exif()
    exif._endian = order  # the byte order Pillow writes ("<" II, ">" MM)
    if orientation is not None:
        exif[ExifTags.Base.Orientation] = orientation
    exif[ExifTags.Base.Software] = "game"
    return exif.tobytes()


def _pillow_upright(data: bytes) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Pillow's notes on the damaged blocks below
            with Image.open(io.BytesIO(data)) as image:
                return bool(image.getexif().get(ExifTags.Base.Orientation, 1) == 1)
    except Exception:
        return False


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("orientation", [None, 1, 2, 3, 4, 5, 6, 7, 8])
def test_upright_agrees_with_pillow_for_every_orientation(
    orientation: int | None, order: str
) -> None:
    data = _jpeg(exif=_exif(orientation, order))
    assert jpeg.upright(data) == _pillow_upright(data) == (orientation in (None, 1))


def test_no_exif_is_upright_and_xmp_or_a_second_exif_defer_to_pillow() -> None:
    assert jpeg.upright(_jpeg())
    # Pillow also reads tiff:Orientation from XMP: this module does not try.
    with_xmp = _insert_app1(_jpeg(), b"http://ns.adobe.com/xap/1.0/\x00" + XMP_ROTATED)
    assert not _pillow_upright(with_xmp)
    assert not jpeg.upright(with_xmp)
    twice = _insert_app1(_jpeg(exif=_exif(1)), b"Exif\x00\x00" + _exif(6)[6:])
    assert not jpeg.upright(twice)


def _insert_app1(data: bytes, payload: bytes) -> bytes:
    segment = b"\xff\xe1" + (len(payload) + 2).to_bytes(2, "big") + payload
    return data[:2] + segment + data[2:]


@settings(max_examples=examples(300), deadline=None)
@given(st.data())
def test_a_damaged_exif_block_is_never_called_upright_when_pillow_disagrees(
    data: st.DataObject,
) -> None:
    exif = bytearray(_exif(data.draw(st.sampled_from([1, 3, 6, 8]))))
    for _ in range(data.draw(st.integers(1, 6))):
        exif[data.draw(st.integers(6, len(exif) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(6, len(exif)))
    picture = _insert_app1(_jpeg(), bytes(exif[:cut]))
    if jpeg.upright(picture):
        assert _pillow_upright(picture)


@pytest.mark.parametrize(
    ("mode", "params", "components"),
    [("RGB", {}, 3), ("L", {}, 1), ("CMYK", {}, 4), ("RGB", {"progressive": True}, 3)],
)
def test_frame_size_is_pillows(mode: str, params: dict[str, object], components: int) -> None:
    data = _jpeg((1921, 1079), mode, **params)
    assert jpeg.frame_size(data) == (1921, 1079, components)


@pytest.mark.parametrize(
    "broken",
    [
        b"\xff\xd8\xff\xc0\x00",  # a segment cut short
        b"\xff\xd8\xff\xd9",  # no frame header at all
        b"not a jpeg",
    ],
)
def test_a_broken_header_is_no_size(broken: bytes) -> None:
    assert jpeg.frame_size(broken) is None
    if broken != b"\xff\xd8\xff\xd9":  # SOI, EOI: well formed, and nothing to turn
        assert not jpeg.upright(broken)


def test_a_second_frame_header_is_left_to_pillow() -> None:
    data = _jpeg()
    sof = data.index(b"\xff\xc0")
    length = int.from_bytes(data[sof + 2 : sof + 4], "big")
    doubled = data[: sof + 2 + length] + data[sof : sof + 2 + length] + data[sof + 2 + length :]
    assert jpeg.frame_size(doubled) is None


def test_a_large_rotated_jpeg_still_comes_out_turned() -> None:
    data = _jpeg((1920, 1080), exif=_exif(6))
    prepared = check_and_prepare(
        "image/jpeg", base64.b64encode(data).decode("ascii"), ImageLimits()
    )
    assert (prepared.width, prepared.height) == (882, 1568)  # turned, then fitted


def test_a_large_upright_jpeg_is_prepared_without_loading_pillow() -> None:
    # What a game sends most (v1.md "Images"): Pillow (2.2 MiB) is never imported.
    program = (
        "import base64, io, sys\n"
        "from xtyserver.serve.image import ImageLimits, check_and_prepare\n"
        "data = base64.b64encode(sys.stdin.buffer.read()).decode('ascii')\n"
        "p = check_and_prepare('image/jpeg', data, ImageLimits())\n"
        "print(p.width, p.height, 'PIL' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        input=_jpeg((1920, 1080), exif=_exif(1)),
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.split() == [b"1440", b"810", b"False"]


def _without_simplejpeg(data: bytes) -> tuple[bytes, bool]:
    """``check_and_prepare`` in a fresh interpreter where ``simplejpeg`` cannot be imported
    (as where it is not installed): the prepared bytes, and whether numpy was imported."""
    program = (
        "import base64, sys\n"
        "sys.modules['simplejpeg'] = None  # import simplejpeg raises ImportError\n"
        "from xtyserver.serve.image import ImageLimits, check_and_prepare\n"
        "data = base64.b64encode(sys.stdin.buffer.read()).decode('ascii')\n"
        "p = check_and_prepare('image/jpeg', data, ImageLimits())\n"
        "sys.stdout.write(base64.b64encode(p.data).decode('ascii') + ' ')\n"
        "sys.stdout.write(str('numpy' in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], input=data, capture_output=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    encoded, numpy = done.stdout.split()
    return base64.b64decode(encoded), numpy == b"True"


def _busy(size: tuple[int, int]) -> Image.Image:
    """A frame of coloured stripes and squares, whose every region differs from its neighbour."""
    image = Image.new("RGB", size)
    width, height = size
    for x in range(0, width, 40):
        for y in range(0, height, 30):
            image.paste(((x * 7) % 256, (y * 5) % 256, (x + y) % 256), (x, y, x + 40, y + 30))
    return image


def test_without_simplejpeg_a_large_jpeg_comes_out_at_the_same_size_from_pillow() -> None:
    # Where simplejpeg is not installed (no numpy there), Pillow brings a
    # 1920x1080 screenshot to the 6/8 size libjpeg-turbo's scaled decode gives.
    out = io.BytesIO()
    _busy((1920, 1080)).save(out, "JPEG", quality=90, exif=_exif(1), comment=b"CanaryNote")
    data = out.getvalue()
    fast = check_and_prepare("image/jpeg", base64.b64encode(data).decode("ascii"), ImageLimits())
    slow, numpy = _without_simplejpeg(data)
    assert not numpy
    assert b"Canary" not in slow and b"Exif" not in slow
    with Image.open(io.BytesIO(slow)) as pillow, Image.open(io.BytesIO(fast.data)) as dct:
        assert pillow.size == dct.size == (1440, 810)
        assert "exif" not in pillow.info and "comment" not in pillow.info
        difference = ImageChops.difference(pillow.convert("RGB"), dct.convert("RGB"))
        # The same picture by two downscalers (a shifted or blank one differs by ~40).
        assert max(ImageStat.Stat(difference).mean) < 6


@pytest.mark.parametrize(
    ("size", "expected"),
    [((2560, 1440), (1280, 720)), ((1000, 4000), (375, 1500)), ((12545, 100), (1568, 13))],
)
def test_without_simplejpeg_other_large_jpegs_get_the_sizes_they_get_with_it(
    size: tuple[int, int], expected: tuple[int, int]
) -> None:
    out = io.BytesIO()
    _busy(size).save(out, "JPEG", quality=85)
    fast = check_and_prepare(
        "image/jpeg", base64.b64encode(out.getvalue()).decode("ascii"), ImageLimits()
    )
    slow, _ = _without_simplejpeg(out.getvalue())
    with Image.open(io.BytesIO(slow)) as pillow:
        assert pillow.size == (fast.width, fast.height) == expected
