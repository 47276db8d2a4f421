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

GENERIC_WEIGHT = 1.0
"""What a memory's cosine with everyday chatter's centroid (how generic it reads: 「玩家在
出生点附近采了胡萝卜和浆果」 is near every question) costs it, beyond the save's mean, in the
vectors' ranking (:func:`centered`): set on the development sets (docs/evaluation.md "Round
five"): the right memory first among a case's memories 0.51 -> 0.62, in the first two 0.74
-> 0.84 (round four's styles, clean paraphrases and players' words); 0.5 gave 0.83 in the
first two, 1.5 and 2.0 0.84 and 0.81, the players' words falling."""


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


def centroid(vectors: Sequence[Sequence[float]]) -> array[float]:
    """The mean of ``vectors`` (not normalised: its dot product with a vector is that
    vector's mean cosine with them); empty for none."""
    if not vectors:
        return array("f")
    size = len(vectors[0])
    sums = [0.0] * size
    for vec in vectors:
        if len(vec) == size:
            sums = list(map(operator.add, sums, vec))
    return array("f", (x / len(vectors) for x in sums))


def centered(
    similar: Sequence[tuple[int, float]],
    generic: Mapping[int, float],
    *,
    weight: float = GENERIC_WEIGHT,
) -> list[tuple[int, float]]:
    """``similar`` (id, cosine) with each cosine less ``weight`` times how much more
    generic its memory is than the mean of them (``generic``: each memory's cosine with
    everyday chatter's :func:`centroid`), best first.

    Every e5 vector shares a direction that says little; a memory far along it is near
    every question and wins the vectors' place by a hair (hubness). The mean is added
    back, so the cosines keep their scale (the floor and margins of
    :func:`vector_candidates` mean what they did). A memory without a ``generic`` value
    loses nothing beyond the mean.
    """
    known = [generic[i] for i, _ in similar if i in generic]
    if not known or weight == 0.0:
        return list(similar)
    mean = sum(known) / len(known)
    out = [(i, cos - weight * (generic.get(i, mean) - mean)) for i, cos in similar]
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
