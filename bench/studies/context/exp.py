"""Strategies for the context block, evaluated on the dev split (see harness.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Case, Provenance, cases, evaluate, open_stack

STATE: dict[str, Any] = {}
OUT = sys.stdout
sys.stdout = sys.stderr  # the handlers' metric lines


def to_dia(conv: str, ids: list[str]) -> set[str]:
    found: set[str] = set()
    for i in ids:
        if i in STATE["maps"][conv]:
            found.add(STATE["maps"][conv][i])
        elif i.startswith("mem-"):
            found |= STATE["prov"].of(conv, i)
    return found


def builder(tuning: dict[str, Any] | None = None, **options: Any) -> Any:
    from mongomem.models.common import Principal, Scope
    from mongomem.models.recall import ContextRequest
    from mongomem.retrieval.block.items import Tuning
    from mongomem.retrieval.context import ContextBuilder

    def run(stack: Any, case: Case, budget: int) -> tuple[set[str], str, int]:
        svc = stack.services
        if "b" not in STATE.setdefault(id(run), {}):
            STATE[id(run)]["b"] = ContextBuilder(
                svc.turns,
                svc.working_memory,
                svc.working_memory_config.scope,
                svc.search,
                svc.recall,
                svc.kinds,
                pending=None,
                tuning=Tuning(**(tuning or {})),
            )
        scope = Scope(tenant="default", user_id=case.conv)
        principal = Principal(tenant="default")
        req = ContextRequest(session_id="ask", query=case.question, token_budget=budget, **options)
        resp = STATE[id(run)]["b"].build(principal, scope, req)
        ids = [i for v in resp.ids.values() for i in v]
        return to_dia(case.conv, ids), resp.context, resp.tokens

    return run


def bm25(stack: Any, case: Case, budget: int) -> tuple[set[str], str, int]:
    ids, text = STATE["hist"][case.conv].bm25(case.question, budget)
    return ids, text, len(text) // 4 + 1


def recall_pack(top_k: int = 100, span: int = 0) -> Any:
    """The recalled matches best first (and their neighbours right after, when span), packed to the budget."""
    from mongomem.models.common import Scope
    from mongomem.models.recall import RecallRequest

    cache: dict[str, Any] = {}

    def run(stack: Any, case: Case, budget: int) -> tuple[set[str], str, int]:
        scope = Scope(tenant="default", user_id=case.conv)
        if case.question not in cache:
            cache[case.question] = stack.services.recall.recall(
                scope, RecallRequest(query=case.question, top_k=top_k, message_range=span)
            )
        found = cache[case.question]
        turns = {t.turn_id: t for g in found.threads for t in g.turns}
        order: list[str] = []
        for m in found.matched:
            order.append(m)
            if span:
                t = turns[m]
                for n in turns.values():
                    if n.thread == t.thread and 0 < abs(n.seq - t.seq) <= span:
                        order.append(n.turn_id)
        kept: list[str] = []
        used = 0
        seen: set[str] = set()
        for tid in order:
            if tid in seen:
                continue
            t = turns[tid]
            line = f"[{t.timestamp.day} {t.timestamp:%B %Y}] {t.name or t.role}: {t.content}"
            if (used + len(line) + 1) // 4 + 1 > budget:
                continue
            seen.add(tid)
            kept.append(line)
            used += len(line) + 1
        text = "\n".join(kept)
        return to_dia(case.conv, list(seen)), text, len(text) // 4 + 1

    return run


STRATEGIES = {
    "recall100": recall_pack(),
    "recall100_span1": recall_pack(span=1),
    "defaults": builder(),
    "bm25": bm25,
    "range0": builder(message_range=0),
    "no_memories": builder(memories_top_k=0),
    "share0.2": builder({"neighbour_share": 0.2}),
    "share0.5": builder({"neighbour_share": 0.5}),
    "exp0.5": builder({"token_exponent": 0.5}),
    "exp0": builder({"token_exponent": 0.0}),
    "mem0.5": builder({"memory_weight": 0.5}),
    "mem2": builder({"memory_weight": 2.0}),
    "nodates": builder({"resolve_dates": False}),
    "v2": builder({"token_exponent": 0.0, "memory_weight": 0.5}),
    "v2_mem0.25": builder({"token_exponent": 0.0, "memory_weight": 0.25}),
    "v2_day": builder({"token_exponent": 0.0, "memory_weight": 0.5, "recalled_time": False}),
    "v2_nomem": builder({"token_exponent": 0.0}, memories_top_k=0),
    "mem_pool200": builder({"tokens_per_memory": 200}),
}


def main() -> None:
    data, stack_dir, *names = sys.argv[1:]
    stack = open_stack(Path(data), Path(stack_dir))
    try:
        all_cases, STATE["maps"], STATE["hist"] = cases(Path(data), stack)
        STATE["prov"] = Provenance(stack, STATE["maps"])
        for name in names or list(STRATEGIES):
            dump = Path(os.environ["DUMP"]) if os.environ.get("DUMP") else None
            budgets = [int(b) for b in os.environ.get("BUDGETS", "1000,2000,4000").split(",")]
            print(
                json.dumps(evaluate(name, STRATEGIES[name], stack, all_cases, budgets, dump)),
                file=OUT,
                flush=True,
            )
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
