"""A screenshot loads only its own format's Pillow plugin (issue 22, memory).

``Image.open`` registers BMP, GIF, JPEG, PPM and PNG by itself; for a format
it does not know yet (WebP) it first imports every plugin Pillow has, about
45 modules and 5 MiB kept for the life of the server. Run in a fresh
interpreter: the test process has long imported them all.
"""

from __future__ import annotations

import base64
import io
import subprocess
import sys

import pytest
from PIL import Image

PROBE = """
import sys
from xtyserver.serve.image import ImageLimits, check_and_prepare
check_and_prepare(sys.argv[1], sys.stdin.read(), ImageLimits())
print(" ".join(sorted(m for m in sys.modules if m.endswith("ImagePlugin"))))
"""


def encoded(fmt: str) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (64, 48), (40, 160, 90)).save(buf, format=fmt)
    return base64.b64encode(buf.getvalue()).decode("ascii")


@pytest.mark.parametrize(("mime", "fmt"), [("image/webp", "WEBP"), ("image/png", "PNG")])
def test_preparing_a_screenshot_does_not_load_every_pillow_plugin(mime: str, fmt: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, mime],
        input=encoded(fmt),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    plugins = done.stdout.split()
    assert f"PIL.{'WebP' if fmt == 'WEBP' else fmt.title()}ImagePlugin" in plugins
    # Image.open's own five and the one asked for; a full init would be ~45.
    assert len(plugins) <= 6, plugins
