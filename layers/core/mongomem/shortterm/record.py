"""Record turns: validate limits, allocate seqs, store. No LLM, embedding or OpenSearch here."""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import TYPE_CHECKING

from mongomem.errors import Conflict, InvalidInput, PayloadTooLarge
from mongomem.models.common import Scope, utcnow
from mongomem.models.turns import (
    NewTurn,
    RecordedTurn,
    RecordTurnsRequest,
    RecordTurnsResponse,
    StoredBatch,
    TurnIn,
)
from mongomem.shortterm.policy import PromotionPolicy
from mongomem.shortterm.ports import AgentConflict, NewBatch, SessionRepository, TokenSeen, TurnRepository
from mongomem.tokens import tokens_in

if TYPE_CHECKING:
    from mongomem.config import MemoryConfig


def estimate_tokens(turn: TurnIn) -> int:
    """The turn's tokens (mongomem.tokens), tool calls included, for the max_tokens promotion rule."""
    size = len(turn.content)
    if turn.tool_calls:
        size += sum(len(c.name) + len(json.dumps(c.arguments)) for c in turn.tool_calls)
    return tokens_in(size)


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


def new_turn(seq: int, turn: TurnIn, token: str | None, now: datetime, recall: bool = False) -> NewTurn:
    """The turn as stored under its seq (`recall`: queue it for the recall indexer when it qualifies)."""
    return NewTurn.model_construct(
        seq=seq,
        role=turn.role,
        content=turn.content,
        timestamp=turn.timestamp or now,
        recorded_at=now,
        tokens=estimate_tokens(turn),
        tool_calls=[c.model_dump() for c in turn.tool_calls] if turn.tool_calls else None,
        tool_call_id=turn.tool_call_id or None,
        name=turn.name or None,
        metadata=turn.metadata or None,
        client_token=token,
        batch_index=None,
        batch_size=None,
        # Queued for the scan job's recall indexer (a partial index holds only these); no embedding here.
        recall_indexed=False if recall and turn.role in RECALL_ROLES and turn.content.strip() else None,
    )


# A retry may re-record turns whose first attempt stored none only after that attempt is surely over
# (the record function's timeout is 10 s); earlier, the first attempt may still be writing.
RETRY_SETTLE_SECONDS = 15

# The roles semantic recall embeds (system prompts and tool output are not conversation).
RECALL_ROLES = frozenset({"user", "assistant"})


class TurnRecorder:
    """Stores a batch of turns with consecutive seqs: one session update, one insert (docs/adr/README.md)."""

    def __init__(
        self,
        sessions: SessionRepository,
        turns: TurnRepository,
        memory: MemoryConfig,
        settle_seconds: float = RETRY_SETTLE_SECONDS,
    ) -> None:
        """`settle_seconds`: how long after a first attempt that stored nothing a retry is told to wait
        (that attempt may still be writing); it must exceed the record function's timeout."""
        self.sessions = sessions
        self.turns = turns
        self.memory = memory
        self.policy = PromotionPolicy.from_config(memory)
        self.settle_seconds = settle_seconds

    def record(
        self,
        scope: Scope,
        session_id: str,
        request: RecordTurnsRequest,
        import_keys: list[str] | None = None,
    ) -> RecordTurnsResponse:
        """`import_keys`: one per turn, for turns of an import (mongomem.shortterm.importing)."""
        check_limits(request, self.memory)
        token = request.client_token
        keys = import_keys
        try:
            first = self._allocate(scope, session_id, request, token)
        except TokenSeen:
            assert token is not None
            return self._replay(scope, session_id, request, token, keys)
        if not self.turns.insert_new(scope, session_id, self._new_turns(request, first, token, keys)):
            # The token's batch is already stored: a retry from beyond the session's recent-token window.
            # The seqs just allocated become a hole the scanner skips; the answer is the original batch.
            assert token is not None
            return self._replay_stored(scope, session_id, request, token, keys)
        return _response(scope, session_id, first, len(request.turns), replayed=False)

    def _allocate(self, scope: Scope, session_id: str, request: RecordTurnsRequest, token: str | None) -> int:
        tokens = sum(estimate_tokens(t) for t in request.turns)
        now = utcnow()
        count = len(request.turns)
        try:
            batch = NewBatch(count, tokens, request.agent_id, token, self.policy.idle_due_at(now))
            allocated = self.sessions.allocate(scope, session_id, batch, now)
        except AgentConflict as exc:
            held = exc.session_agent
            raise Conflict(
                f"session {session_id!r} belongs to "
                + (f"agent {held!r}" if held else "no agent (its first turns named none)")
                + f"; this batch names agent {request.agent_id!r}. A session is one agent's conversation: "
                "record the other agent's turns in a session of its own",
                {"path": "agent_id", "session_id": session_id, "session_agent_id": held},
            ) from None
        if not allocated.size_marked and self.policy.size_reached(
            allocated.pending, allocated.unpromoted_tokens
        ):
            self.sessions.mark_size_due(scope, session_id, now)  # once per promotion, not per turn
        return allocated.last_seq - count + 1

    def _new_turns(
        self, request: RecordTurnsRequest, first: int, token: str | None, keys: list[str] | None = None
    ) -> list[NewTurn]:
        now = utcnow()
        recall = self.memory.recall.enabled
        turns = [new_turn(first + i, t, token, now, recall) for i, t in enumerate(request.turns)]
        if keys is not None:
            for turn, key in zip(turns, keys, strict=True):
                turn.import_key = key
        if token:
            # lets a retry find the whole batch's seqs from any one of its turns; (token, batch_index) is
            # unique per session, so a batch is recorded once whenever its retry comes
            for i, turn in enumerate(turns):
                turn.batch_index, turn.batch_size = i, len(turns)
        return turns

    def _replay(
        self, scope: Scope, session_id: str, request: RecordTurnsRequest, token: str, keys: list[str] | None
    ) -> RecordTurnsResponse:
        """A retried request: answer with the original seqs, finishing the insert if it had failed."""
        stored = self.turns.token_batch(scope, session_id, token)
        if stored is not None:
            return self._finish(scope, session_id, request, token, stored, keys)
        # The first attempt allocated seqs but stored none of its turns (it failed between its two writes).
        seen_at = self.sessions.token_seen_at(scope, session_id, token)
        if seen_at is not None and (utcnow() - seen_at).total_seconds() < self.settle_seconds:
            raise Conflict(
                "the first request with this client_token may still be in progress; retry shortly",
                {"client_token": token, "retry_after_seconds": math.ceil(self.settle_seconds)},
            )
        # Record afresh; the abandoned seqs become a hole the scanner skips (listed as missing_seqs).
        first = self._allocate(scope, session_id, request, None)
        if not self.turns.insert_new(scope, session_id, self._new_turns(request, first, token, keys)):
            # another attempt with this token stored the batch meanwhile: its seqs are the answer
            return self._replay_stored(scope, session_id, request, token, keys)
        return _response(scope, session_id, first, len(request.turns), replayed=True)

    def _replay_stored(
        self, scope: Scope, session_id: str, request: RecordTurnsRequest, token: str, keys: list[str] | None
    ) -> RecordTurnsResponse:
        stored = self.turns.token_batch(scope, session_id, token)
        if stored is None:  # removed in between (erasure, retention): nothing to answer with
            raise Conflict(
                "this client_token's batch changed while retrying; retry shortly", {"client_token": token}
            )
        return self._finish(scope, session_id, request, token, stored, keys)

    def _finish(
        self,
        scope: Scope,
        session_id: str,
        request: RecordTurnsRequest,
        token: str,
        stored: StoredBatch,
        keys: list[str] | None,
    ) -> RecordTurnsResponse:
        """Answer with the stored batch's seqs, inserting its missing turns at their original seqs."""
        size = len(request.turns)
        if stored.size != size:
            raise Conflict(
                "client_token was already used for a different batch",
                {"client_token": token, "original_turns": stored.size},
            )
        if stored.stored < size:
            session = self.sessions.get(scope, session_id)
            if stored.first_seq <= (session.promoted_through_seq if session else 0):
                raise Conflict("this retry came too late: the session was promoted without these turns")
            self.turns.insert_missing(
                scope, session_id, self._new_turns(request, stored.first_seq, token, keys)
            )
        return _response(scope, session_id, stored.first_seq, size, replayed=True)


def _response(scope: Scope, session_id: str, first: int, count: int, replayed: bool) -> RecordTurnsResponse:
    return RecordTurnsResponse(
        session_id=session_id,
        user_id=scope.user_id,
        turns=[RecordedTurn(turn_id=f"{session_id}:{first + i}", seq=first + i) for i in range(count)],
        replayed=replayed,
    )
