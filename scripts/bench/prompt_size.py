#!/usr/bin/env python3
"""Benchmark: prompt size per turn as one save grows from 10 to 3,000 events.

For each save size the save is loaded from a real store (the same
``SaveIndex`` the server builds at hello), this turn's memories are chosen with
``select_memories`` under the default budget, and the turn's messages are
assembled with ``build_messages`` (default persona and data rules, the
memories fenced in the final user message, no game facts, no history). The
"inject everything" column is the same prompt with every eligible event
rendered into it instead. Tokens are ``approx_tokens`` (the estimate the budget
itself uses); each size is the median over 50 questions.

Usage: ``python scripts/bench/prompt_size.py [--sizes 10 30 100 300 1000 3000]``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval import GAMES, NOW, _text, build_document  # noqa: E402

from xtyserver.clock import ManualClock  # noqa: E402
from xtyserver.memory.retrieval import (  # noqa: E402
    SaveIndex,
    is_eligible,
    render_event,
    select_memories,
)
from xtyserver.memory.sqlite.store import MemoryStore  # noqa: E402
from xtyserver.memory.tokenize import approx_tokens  # noqa: E402
from xtyserver.memory.types import Scope  # noqa: E402
from xtyserver.session.prompt import PromptTexts, build_messages  # noqa: E402
from xtyserver.session.settings import Texts  # noqa: E402

DAY = 60


_TEXTS = Texts()
_PROMPT_TEXTS = PromptTexts(rules=_TEXTS.data_rules, ack=_TEXTS.data_ack, tag=_TEXTS.data_tag)


def _tokens(memory_text: str, question: str, identity: str) -> int:
    messages = build_messages(
        identity=identity,
        memory_text=memory_text,
        text=question,
        texts=_PROMPT_TEXTS,
    )
    return approx_tokens(json.dumps(messages, ensure_ascii=False))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 30, 100, 300, 1000, 3000])
    args = ap.parse_args()
    persona = Texts().persona
    rng = random.Random(5)
    questions = [_text(rng, rng.randint(1, 3)) for _ in range(50)]
    print(f"{'events':>7s} {'eligible':>8s} {'selected':>16s} {'inject all':>11s} {'ratio':>7s}")
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            store = MemoryStore(Path(tmp) / "m.sqlite", clock=ManualClock(NOW))
            with store:
                store.import_document(build_document(1, size, seed=size))
                scope = Scope(GAMES[0], "save-0")  # the save build_document(1, ...) fills
                index = SaveIndex(scope, store.load_scope(scope))
                profile = store.get_profile()
        eligible = [ev for ev in index.events() if is_eligible(ev, DAY)]
        if not eligible:
            raise SystemExit(f"no eligible event in {scope}: the benchmark measures nothing")
        everything = "\n".join(render_event(ev) for ev in eligible)
        selected = [
            _tokens(
                select_memories(profile, index, query_text=q, current_day=DAY, now=NOW).render(),
                q,
                persona,
            )
            for q in questions
        ]
        full = statistics.median(_tokens(everything, q, persona) for q in questions)
        chosen = statistics.median(selected)
        spread = (max(selected) - min(selected)) / 2
        print(
            f"{size:7d} {len(eligible):8d} {chosen:10.0f} ±{spread:4.0f} {full:11.0f}"
            f" {full / chosen:6.1f}x"
        )
    print("(tokens: approx_tokens of the JSON messages; ± is half the min-max range)")


if __name__ == "__main__":
    main()
