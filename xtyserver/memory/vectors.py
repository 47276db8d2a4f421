"""Memory vectors: float32 blobs, cosine nearest neighbours and rank fusion (pure).

A save holds at most ``memory.soft_cap`` events, so the nearest neighbours are
a brute-force dot product over unit vectors (the shell runs it on a worker
thread). ``sqlite-vec`` is a native extension without a wheel for every
platform players use; for a few hundred rows per save it buys nothing.
:func:`fuse` is reciprocal rank fusion (Cormack et al., 2009) with ``k = 60``.
"""

from __future__ import annotations

import math
import operator
import sys
from array import array
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from xtyserver.memory.types import MemoryEvent

RRF_K = 60
"""The constant of reciprocal rank fusion (the paper's)."""


def normalized(values: Iterable[float]) -> array[float]:
    """``values`` as a float32 unit vector (all zeros stay zeros)."""
    vec = array("f", values)
    norm = math.sqrt(sum(x * x for x in vec))
    if norm > 0 and math.isfinite(norm):
        vec = array("f", (x / norm for x in vec))
    return vec


def to_blob(vector: array[float]) -> bytes:
    """The little-endian float32 bytes stored in ``memory_vector.vector``."""
    if sys.byteorder == "big":  # pragma: no cover - no such player machine known
        vector = array("f", vector)
        vector.byteswap()
    return vector.tobytes()


def from_blob(blob: bytes) -> array[float]:
    """The vector stored by :func:`to_blob`."""
    vector = array("f")
    vector.frombytes(blob)
    if sys.byteorder == "big":  # pragma: no cover
        vector.byteswap()
    return vector


def embedding_text(event: MemoryEvent) -> str:
    """What a memory's vector is computed from: its subject, summary and search keys."""
    keys = " ".join(event.search_keys or ())
    return f"{event.subject}：{event.summary}" + (f"（{keys}）" if keys else "")


def similarities(
    query: Sequence[float], vectors: Iterable[tuple[int, array[float]]]
) -> list[tuple[int, float]]:
    """Cosine of ``query`` (a unit vector) with each ``(id, unit vector)``, best first.

    Vectors of another size (formed by another model) are left out.
    """
    size = len(query)
    out = [
        (event_id, sum(map(operator.mul, query, vec)))
        for event_id, vec in vectors
        if len(vec) == size
    ]
    out.sort(key=lambda kv: (-kv[1], kv[0]))
    return out


def fuse(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> dict[int, float]:
    """Reciprocal rank fusion of rankings (ids, best first): id -> fused score."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, event_id in enumerate(ranking, start=1):
            fused[event_id] = fused.get(event_id, 0.0) + 1.0 / (k + rank)
    return fused


def vector_candidates(
    similar: Sequence[tuple[int, float]],
    *,
    min_similarity: float,
    margin: float,
    limit: int,
) -> list[int]:
    """The ids a vector search proposes, best first.

    Only those at least ``min_similarity`` and within ``margin`` of the best one,
    at most ``limit``: a vector ranking always has a nearest neighbour, and
    better recall must not come from injecting more.
    """
    pairs = sorted(similar, key=lambda kv: (-kv[1], kv[0]))
    if not pairs:
        return []
    floor = max(min_similarity, pairs[0][1] - margin)
    return [event_id for event_id, cos in pairs if cos >= floor][: max(0, limit)]


def unseen_first(
    nearest: Sequence[int],
    cosine: Mapping[int, float],
    lexical_share: Mapping[int, float],
    *,
    seen: AbstractSet[int],
    discount: float,
) -> list[int]:
    """``nearest`` with the ids the words did not pick (not in ``seen``) reordered
    among their own places by cosine less ``discount`` times their lexical share.

    A word shared with the question raises a memory's cosine too, so a decoy
    sharing the question's words would otherwise win the vectors' place by a
    hair. The words' picks keep their places: how far the vectors displace
    them stays as it was, only which unseen memory comes first changes.
    """
    unseen = sorted(
        (i for i in nearest if i not in seen),
        key=lambda i: (-(cosine[i] - discount * lexical_share.get(i, 0.0)), i),
    )
    order = iter(unseen)
    return [i if i in seen else next(order) for i in nearest]
