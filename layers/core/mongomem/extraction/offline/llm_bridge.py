"""TEMPORARY BRIDGE, to be removed once the extraction pipeline calls `OfflineProposer.propose()`.

The pipeline of today asks an `LLMProvider` and passes the snapshot's turns in `LLMRequest.context`;
`OfflineExtractor` reads them from there, calls `propose()` and answers with the JSON an LLM would
give. Its `reconcile` answer (same key and value -> REINFORCE, same key -> UPDATE, cosine >= 0.9 ->
REINFORCE, else ADD) goes with it when reconciliation decides by rules without an LLM.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, date, datetime
from typing import Any

from mongomem.extraction.offline.proposer import OfflineProposer
from mongomem.extraction.proposal import TurnView
from mongomem.extraction.schemas import ReconcileAnswer
from mongomem.models.memory import norm
from mongomem.ports import LLMError, LLMRequest, LLMResult

REINFORCE_SCORE = 0.9


class OfflineExtractor:
    """LLMProvider over the offline proposer (the bridge; see the module docstring)."""

    name = "offline"
    offline = True

    def __init__(self, proposer: OfflineProposer | None = None) -> None:
        self.proposer = proposer or OfflineProposer()

    def ready(self) -> tuple[bool, str]:
        return True, "offline pattern extractor: no network, deterministic"

    def complete_json(self, request: LLMRequest) -> LLMResult:
        started = time.perf_counter()
        context = request.context if isinstance(request.context, dict) else {}
        if request.task == "reconcile":
            text = _reconcile(context)
        elif request.task in self.proposer.kinds:
            items = self.proposer.propose(request.task, turns_of(context), str(context.get("user_id") or ""))
            text = json.dumps({"items": items}, ensure_ascii=False)
        else:
            raise LLMError(f"the offline extractor has no rules for task {request.task!r}")
        elapsed = round((time.perf_counter() - started) * 1000, 3)
        return LLMResult(text=text, model=self.proposer.name, latency_ms=elapsed)


def _when(value: Any) -> datetime | None:
    """An ISO timestamp (or a date) as an aware datetime; naive ones are taken as UTC."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            try:
                value = datetime.combine(date.fromisoformat(value.strip()[:10]), datetime.min.time())
            except ValueError:
                return None
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def turns_of(context: dict[str, Any]) -> list[TurnView]:
    """The context's turns; malformed entries, and turns with neither their own time nor the
    snapshot's, are skipped."""
    raw = context.get("turns")
    snapshot_time = _when(context.get("snapshot_time"))
    out: list[TurnView] = []
    for i, t in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(t, dict):
            continue
        content, when = t.get("content"), _when(t.get("timestamp")) or snapshot_time
        if not isinstance(content, str) or not content.strip() or when is None:
            continue
        seq = t.get("seq")
        if isinstance(seq, bool) or not isinstance(seq, int):
            try:
                seq = int(str(seq))
            except ValueError:
                seq = i
        name = t.get("name")
        role = str(t.get("role") or "")
        out.append(TurnView(seq, role, content, when, name if isinstance(name, str) else None))
    return out


def _value_of(memory: dict[str, Any]) -> str:
    payload = memory.get("payload")
    if isinstance(payload, dict):
        for field_name in ("value", "definition", "summary"):
            value = payload.get(field_name)
            if isinstance(value, str) and value.strip():
                return norm(value)
        steps = payload.get("steps")
        if isinstance(steps, list) and steps:
            return norm(" ".join(str(s) for s in steps))
    text = memory.get("text")
    return norm(text) if isinstance(text, str) else ""


def _score(candidate: dict[str, Any]) -> float:
    score = candidate.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float) or score != score:  # NaN
        return 0.0
    return float(score)


def _reconcile(context: dict[str, Any]) -> str:
    new = context.get("new") if isinstance(context.get("new"), dict) else {}
    raw = context.get("candidates")
    candidates = [
        c
        for c in (raw if isinstance(raw, list) else [])
        if isinstance(c, dict) and c.get("id") not in (None, "")
    ]
    assert isinstance(new, dict)
    key, value = norm(str(new.get("key") or "")), _value_of(new)
    ranked = sorted(enumerate(candidates), key=lambda ic: (-_score(ic[1]), ic[0]))
    same_key = [c for _, c in ranked if key and norm(str(c.get("key") or "")) == key]
    equal = [c for c in same_key if value and _value_of(c) == value]
    answer: dict[str, Any]
    if equal:
        answer = {
            "decision": "REINFORCE",
            "target_id": str(equal[0]["id"]),
            "reason": "same key and same value",
        }
    elif same_key:
        reason = "same key with a different value: the new statement replaces it"
        answer = {"decision": "UPDATE", "target_id": str(same_key[0]["id"]), "reason": reason}
    elif ranked and _score(ranked[0][1]) >= REINFORCE_SCORE:
        best = ranked[0][1]
        reason = f"near-identical meaning (cosine {_score(best):.2f})"
        answer = {"decision": "REINFORCE", "target_id": str(best["id"]), "reason": reason}
    else:
        answer = {"decision": "ADD", "target_id": None, "reason": "no candidate with this key or meaning"}
    return ReconcileAnswer.model_validate(answer).model_dump_json()
