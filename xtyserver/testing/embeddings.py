"""The scripted model's deterministic ``/v1/embeddings``.

Not a model of meaning: a hashed bag of features, so tests and the evaluation
get stable vectors through the server's own provider client. The features of a text
are the glossary entities it names (every packaged game's, weight 3: so
``Abigail``, ``阿比盖尔`` and ``紫发女孩`` land on one feature) and its tokens
(character bigrams for Chinese, words for English; weight 1), each hashed
(BLAKE2b) to one of :data:`DIMENSIONS` slots with a sign.
"""

from __future__ import annotations

import hashlib
import math
from functools import cache

from xtyserver.memory.glossary import Glossary
from xtyserver.memory.tokenize import tokenize
from xtyserver.serve.glossary import load_glossary

DIMENSIONS = 256
ENTITY_WEIGHT = 3.0


@cache
def _glossary() -> Glossary:
    return load_glossary(None)


def _slot(feature: str) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    number = int.from_bytes(digest, "little")
    return number % DIMENSIONS, 1.0 if (number >> 32) & 1 else -1.0


def scripted_vector(text: str, dimensions: int = DIMENSIONS) -> list[float]:
    """The unit vector of ``text`` (all zeros for a text without features)."""
    tokens = tokenize(text)
    features: list[tuple[str, float]] = [(f"t:{t}", 1.0) for t in tokens]
    for game in _glossary().games.values():
        features += [(f"e:{key}", ENTITY_WEIGHT) for key in game.entities(tokens)]
    vec = [0.0] * dimensions
    for feature, weight in features:
        slot, sign = _slot(feature)
        vec[slot % dimensions] += sign * weight
    norm = math.sqrt(sum(x * x for x in vec))
    return [x / norm for x in vec] if norm else vec
