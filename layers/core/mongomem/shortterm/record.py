"""Record turns: validate limits, allocate seqs, store. No LLM, embedding or OpenSearch here."""

from __future__ import annotations

import json
import math
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


def _turn_doc(
    scope: Scope, session_id: str, seq: int, turn: TurnIn, token: str | None, now: Any, recall: bool = False
) -> dict[str, Any]:
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
    if recall and turn.role in RECALL_ROLES and turn.content.strip():
        # Queued for the scan job's recall indexer (a partial index holds only these); no embedding here.
        doc["recall_indexed"] = False
    return doc


# A retry may re-record turns whose first attempt stored none only after that attempt is surely over
# (the record function's timeout is 10 s); earlier, the first attempt may still be writing.
RETRY_SETTLE_SECONDS = 15

# The roles semantic recall embeds (system prompts and tool output are not conversation).
RECALL_ROLES = frozenset({"user", "assistant"})


def record_turns(
    store: MongoStore,
    memory: MemoryConfig,
    scope: Scope,
    session_id: str,
    request: RecordTurnsRequest,
    settle_seconds: float = RETRY_SETTLE_SECONDS,
) -> RecordTurnsResponse:
    """Store a batch of turns with consecutive seqs: one session update, one insert.

    `settle_seconds`: how long after a first attempt that stored nothing a retry is told to wait
    (that attempt may still be writing); it must exceed the record function's timeout.
    """
    check_limits(request, memory)
    token = request.client_token
    try:
        first = _allocate(store, memory, scope, session_id, request, token)
    except TokenSeen:
        assert token is not None
        return _replay(store, memory, scope, session_id, request, token, settle_seconds)
    if not _insert_new(store, scope, session_id, request, first, token, memory.recall.enabled):
        # The token's batch is already stored: a retry from beyond the session's recent-token window.
        # The seqs just allocated become a hole the scanner skips; the answer is the original batch.
        assert token is not None
        return _replay_stored(store, memory, scope, session_id, request, token)
    return _response(scope, session_id, first, len(request.turns), replayed=False)


def _allocate(
    store: MongoStore,
    memory: MemoryConfig,
    scope: Scope,
    session_id: str,
    request: RecordTurnsRequest,
    token: str | None,
) -> int:
    tokens = sum(estimate_tokens(t) for t in request.turns)
    session = store.allocate(
        scope, session_id, request.agent_id, len(request.turns), tokens, token, policy_for(memory), utcnow()
    )
    return int(session["last_seq"]) - len(request.turns) + 1


def _response(scope: Scope, session_id: str, first: int, count: int, replayed: bool) -> RecordTurnsResponse:
    return RecordTurnsResponse(
        session_id=session_id,
        user_id=scope.user_id,
        turns=[RecordedTurn(turn_id=f"{session_id}:{first + i}", seq=first + i) for i in range(count)],
        replayed=replayed,
    )


def _docs(
    scope: Scope,
    session_id: str,
    request: RecordTurnsRequest,
    first: int,
    token: str | None,
    recall: bool,
) -> list[dict[str, Any]]:
    now = utcnow()
    size = len(request.turns)
    docs = [
        _turn_doc(scope, session_id, first + i, t, token, now, recall) for i, t in enumerate(request.turns)
    ]
    if token:
        # lets a retry find the whole batch's seqs from any one of its turns; (token, batch_index) is
        # unique per session, so a batch is recorded once whenever its retry comes
        for i, doc in enumerate(docs):
            doc["batch_index"], doc["batch_size"] = i, size
    return docs


def _insert_new(
    store: MongoStore,
    scope: Scope,
    session_id: str,
    request: RecordTurnsRequest,
    first: int,
    token: str | None,
    recall: bool,
) -> bool:
    return store.insert_new_turns(_docs(scope, session_id, request, first, token, recall))


def _insert(
    store: MongoStore,
    scope: Scope,
    session_id: str,
    request: RecordTurnsRequest,
    first: int,
    token: str | None,
    recall: bool,
) -> None:
    store.insert_turns(_docs(scope, session_id, request, first, token, recall))


def _replay(
    store: MongoStore,
    memory: MemoryConfig,
    scope: Scope,
    session_id: str,
    request: RecordTurnsRequest,
    token: str,
    settle_seconds: float,
) -> RecordTurnsResponse:
    """A retried request: answer with the original seqs, finishing the insert if it had failed."""
    size = len(request.turns)
    stored = store.turns_by_token(scope, session_id, token)
    if stored:
        return _finish(store, memory, scope, session_id, request, token, stored)
    # The first attempt allocated seqs but stored none of its turns (it failed between its two writes).
    seen_at = store.token_seen_at(scope, session_id, token)
    if seen_at is not None and (utcnow() - seen_at).total_seconds() < settle_seconds:
        raise Conflict(
            "the first request with this client_token may still be in progress; retry shortly",
            {"client_token": token, "retry_after_seconds": math.ceil(settle_seconds)},
        )
    # Record afresh; the abandoned seqs become a hole the scanner skips (listed as missing_seqs).
    first = _allocate(store, memory, scope, session_id, request, None)
    if not _insert_new(store, scope, session_id, request, first, token, memory.recall.enabled):
        # another attempt with this token stored the batch meanwhile: its seqs are the answer
        return _replay_stored(store, memory, scope, session_id, request, token)
    return _response(scope, session_id, first, size, replayed=True)


def _replay_stored(
    store: MongoStore,
    memory: MemoryConfig,
    scope: Scope,
    session_id: str,
    request: RecordTurnsRequest,
    token: str,
) -> RecordTurnsResponse:
    stored = store.turns_by_token(scope, session_id, token)
    if not stored:  # removed in between (erasure, retention): nothing to answer with
        raise Conflict(
            "this client_token's batch changed while retrying; retry shortly", {"client_token": token}
        )
    return _finish(store, memory, scope, session_id, request, token, stored)


def _finish(
    store: MongoStore,
    memory: MemoryConfig,
    scope: Scope,
    session_id: str,
    request: RecordTurnsRequest,
    token: str,
    stored: list[dict[str, Any]],
) -> RecordTurnsResponse:
    """Answer with the stored batch's seqs, inserting its missing turns at their original seqs."""
    size = len(request.turns)
    if stored[0].get("batch_size") != size:
        raise Conflict(
            "client_token was already used for a different batch",
            {"client_token": token, "original_turns": stored[0].get("batch_size")},
        )
    first = stored[0]["seq"] - stored[0].get("batch_index", 0)
    if len(stored) < size:
        session = store.get_session(scope, session_id) or {}
        if first <= session.get("promoted_through_seq", 0):
            raise Conflict("this retry came too late: the session was promoted without these turns")
        _insert(store, scope, session_id, request, first, token, memory.recall.enabled)
    return _response(scope, session_id, first, size, replayed=True)
