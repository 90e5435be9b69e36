"""Importing past conversations (POST /v1/import, `mongomem import FILE`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from mongomem.models.base import Model
from mongomem.models.common import USER_HELP, Identifier, SafeMapping, Text, UtcDateTime
from mongomem.models.turns import Name, Role

ImportFormat = Literal["turns", "jsonl", "locomo"]
# Turns one import request may carry (the CLI sends a file in requests of at most this many).
MAX_IMPORT_TURNS = 2_000
# Idle-separated stretches (each one snapshot) one import request may cut: each is recorded and promoted
# on its own (~80 ms on the local stack), so a request of 2,000 turns two hours apart would hold the
# memory API for minutes and outlast a deployed stack's 30 s; the CLI halves a request refused so.
MAX_IMPORT_STRETCHES = 100


class ImportTurn(Model):
    """One past turn: its session, who said it and when (the original time is required)."""

    model_config = ConfigDict(extra="forbid")

    session_id: Identifier
    role: Role
    content: Text = Field(min_length=1)
    timestamp: UtcDateTime
    name: Name | None = None
    metadata: SafeMapping | None = None


class ImportRequest(Model):
    """Past conversations in one of three shapes.

    - `turns`: `{"format": "turns", "turns": [{"session_id", "role", "content", "timestamp", ...}]}`
    - `jsonl`: `{"format": "jsonl", "data": "<one such turn per line>"}`
    - `locomo`: `{"format": "locomo", "data": <a LoCoMo sample, or a list of them>}`: `speaker_a` is the
      user, the other speaker the assistant; session N's turns are 10 s apart from its `session_N_date_time`.
    """

    model_config = ConfigDict(extra="forbid")

    user_id: Identifier | None = Field(None, description=USER_HELP)
    format: ImportFormat = Field(
        "turns", description="turns, jsonl or locomo: the shape of `turns` or `data`"
    )
    turns: list[ImportTurn] | None = Field(
        None, max_length=MAX_IMPORT_TURNS, description="format turns: the turns, each with its session_id"
    )
    data: str | dict[str, Any] | list[Any] | None = Field(
        None, description="format jsonl: one turn per line; format locomo: a LoCoMo sample or a list of them"
    )


class ImportReport(Model):
    """What an import did. Re-importing the same history reports every turn as `already_imported`."""

    sessions: int = 0
    turns_received: int = 0
    turns_recorded: int = 0
    already_imported: int = 0
    snapshots: int = 0
    # turns kept for the scan job: their session's last stretch is younger than the idle timeout
    turns_left_for_scan: int = 0
    # extraction messages sent (one per snapshot and enabled kind); recall indexes the turns on the next scans
    extraction_queued: int = 0
