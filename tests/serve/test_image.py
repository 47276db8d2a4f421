"""Tests for xtyserver.serve.image: screenshot checks, metadata stripping, downscaling."""

from __future__ import annotations

import base64
import io
import struct
import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageChops, ImageStat, PngImagePlugin

from tests.property_budget import examples
from xtyserver.errors import ImageError
from xtyserver.serve.image import ImageLimits, PreparedImage, check_and_prepare

LIMITS = ImageLimits()
CANARY = "C:\\Users\\CanaryUser\\Saves"

_FORMAT = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WEBP"}


def _encode(image: Image.Image, mime: str, **params: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format=_FORMAT[mime], **params)
    return out.getvalue()


def _picture(width: int, height: int, mode: str = "RGB") -> Image.Image:
    """A small gradient, so lossy codecs have something real to encode."""
    image = Image.new(mode, (width, height))
    image.putdata(
        [
            (x * 255 // max(1, width - 1), y * 255 // max(1, height - 1), 128, 200)[: len(mode)]
            for y in range(height)
            for x in range(width)
        ]
    )
    return image


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _refusal(mime: str, data_b64: str, limits: ImageLimits = LIMITS) -> ImageError:
    with pytest.raises(ImageError) as caught:
        check_and_prepare(mime, data_b64, limits)
    return caught.value


def _opened(prepared: PreparedImage) -> Image.Image:
    image = Image.open(io.BytesIO(prepared.data))
    image.load()
    return image


def _patch_png_size(png: bytes, width: int, height: int) -> bytes:
    """Rewrite the IHDR width/height of a PNG and fix its CRC."""
    assert png[12:16] == b"IHDR"
    ihdr = struct.pack(">II", width, height) + png[24:29]
    crc = struct.pack(">I", zlib.crc32(b"IHDR" + ihdr) & 0xFFFFFFFF)
    return png[:16] + ihdr + crc + png[33:]


@pytest.mark.parametrize("mime", ["image/png", "image/jpeg", "image/webp"])
def test_check_and_prepare_returns_same_format_and_size_for_a_small_screenshot(
    mime: str,
) -> None:
    data = _encode(_picture(64, 48), mime)
    prepared = check_and_prepare(mime, _b64(data), LIMITS)
    assert prepared.mime == mime
    assert (prepared.width, prepared.height) == (64, 48)
    assert (prepared.original_width, prepared.original_height) == (64, 48)
    assert prepared.original_bytes == len(data)
    image = _opened(prepared)
    assert image.format == _FORMAT[mime]
    assert image.size == (64, 48)


@pytest.mark.parametrize("mime", ["image/png", "image/webp"])
def test_check_and_prepare_keeps_transparency_for_png_and_webp(mime: str) -> None:
    data = _encode(_picture(32, 32, "RGBA"), mime, lossless=True)
    image = _opened(check_and_prepare(mime, _b64(data), LIMITS))
    assert image.mode == "RGBA"
    # WebP is re-encoded lossy, so colours may move a little; alpha must survive.
    pixel = image.getpixel((0, 0))
    assert isinstance(pixel, tuple)
    assert pixel[3] == 200
    assert all(abs(got - want) <= 4 for got, want in zip(pixel, (0, 0, 128, 200), strict=True))


def test_check_and_prepare_keeps_transparent_pixels_transparent_when_downscaling() -> None:
    image = Image.new("RGBA", (200, 100), (255, 0, 0, 0))
    image.paste((0, 0, 255, 255), (0, 0, 100, 100))
    data = _encode(image, "image/png")
    out = _opened(check_and_prepare("image/png", _b64(data), ImageLimits(max_side=50)))
    assert out.size == (50, 25)
    far, seam = out.getpixel((45, 12)), out.getpixel((25, 12))
    assert isinstance(far, tuple) and isinstance(seam, tuple)
    assert far[3] == 0
    # No red halo from the fully transparent half at the seam.
    assert seam[0] <= 8 and seam[2] >= 240


def test_data_url_is_an_openai_image_url_for_the_prepared_bytes() -> None:
    prepared = check_and_prepare("image/png", _b64(_encode(_picture(4, 4), "image/png")), LIMITS)
    url = prepared.data_url()
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1], validate=True) == prepared.data


def test_check_and_prepare_strips_exif_from_jpeg() -> None:
    exif = Image.Exif()
    exif[0x010E] = CANARY  # ImageDescription
    exif[0x0131] = "CanarySoftware"  # Software
    data = _encode(_picture(40, 30), "image/jpeg", exif=exif.tobytes(), comment=b"CanaryNote")
    assert b"CanaryUser" in data and b"CanaryNote" in data
    prepared = check_and_prepare("image/jpeg", _b64(data), LIMITS)
    for marker in (b"CanaryUser", b"CanarySoftware", b"CanaryNote", b"Exif"):
        assert marker not in prepared.data
    assert dict(_opened(prepared).getexif()) == {}


def test_check_and_prepare_strips_png_text_exif_and_icc_chunks() -> None:
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", CANARY)
    info.add_text("Author", "CanaryAuthor", zip=True)
    info.add_itxt("Description", "CanaryItxt", lang="en")
    exif = Image.Exif()
    exif[0x010E] = CANARY
    icc = b"\x00" * 128 + b"CanaryICC"
    data = _encode(
        _picture(40, 30), "image/png", pnginfo=info, exif=exif.tobytes(), icc_profile=icc
    )
    assert b"tEXt" in data and b"eXIf" in data and b"iCCP" in data
    prepared = check_and_prepare("image/png", _b64(data), LIMITS)
    for chunk in (b"tEXt", b"zTXt", b"iTXt", b"eXIf", b"iCCP", b"CanaryUser"):
        assert chunk not in prepared.data
    opened = _opened(prepared)
    assert isinstance(opened, PngImagePlugin.PngImageFile)
    assert opened.text == {}


def test_check_and_prepare_strips_exif_from_webp() -> None:
    exif = Image.Exif()
    exif[0x010E] = CANARY
    data = _encode(_picture(40, 30), "image/webp", exif=exif.tobytes())
    assert b"CanaryUser" in data
    prepared = check_and_prepare("image/webp", _b64(data), LIMITS)
    assert b"CanaryUser" not in prepared.data
    assert b"EXIF" not in prepared.data


def test_check_and_prepare_applies_exif_orientation_before_dropping_it() -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise to display
    data = _encode(_picture(40, 20), "image/jpeg", exif=exif.tobytes())
    prepared = check_and_prepare("image/jpeg", _b64(data), LIMITS)
    assert (prepared.width, prepared.height) == (20, 40)


def test_check_and_prepare_downscales_4000x1000_to_1568x392() -> None:
    data = _encode(Image.new("RGB", (4000, 1000), (10, 120, 30)), "image/png")
    prepared = check_and_prepare("image/png", _b64(data), LIMITS)
    assert (prepared.width, prepared.height) == (1568, 392)
    assert (prepared.original_width, prepared.original_height) == (4000, 1000)
    assert _opened(prepared).size == (1568, 392)


def test_check_and_prepare_downscales_a_tall_jpeg_on_its_longest_side() -> None:
    # 3/8 is the largest DCT scale whose 1500 px fit the 1568 px limit (issue 22).
    data = _encode(Image.new("RGB", (1000, 4000), (200, 20, 30)), "image/jpeg")
    prepared = check_and_prepare("image/jpeg", _b64(data), LIMITS)
    assert (prepared.width, prepared.height) == (375, 1500)
    assert _opened(prepared).size == (375, 1500)


@pytest.mark.parametrize(
    ("size", "max_side", "scale"),
    [
        ((1920, 1080), 1568, 6),  # 1440x810
        ((1568, 882), 1568, 8),
        ((1569, 882), 1568, 7),  # 1373: ceil(1569*7/8)
        ((1792, 1008), 1568, 7),  # exactly 1568
        ((1793, 1008), 1568, 6),  # ceil(1793*7/8) = 1569 > 1568
        ((12545, 100), 1568, None),  # even 1/8 is 1569 px
    ],
)
def test_the_largest_dct_scale_that_fits_is_chosen(
    size: tuple[int, int], max_side: int, scale: int | None
) -> None:
    from xtyserver.serve.jpeg import jpeg_scale

    assert jpeg_scale(*size, max_side) == scale


@pytest.mark.parametrize(
    ("size", "expected"),
    [((1792, 1008), (1568, 882)), ((1793, 1008), (1345, 756)), ((2560, 1440), (1280, 720))],
)
def test_a_large_jpeg_is_decoded_at_its_dct_scale_with_no_resample(
    size: tuple[int, int], expected: tuple[int, int]
) -> None:
    data = _encode(_noise(*size), "image/jpeg", quality=85)
    prepared = check_and_prepare("image/jpeg", _b64(data), LIMITS)
    assert (prepared.width, prepared.height) == expected
    assert _opened(prepared).size == expected


def test_a_corrupt_large_jpeg_is_refused_on_the_dct_scaled_path() -> None:
    data = bytearray(_encode(_noise(1920, 1080), "image/jpeg", quality=85))
    data[len(data) // 2 : len(data) // 2 + 4000] = b"\xff\x00" * 2000
    error = _refusal("image/jpeg", _b64(bytes(data[: len(data) * 3 // 4])))
    assert error.code == "invalid_image"


def test_check_and_prepare_keeps_an_image_exactly_at_max_side() -> None:
    limits = ImageLimits(max_side=100)
    at = check_and_prepare("image/png", _b64(_encode(_picture(100, 50), "image/png")), limits)
    over = check_and_prepare("image/png", _b64(_encode(_picture(101, 50), "image/png")), limits)
    assert (at.width, at.height) == (100, 50)
    assert (over.width, over.height) == (100, 50)


def _png_padded_to(size: int) -> bytes:
    """A valid PNG followed by filler up to ``size`` bytes (decoders stop at IEND)."""
    png = _encode(_picture(8, 8), "image/png")
    return png + b"\x00" * (size - len(png))


def test_check_and_prepare_accepts_exactly_8_mib_decoded() -> None:
    limit = 8 * 1024 * 1024
    prepared = check_and_prepare("image/png", _b64(_png_padded_to(limit)), LIMITS)
    assert prepared.original_bytes == limit
    assert (prepared.width, prepared.height) == (8, 8)


def test_check_and_prepare_refuses_8_mib_plus_one_before_decoding() -> None:
    limit = 8 * 1024 * 1024
    error = _refusal("image/png", _b64(_png_padded_to(limit + 1)))
    assert error.code == "image_too_large"
    assert error.fields == ("image.data",)


def test_check_and_prepare_refuses_oversize_base64_even_when_it_is_not_base64() -> None:
    # The length decides before any decoding: garbage of that length is too large.
    limits = ImageLimits(max_decoded_bytes=3)
    assert _refusal("image/png", "!!!!!").code == "invalid_image"
    error = _refusal("image/png", "!!!!!!!!", limits)
    assert error.code == "image_too_large"


@pytest.mark.parametrize(
    "data_b64",
    [
        "not base64 at all!",
        "iVBORw0KGgo",  # length not a multiple of 4
        "iVBO Rw0K",  # whitespace inside
        "iVBORw0K\n",
        "data:image/png;base64,iVBORw0KGgo=",
        "iVBORw0KGgo=====",
        "汤圆汤圆",
        "",
    ],
)
def test_check_and_prepare_refuses_bad_base64_naming_image_data(data_b64: str) -> None:
    error = _refusal("image/png", data_b64)
    assert error.code == "invalid_image"
    assert error.fields == ("image.data",)


@pytest.mark.parametrize("mime", ["image/gif", "image/jpg", "IMAGE/PNG", "text/plain", ""])
def test_check_and_prepare_refuses_unsupported_mime_naming_image_mime(mime: str) -> None:
    error = _refusal(mime, _b64(_encode(_picture(4, 4), "image/png")))
    assert error.code == "invalid_image"
    assert error.fields == ("image.mime",)


@pytest.mark.parametrize(
    ("declared", "actual"),
    [
        ("image/jpeg", "image/png"),
        ("image/png", "image/jpeg"),
        ("image/webp", "image/png"),
        ("image/png", "image/webp"),
    ],
)
def test_check_and_prepare_refuses_data_whose_magic_contradicts_the_mime(
    declared: str, actual: str
) -> None:
    error = _refusal(declared, _b64(_encode(_picture(4, 4), actual)))
    assert error.code == "invalid_image"
    assert error.fields == ("image.mime",)


@pytest.mark.parametrize(
    "data",
    [b"just some text, not a picture", b"GIF89a\x01\x00\x01\x00", b"RIFF\x00\x00\x00\x00WAVE"],
)
def test_check_and_prepare_refuses_data_that_is_no_supported_image(data: bytes) -> None:
    error = _refusal("image/png", _b64(data))
    assert error.code == "invalid_image"
    assert error.fields == ("image.data",)


def test_check_and_prepare_refuses_a_tiny_png_claiming_100000x100000_pixels() -> None:
    bomb = _patch_png_size(_encode(_picture(8, 8), "image/png"), 100_000, 100_000)
    assert len(bomb) < 1000
    error = _refusal("image/png", _b64(bomb))
    assert error.code == "image_too_large"
    assert error.fields == ("image.data",)


def test_check_and_prepare_turns_pillows_own_bomb_error_into_image_too_large() -> None:
    # With our pixel limit out of the way, Pillow's guard fires inside open().
    bomb = _patch_png_size(_encode(_picture(8, 8), "image/png"), 100_000, 100_000)
    error = _refusal("image/png", _b64(bomb), ImageLimits(max_pixels=10**12))
    assert error.code == "image_too_large"


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_check_and_prepare_refuses_a_png_between_pillows_warning_and_error_limits() -> None:
    # 120 M pixels: Pillow only warns here; our own limit must refuse it.
    bomb = _patch_png_size(_encode(_picture(8, 8), "image/png"), 12_000, 10_000)
    assert _refusal("image/png", _b64(bomb)).code == "image_too_large"


@pytest.mark.filterwarnings("error::PIL.Image.DecompressionBombWarning")
def test_check_and_prepare_converts_pillows_bomb_warning_raised_as_error() -> None:
    # Under "warnings as errors" Pillow raises inside open(); it must not escape.
    bomb = _patch_png_size(_encode(_picture(8, 8), "image/png"), 12_000, 10_000)
    assert _refusal("image/png", _b64(bomb)).code == "image_too_large"


def test_check_and_prepare_refuses_a_tiny_webp_claiming_16384x16384_pixels() -> None:
    webp = bytearray(_encode(_picture(8, 8), "image/webp", lossless=True))
    assert webp[12:16] == b"VP8L" and webp[20] == 0x2F
    bits = int.from_bytes(webp[21:25], "little")
    bits = (bits & ~0x0FFFFFFF) | (16383 << 14) | 16383
    webp[21:25] = bits.to_bytes(4, "little")
    error = _refusal("image/webp", _b64(bytes(webp)))
    assert error.code == "image_too_large"


def test_check_and_prepare_accepts_exactly_max_pixels_and_refuses_one_more() -> None:
    limits = ImageLimits(max_pixels=100)
    ok = check_and_prepare("image/png", _b64(_encode(_picture(10, 10), "image/png")), limits)
    assert (ok.width, ok.height) == (10, 10)
    error = _refusal("image/png", _b64(_encode(_picture(101, 1), "image/png")), limits)
    assert error.code == "image_too_large"


@pytest.mark.parametrize("mime", ["image/png", "image/jpeg", "image/webp"])
def test_check_and_prepare_refuses_a_truncated_image(mime: str) -> None:
    data = _encode(_picture(64, 64), mime)
    error = _refusal(mime, _b64(data[: len(data) // 2]))
    assert error.code == "invalid_image"
    assert error.fields == ("image.data",)


def test_check_and_prepare_refuses_a_png_with_a_corrupt_pixel_stream() -> None:
    data = bytearray(_encode(_picture(64, 64), "image/png"))
    start = data.index(b"IDAT") + 8
    data[start : start + 16] = b"\xff" * 16
    assert _refusal("image/png", _b64(bytes(data))).code == "invalid_image"


def test_check_and_prepare_uses_the_given_field_path_in_errors() -> None:
    with pytest.raises(ImageError) as caught:
        check_and_prepare("image/gif", "", LIMITS, field="context.image")
    assert caught.value.fields == ("context.image.mime",)


_MAGIC = st.sampled_from(
    [
        ("image/png", b"\x89PNG\r\n\x1a\n"),
        ("image/jpeg", b"\xff\xd8\xff"),
        ("image/webp", b"RIFF\x10\x00\x00\x00WEBPVP8 "),
    ]
)


@settings(max_examples=examples(300), deadline=None)
@given(_MAGIC, st.binary(max_size=400))
def test_check_and_prepare_raises_only_image_errors_for_garbage_after_magic(
    magic: tuple[str, bytes], tail: bytes
) -> None:
    mime, prefix = magic
    try:
        check_and_prepare(mime, _b64(prefix + tail), LIMITS)
    except ImageError as error:
        assert error.code in {"invalid_image", "image_too_large"}


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["image/png", "image/jpeg", "image/webp"]),
    st.integers(1, 40),
    st.integers(1, 40),
    st.integers(0, 2000),
)
def test_check_and_prepare_raises_only_image_errors_for_mutated_images(
    mime: str, width: int, height: int, flip: int
) -> None:
    data = bytearray(_encode(_picture(width, height), mime))
    position = flip % len(data)
    data[position] ^= 0xFF
    try:
        prepared = check_and_prepare(mime, _b64(bytes(data)), LIMITS)
    except ImageError as error:
        assert error.code in {"invalid_image", "image_too_large"}
    else:
        assert max(prepared.width, prepared.height) <= LIMITS.max_side


def _segment(marker: int, payload: bytes) -> bytes:
    return bytes((0xFF, marker)) + (len(payload) + 2).to_bytes(2, "big") + payload


def _with_segments(jpeg: bytes, *segments: bytes) -> bytes:
    """Insert segments right after SOI."""
    return jpeg[:2] + b"".join(segments) + jpeg[2:]


def test_a_jpeg_within_limits_is_not_re_encoded_and_leaves_without_any_metadata() -> None:
    clean = _encode(_picture(120, 80), "image/jpeg", quality=90)
    exif = Image.Exif()
    exif[0x010E] = CANARY
    data = (
        _with_segments(
            clean,
            _segment(0xE1, exif.tobytes()),
            _segment(0xE1, b"http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta>CanaryXmp</x:xmpmeta>"),
            _segment(0xE2, b"ICC_PROFILE\x00\x01\x01CanaryIcc"),
            _segment(0xED, b"Photoshop 3.0\x00CanaryIptc"),
            _segment(0xFE, b"CanaryComment"),
        )
        + b"CanaryTrailer"
    )
    assert Image.open(io.BytesIO(data)).size == (120, 80)
    prepared = check_and_prepare("image/jpeg", _b64(data), LIMITS)
    for canary in (b"Canary", b"Exif", b"ICC_PROFILE", b"xmpmeta", b"Photoshop", b"JFIF"):
        assert canary not in prepared.data
    assert prepared.data.endswith(b"\xff\xd9")
    out = _opened(prepared)
    assert out.size == (120, 80) and (prepared.width, prepared.height) == (120, 80)
    assert dict(out.getexif()) == {} and "icc_profile" not in out.info
    # The pixels are the original's, bit for bit: nothing was re-encoded.
    assert out.tobytes() == Image.open(io.BytesIO(clean)).tobytes()
    assert prepared.data == clean[:2] + clean[20:]  # only Pillow's 20-byte JFIF APP0 is gone


def test_a_jpeg_with_an_adobe_colour_marker_keeps_it_and_its_colours() -> None:
    plain = _encode(_picture(16, 16), "image/jpeg")
    adobe = _segment(0xEE, b"Adobe\x00\x64\x00\x00\x00\x00\x01")
    data = _with_segments(plain, adobe, _segment(0xEE, b"Adobe-with-a-note"))
    prepared = check_and_prepare("image/jpeg", _b64(data), LIMITS)
    assert prepared.data.count(b"Adobe") == 1 and b"note" not in prepared.data


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.95])
def test_a_truncated_jpeg_within_limits_is_still_refused(cut: float) -> None:
    data = _encode(_picture(200, 120), "image/jpeg", quality=95)
    error = _refusal("image/jpeg", _b64(data[: int(len(data) * cut)]))
    assert error.code == "invalid_image"


def test_a_large_jpeg_is_downscaled_and_re_encoded_without_metadata() -> None:
    exif = Image.Exif()
    exif[0x010E] = CANARY
    data = _encode(_picture(400, 100), "image/jpeg", exif=exif.tobytes(), comment=b"CanaryNote")
    prepared = check_and_prepare("image/jpeg", _b64(data), ImageLimits(max_side=100))
    assert (prepared.width, prepared.height) == (100, 25)
    assert b"Canary" not in prepared.data and b"Exif" not in prepared.data


# ---------------------------------------------------------------------------
# Preparation speed-ups (issue 12): banded resize, msgspec base64, pixel blocks


def _noise(width: int, height: int, mode: str = "RGB") -> Image.Image:
    """Busy pixels, where a misplaced band or a seam between bands would show."""
    bands = [Image.effect_noise((width, height), 60 + 20 * i) for i in range(len(mode))]
    return bands[0] if mode == "L" else Image.merge(mode, bands)


@pytest.mark.parametrize(
    ("source", "target", "mode"),
    [
        ((1920, 1080), (1568, 882), "RGB"),
        ((2560, 1440), (1568, 882), "RGB"),
        ((1081, 1921), (882, 1567), "RGB"),  # portrait, odd heights: uneven bands
        ((3000, 1001), (1568, 523), "L"),
        ((1600, 1200), (1567, 1175), "RGB"),  # barely downscaled
    ],
)
def test_banded_resize_gives_the_pixels_of_one_resize(
    source: tuple[int, int], target: tuple[int, int], mode: str
) -> None:
    from xtyserver.serve.pillow_image import _banded_resize

    image = _noise(*source, mode=mode)
    single = image.resize(target, Image.Resampling.BILINEAR)
    with ThreadPoolExecutor(max_workers=1) as bands:
        banded = _banded_resize(image, target, bands)
    assert banded is not None
    assert banded.size == single.size and banded.mode == single.mode
    diff = ImageChops.difference(single, banded)
    # Identical with Pillow 13; at most a rounding step if a Pillow's float box math differs.
    assert max(high for _, high in _extrema(diff)) <= 1


def _extrema(image: Image.Image) -> list[tuple[int, int]]:
    extrema = image.getextrema()
    return [extrema] if image.mode == "L" else list(extrema)  # type: ignore[list-item,arg-type]


def test_a_1920x1080_jpeg_decodes_at_six_eighths_and_leaves_without_metadata() -> None:
    exif = Image.Exif()
    exif[0x010E] = CANARY
    icc = b"\x00" * 128 + b"CanaryProfile"
    source = _noise(1920, 1080)
    data = _encode(
        source,
        "image/jpeg",
        quality=90,
        exif=exif.tobytes(),
        icc_profile=icc,
        comment=b"CanaryNote",
    )
    prepared = check_and_prepare("image/jpeg", _b64(data), LIMITS)
    assert (prepared.width, prepared.height) == (1440, 810)
    assert b"Canary" not in prepared.data and b"Exif" not in prepared.data
    opened = _opened(prepared)
    assert "exif" not in opened.info and "icc_profile" not in opened.info
    assert "comment" not in opened.info
    # Two downscalers of pure noise differ a little (a blank or shifted picture by ~50).
    expected = Image.open(io.BytesIO(data)).convert("RGB").resize((1440, 810))
    assert ImageStat.Stat(ImageChops.difference(opened, expected)).mean[0] < 16


class CountingPool(ThreadPoolExecutor):
    """A real one-thread pool that notes the size of each band it is given."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.sizes: list[object] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.sizes.append(args[0])
        return super().submit(fn, *args, **kwargs)


def test_a_1920x1080_png_goes_through_the_banded_resize_and_leaves_without_metadata() -> None:
    exif = Image.Exif()
    exif[0x010E] = CANARY
    icc = b"\x00" * 128 + b"CanaryProfile"
    source = _noise(1920, 1080)
    data = _encode(source, "image/png", exif=exif.tobytes(), icc_profile=icc)
    with CountingPool() as bands:
        prepared = check_and_prepare("image/png", _b64(data), LIMITS, bands=bands)
    assert bands.sizes == [(1568, 441)]  # the top band on the helper, the bottom here
    assert (prepared.width, prepared.height) == (1568, 882)
    assert b"Canary" not in prepared.data and b"Exif" not in prepared.data
    opened = _opened(prepared)
    assert "exif" not in opened.info and "icc_profile" not in opened.info
    # The pixels are the downscaled screenshot's, not a band's or a blank image's.
    expected = Image.open(io.BytesIO(data)).convert("RGB").resize((1568, 882))
    assert ImageStat.Stat(ImageChops.difference(opened, expected)).mean[0] < 12


def test_a_failure_on_the_resize_helper_thread_is_an_image_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = Image.Image.resize

    def resize(self: Image.Image, size: tuple[int, int], *args: object, **kw: object) -> object:
        if len(args) > 1 and args[1] is not None and args[1][1] == 0:  # type: ignore[index]
            raise MemoryError  # the top band, on the helper thread
        return real(self, size, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Image.Image, "resize", resize)
    data = _encode(_noise(1920, 1080), "image/png")
    with ThreadPoolExecutor(max_workers=1) as bands, pytest.raises(ImageError) as caught:
        check_and_prepare("image/png", _b64(data), LIMITS, bands=bands)
    assert caught.value.code == "image_too_large"


def test_without_a_band_helper_or_after_it_stopped_a_screenshot_is_resized_in_one_call() -> None:
    data = _encode(_noise(1920, 1080), "image/png")
    alone = check_and_prepare("image/png", _b64(data), LIMITS)
    stopped = ThreadPoolExecutor(max_workers=1)
    stopped.shutdown()
    late = check_and_prepare("image/png", _b64(data), LIMITS, bands=stopped)
    assert (alone.width, alone.height) == (late.width, late.height) == (1568, 882)
    assert alone.data == late.data


@pytest.mark.parametrize(
    "data_b64",
    [
        "aGVsbG8=",
        "aGVsbG8h",
        "YQ==",
        "YR==",
        "b222=",
        "a+/b",
        "",
        "aGVsbG8",
        "YQ=",
        "Y===",
        "aGV=bG8=",
        "=aGVsbG8",
        "a-_b",
        "YQ==YQ==",
        "aGVsbG8=a",
        "aaaaa",
        "é",
        "aGVs bG8=",
    ],
)
def test_base64_decoding_accepts_exactly_what_strict_binascii_accepts(data_b64: str) -> None:
    import binascii

    from xtyserver.serve.image import _b64decode

    try:
        expected: bytes | None = binascii.a2b_base64(data_b64, strict_mode=True)
    except (binascii.Error, ValueError):
        expected = None
    assert _b64decode(data_b64) == expected


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet="AQab09+/=-_ \n", max_size=16))
def test_base64_decoding_agrees_with_strict_binascii_on_any_text(data_b64: str) -> None:
    import binascii

    from xtyserver.serve.image import _b64decode

    try:
        expected: bytes | None = binascii.a2b_base64(data_b64, strict_mode=True)
    except (binascii.Error, ValueError):
        expected = None
    assert _b64decode(data_b64) == expected


def test_pillow_keeps_freed_pixel_blocks_for_the_next_screenshot() -> None:
    import xtyserver.serve.pillow_image  # noqa: F401  (sets the block cache on import)

    assert Image.core.get_blocks_max() >= 5  # type: ignore[attr-defined]
