"""Every seed of fuzz/corpus/ passes its atheris harness's checks, without atheris.

The harnesses in fuzz/ are run by hand (fuzz/README.md); this keeps their seed corpora
and their contract checks valid in CI. A regression case saved from a fuzzer finding
fails here until the bug is fixed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from xtyserver.protocol.codec import Decoded, decode_client_frame
from xtyserver.protocol.frames import CLIENT_FRAME_TYPES

FUZZ = Path(__file__).resolve().parent.parent / "fuzz"
HARNESSES = ("decode", "redact", "image")


def _harness(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"fuzz_{name}", FUZZ / f"fuzz_{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _seeds(name: str) -> list[Path]:
    return sorted(p for p in (FUZZ / "corpus" / name).iterdir() if p.is_file())


_ENTRY: dict[str, Callable[[bytes], None]] = {
    name: _harness(name).test_one_input for name in HARNESSES
}
_CASES = [
    pytest.param(name, seed, id=f"{name}/{seed.name}")
    for name in HARNESSES
    for seed in _seeds(name)
]


@pytest.mark.parametrize(("harness", "seed"), _CASES)
def test_harness_accepts_corpus_seed(harness: str, seed: Path) -> None:
    _ENTRY[harness](seed.read_bytes())


@pytest.mark.parametrize("harness", HARNESSES)
def test_harness_has_a_seed_corpus(harness: str) -> None:
    assert len(_seeds(harness)) >= 10


def test_decode_corpus_holds_a_valid_frame_of_every_client_type() -> None:
    tags = set()
    for seed in _seeds("decode"):
        try:
            decoded = decode_client_frame(seed.read_bytes())
        except Exception:
            continue
        assert isinstance(decoded, Decoded)
        tags.add(decoded.frame.__struct_config__.tag)
    assert tags == {t.__struct_config__.tag for t in CLIENT_FRAME_TYPES}


def test_image_corpus_holds_accepted_png_jpeg_and_webp() -> None:
    image = _harness("image")
    accepted = set()
    for seed in _seeds("image"):
        mime, data_b64 = image.split_input(seed.read_bytes())
        try:
            image.check_and_prepare(mime, data_b64, image.LIMITS)
        except image.ImageError:
            continue
        accepted.add(mime)
    assert accepted == {"image/png", "image/jpeg", "image/webp"}
