"""Record turns: validate limits, allocate seqs, store. No LLM, embedding or OpenSearch here."""

from __future__ import annotations

import json
from typing import Any

from mongomem.adapters.mongo import MongoStore, PromotionPolicy, TokenSeen, session_key, turn_key
from mongomem.config import MemoryConfig
from mongomem.errors import Conflict, InvalidInput, PayloadTooLarge
from mongomem.models.common import Scope, utcnow
from mongomem.models.turns import RecordedTurn, RecordTurnsRequest, RecordTurnsResponse, TurnIn


def estimate_tokens(turn: TurnIn) -> int:
    """A cheap token estimate (about 4 characters a token) for the max_tokens promotion rule."""
    size = len(turn.content)
    if turn.tool_calls:
        size += sum(len(c.name) + len(json.dumps(c.arguments)) for c in turn.tool_calls)
    return size // 4 + 1


def policy_for(memory: MemoryConfig) -> PromotionPolicy:
    snap = memory.snapshot
    return PromotionPolicy(snap.max_messages, snap.max_tokens, snap.idle_seconds)


def check_limits(request: RecordTurnsRequest, memory: MemoryConfig) -> None:
    """Refuse the whole batch before any write when one turn breaks a configured limit."""
    limits = memory.limits
    if len(request.turns) > limits.max_batch:
        raise InvalidInput(
            f"a batch holds at most {limits.max_batch} turns; got {len(request.turns)}",
            {"max_batch": limits.max_batch},
        )
    for index, turn in enumerate(request.turns):
        size = len(turn.content.encode("utf-8"))
        if size > limits.max_content_bytes:
            raise PayloadTooLarge(
                f"turns[{index}].content is {size} bytes; the limit is {limits.max_content_bytes}",
                {"path": f"turns.{index}.content", "max_content_bytes": limits.max_content_bytes},
            )


def _turn_doc(scope: Scope, session_id: str, seq: int, turn: TurnIn, token: str | None, now: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "_id": turn_key(session_key(scope, session_id), seq),
        "tenant": scope.tenant,
        "user_id": scope.user_id,
        "session_id": session_id,
        "seq": seq,
        "role": turn.role,
        "content": turn.content,
        "timestamp": turn.timestamp or now,
        "recorded_at": now,
        "tokens": estimate_tokens(turn),
    }
    if turn.tool_calls:
        doc["tool_calls"] = [c.model_dump() for c in turn.tool_calls]
    if turn.tool_call_id:
        doc["tool_call_id"] = turn.tool_call_id
    if turn.name:
        doc["name"] = turn.name
    if turn.metadata:
        doc["metadata"] = turn.metadata
    if token:
        doc["client_token"] = token
    return doc


def record_turns(
    store: MongoStore, memory: MemoryConfig, scope: Scope, session_id: str, request: RecordTurnsRequest
) -> RecordTurnsResponse:
    """Store a batch of turns with consecutive seqs: one session update, one insert."""
    check_limits(request, memory)
    token = request.client_token
    tokens = sum(estimate_tokens(t) for t in request.turns)
    try:
        session = store.allocate(
            scope, session_id, request.agent_id, len(request.turns), tokens, token, policy_for(memory)
        )
    except TokenSeen:
        assert token is not None
        return _replay(store, scope, session_id, request, token)
    first = session["last_seq"] - len(request.turns) + 1
    _insert(store, scope, session_id, request, first, token)
    return RecordTurnsResponse(
        session_id=session_id,
        user_id=scope.user_id,
        turns=[RecordedTurn(turn_id=f"{session_id}:{first + i}", seq=first + i) for i in range(len(request.turns))],
    )


def _insert(
    store: MongoStore, scope: Scope, session_id: str, request: RecordTurnsRequest, first: int, token: str | None
) -> None:
    now = utcnow()
    docs = [_turn_doc(scope, session_id, first + i, t, token, now) for i, t in enumerate(request.turns)]
    store.insert_turns(docs)


def _replay(
    store: MongoStore, scope: Scope, session_id: str, request: RecordTurnsRequest, token: str
) -> RecordTurnsResponse:
    """A retried request: answer with the original seqs, finishing the insert if it had failed."""
    alloc = store.token_allocation(scope, session_id, token)
    if alloc is None:
        raise Conflict("client_token was already used and its record has expired", {"client_token": token})
    if alloc["n"] != len(request.turns):
        raise Conflict(
            "client_token was already used for a different batch",
            {"client_token": token, "original_turns": alloc["n"]},
        )
    first = alloc["first"]
    if first <= alloc["promoted_through_seq"]:
        # Already promoted; anything missing by now was declared lost by the scanner.
        have = {d["seq"] for d in store.turns_in_range(scope, session_id, first, first + alloc["n"] - 1)}
        if len(have) != alloc["n"]:
            raise Conflict("this retry came too late: the session moved on without these turns")
    else:
        _insert(store, scope, session_id, request, first, token)
    return RecordTurnsResponse(
        session_id=session_id,
        user_id=scope.user_id,
        turns=[RecordedTurn(turn_id=f"{session_id}:{first + i}", seq=first + i) for i in range(alloc["n"])],
        replayed=True,
    )
