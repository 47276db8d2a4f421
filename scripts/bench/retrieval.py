"""Benchmark: per-turn memory retrieval for one 300-event save in a 30,000-event store.

Compares
  (a) the in-memory ``SaveIndex`` (BM25, loaded once per session at hello) and
  (b) an FTS5 table with an apsw-registered bigram tokenizer, queried with
      ``bm25()`` and scoped by game/save inside the SQL,
and reports the recall of several tokenizers on the mixed Chinese/English set
in ``tests/memory/recall_cases.py``. Goal: p99 < 2 ms.

With memory vectors (``--dims``, default 1,024 as bge-m3): (c) the query's
cosine with every vector of the save and the fused selection.

Run: ``cd /work/main && .venv/bin/python scripts/bench/retrieval.py [--queries 2000] [--dims 0]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import apsw
import apsw.fts5

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "memory"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_cases import CASES  # type: ignore[import-not-found,unused-ignore]  # noqa: E402
from stats import nearest_rank  # noqa: E402

from xtyserver.clock import ManualClock  # noqa: E402
from xtyserver.memory.export import ExportDocument  # noqa: E402
from xtyserver.memory.retrieval import SaveIndex, search_memories, select_memories  # noqa: E402
from xtyserver.memory.sqlite.store import MemoryStore  # noqa: E402
from xtyserver.memory.tokenize import token_spans, tokenize  # noqa: E402
from xtyserver.memory.types import MemoryEvent, Scope, SharedProfile  # noqa: E402
from xtyserver.memory.vectors import normalized, similarities  # noqa: E402
from xtyserver.serve.glossary import load_glossary  # noqa: E402

NOW = 1_790_000_000.0
GAMES = ("stardew-valley", "dont-starve-together", "oxygen-not-included")
ZH = [
    "社区中心",
    "鱼缸",
    "收集包",
    "温室",
    "矿洞",
    "史莱姆",
    "鸡舍",
    "奶牛",
    "钓鱼",
    "海边",
    "婚礼",
    "沙漠",
    "远古水果",
    "保暖石",
    "猪王",
    "鹿角怪",
    "基地",
    "火药",
    "蜂箱",
    "氧气",
    "电解水",
    "毛刺花",
    "间歇泉",
    "火箭",
    "压力",
    "复制人",
    "紫水晶",
    "生日",
    "春季",
    "冬天",
]
EN = [
    "fish",
    "tank",
    "bundle",
    "greenhouse",
    "cavern",
    "iridium",
    "rod",
    "pumpkin",
    "harvest",
    "deerclops",
    "thermal",
    "stone",
    "winter",
    "pig",
    "king",
    "beefalo",
    "oxygen",
    "hydrogen",
    "rocket",
    "duplicant",
    "stress",
    "barn",
    "walnut",
    "seeds",
]


def _text(rng: random.Random, n: int) -> str:
    words = [rng.choice(ZH) if rng.random() < 0.6 else rng.choice(EN) for _ in range(n)]
    return "".join(w if w in ZH else f" {w} " for w in words).strip()


def build_document(saves: int, per_save: int, seed: int = 7) -> ExportDocument:
    rng = random.Random(seed)
    events: list[MemoryEvent] = []
    n = 0
    for s in range(saves):
        game = GAMES[s % 3]
        for i in range(per_save):
            n += 1
            events.append(
                MemoryEvent(
                    id=n,
                    game_id=game,
                    save_id=f"save-{s}",
                    kind=rng.choice(["goal", "decision", "promise", "event", "milestone"]),
                    subject=f"{_text(rng, 2)}{i}"[:80],
                    summary=_text(rng, 8)[:160],
                    importance=rng.randint(1, 5),
                    status=rng.choice(["active", "done", "dropped"]),
                    pinned=False,
                    day=rng.randint(0, 100),
                    created_at=NOW - rng.random() * 1e6,
                    updated_at=NOW - rng.random() * 1e6,
                    last_used_at=NOW - rng.random() * 1e6,
                    # search keys as an extraction call writes them (3-8 names and topics)
                    search_keys=tuple(
                        dict.fromkeys(rng.choice(ZH + EN) for _ in range(rng.randint(3, 8)))
                    ),
                )
            )
    return ExportDocument(
        format="xtyserver.memory-export",
        version=1,
        exported_at=NOW,
        profile=SharedProfile(nickname="小明", hobbies=["钓鱼"]),
        events=events,
        sessions=[],
        days=[],
    )


@apsw.fts5.StringTokenizer
def bigram_tokenizer(con: apsw.Connection, args: list[str]) -> apsw.Tokenizer:
    """FTS5 tokenizer: the same bigram/word tokens as ``xtyserver.memory.tokenize``."""

    def tokenize_(text: str, flags: int, locale: str | None) -> Iterator[tuple[int, int, str]]:
        yield from token_spans(text)

    return tokenize_  # type: ignore[return-value]


def _match_expr(tokens: Sequence[str]) -> str | None:
    uniq = sorted(set(tokens))
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in uniq) if uniq else None


def _percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples) * 1000, nearest_rank(samples, 99) * 1000


CLOCK: Callable[[], float] = time.perf_counter


def _time(fn: Callable[[str], object], queries: Sequence[str]) -> tuple[float, float]:
    for q in queries[:50]:  # warm up caches
        fn(q)
    out: list[float] = []
    for q in queries:
        t = CLOCK()
        fn(q)
        out.append(CLOCK() - t)
    return _percentiles(out)


def recall_table() -> None:
    """Recall@4 of each tokenizer on the mixed recall set (one doc per case)."""
    conn = apsw.Connection(":memory:")
    conn.register_fts5_tokenizer("xtybigram", bigram_tokenizer)  # type: ignore[arg-type]
    results: dict[str, float] = {}
    for name, tok, to_query in (
        ("fts5 unicode61 (default)", "unicode61", lambda q: q.split()),
        ("fts5 trigram", "trigram", lambda q: [w for w in q.split() if len(w) >= 3]),
        ("fts5 xtybigram (apsw)", "xtybigram", tokenize),
    ):
        conn.execute(f"CREATE VIRTUAL TABLE r_{tok} USING fts5(body, tokenize='{tok}')")
        for i, (s, m, _) in enumerate(CASES, start=1):
            conn.execute(f"INSERT INTO r_{tok}(rowid, body) VALUES (?, ?)", (i, f"{s} {m}"))
        hits = 0
        for i, (_, _, q) in enumerate(CASES, start=1):
            expr = _match_expr(to_query(q))
            if not expr:
                continue
            rows = conn.execute(
                f"SELECT rowid FROM r_{tok} WHERE r_{tok} MATCH ? ORDER BY bm25(r_{tok}) LIMIT 4",
                (expr,),
            ).fetchall()
            hits += any(r[0] == i for r in rows)
        results[name] = hits / len(CASES)
    index = SaveIndex(
        Scope("g", "s"),
        [
            MemoryEvent(i, "g", "s", "event", s, m, 3, "active", False, None, 0, 0, 0)
            for i, (s, m, _) in enumerate(CASES, start=1)
        ],
    )
    results["SaveIndex (bigram BM25)"] = sum(
        any(e.id == i for e in search_memories(None, index, q, limit=4).events)
        for i, (_, _, q) in enumerate(CASES, start=1)
    ) / len(CASES)
    print(f"recall@4 on {len(CASES)} mixed zh/en query-doc pairs:")
    for name, value in results.items():
        print(f"  {name:28s} {value:.2f}")
    conn.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--saves", type=int, default=100)
    ap.add_argument("--per-save", type=int, default=300)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--no-glossary", action="store_true", help="words alone (no game glossary)")
    ap.add_argument(
        "--dims", type=int, default=1024, help="memory vector size (bge-m3: 1,024; 0: no vectors)"
    )
    ap.add_argument(
        "--cpu",
        action="store_true",
        help="time with this thread's CPU clock: on a busy machine, leaves out being descheduled",
    )
    args = ap.parse_args()
    if args.cpu:
        global CLOCK
        CLOCK = time.thread_time
    recall_table()

    rng = random.Random(11)
    queries = [_text(rng, rng.randint(1, 3)) for _ in range(args.queries)]
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        with MemoryStore(Path(tmp) / "bench.sqlite", clock=ManualClock(NOW)) as store:
            store.import_document(build_document(args.saves, args.per_save))
            build_s = time.perf_counter() - t
            scope = Scope(GAMES[0], "save-42")
            glossary = None if args.no_glossary else load_glossary(None).for_game(scope.game_id)
            loads = []
            for _ in range(20):
                t = time.perf_counter()
                rows = store.load_scope(scope)
                index = SaveIndex(scope, rows, glossary=glossary)
                loads.append(time.perf_counter() - t)
            load_p50, load_p99 = _percentiles(loads)
            profile = store.get_profile()
            total = sum(1 for _ in store.list_scopes())

            def in_memory(q: str) -> object:
                return select_memories(
                    profile, index, query_text=q, current_day=60, now=NOW
                ).render()

            def in_memory_search(q: str) -> object:
                return search_memories(None, index, q, current_day=60, limit=4)

            a_sel = _time(in_memory, queries)
            a_search = _time(in_memory_search, queries)

            # With a [models.embedding] route: one unit vector per memory (random here;
            # the cost does not depend on the values), the query's cosine with each (run
            # on a worker thread by the server), then the fused selection.
            vec_rng = random.Random(5)

            def unit() -> array[float]:
                return normalized(vec_rng.gauss(0, 1) for _ in range(args.dims))

            if args.dims:
                for ev in rows:
                    index.set_vector(ev.id, unit())
                snapshot = index.vectors()
                query_vectors = {q: unit() for q in queries[: max(1, len(queries) // 10)]}
                near: dict[str, list[tuple[int, float]]] = {}

                def cosine(q: str) -> object:
                    near[q] = similarities(query_vectors[q], snapshot)
                    return near[q]

                def fused(q: str) -> object:
                    return select_memories(
                        profile, index, query_text=q, current_day=60, now=NOW, similar=near[q]
                    ).render()

                c_cos = _time(cosine, list(query_vectors))
                c_sel = _time(fused, list(query_vectors))

            conn = apsw.Connection(str(store.path))
            conn.register_fts5_tokenizer("xtybigram", bigram_tokenizer)  # type: ignore[arg-type]
            t = time.perf_counter()
            conn.execute(
                "CREATE VIRTUAL TABLE mem_fts USING fts5(subject, summary, game_id UNINDEXED, "
                "save_id UNINDEXED, content='game_memory', content_rowid='id', "
                "tokenize='xtybigram')"
            )
            conn.execute("INSERT INTO mem_fts(mem_fts) VALUES ('rebuild')")
            fts_build_s = time.perf_counter() - t

            def fts(q: str) -> object:
                expr = _match_expr(tokenize(q))
                if expr is None:
                    return []
                return conn.execute(
                    "SELECT m.id, bm25(mem_fts) FROM mem_fts JOIN game_memory m "
                    "ON m.id = mem_fts.rowid WHERE mem_fts MATCH ? AND mem_fts.game_id = ? "
                    "AND mem_fts.save_id = ? AND (m.day IS NULL OR m.day <= ?) "
                    "ORDER BY bm25(mem_fts) LIMIT 4",
                    (expr, scope.game_id, scope.save_id, 60),
                ).fetchall()

            b = _time(fts, queries)
            conn.close()

    print(
        f"\nstore: {args.saves} saves x {args.per_save} events = {args.saves * args.per_save} "
        f"events ({total} scopes), built in {build_s:.1f} s; FTS5 index built in "
        f"{fts_build_s:.1f} s"
    )
    print(
        f"one-time load_scope + SaveIndex build (hello): p50 {load_p50:.2f} ms, "
        f"p99 {load_p99:.2f} ms"
    )
    words = "words alone" if glossary is None else f"glossary of {len(glossary)} entries"
    print(f"\n{args.queries} queries for one {len(rows)}-event save ({words})")
    print(f"{'':42}p50 ms   p99 ms  ({'CPU' if args.cpu else 'wall'} time)")
    print(f"  (a) search_memories (top 4)               {a_search[0]:7.3f}  {a_search[1]:7.3f}")
    print(f"  (a) select_memories + render (full turn)  {a_sel[0]:7.3f}  {a_sel[1]:7.3f}")
    print(f"  (b) FTS5 bm25() scoped in SQL (top 4)     {b[0]:7.3f}  {b[1]:7.3f}")
    print(
        f"  ratio (b)/(a search)                      {b[0] / a_search[0]:7.1f}x "
        f"{b[1] / a_search[1]:7.1f}x"
    )
    print(
        f"goal p99 < 2 ms: (a) full turn {'met' if a_sel[1] < 2 else 'MISSED'}, "
        f"(b) {'met' if b[1] < 2 else 'MISSED'}"
    )
    if args.dims:
        n = len(query_vectors)
        print(f"\nwith memory vectors ({len(snapshot)} x {args.dims} float32, {n} queries)")
        print(f"  (c) cosine with every vector (a thread)   {c_cos[0]:7.3f}  {c_cos[1]:7.3f}")
        print(f"  (c) select_memories fused + render        {c_sel[0]:7.3f}  {c_sel[1]:7.3f}")
        print("  (plus the embedding route's own answer time, capped by embedding_timeout_ms)")


if __name__ == "__main__":
    main()
