"""Document ids. '|' cannot occur in identifiers (models.common.ID_PATTERN), so every key is unambiguous.

Deterministic ids are how the stores make retries and races harmless: a turn's seq and a snapshot's
first seq name their document, so a second insert collides instead of duplicating.
"""

from __future__ import annotations

import hashlib

from mongomem.models.common import Scope


def session_key(scope: Scope, session_id: str) -> str:
    return f"{scope.tenant}|{scope.user_id}|{session_id}"


def turn_key(scope: Scope, session_id: str, seq: int) -> str:
    return f"{session_key(scope, session_id)}#{seq}"


def snapshot_id(scope: Scope, session_id: str, from_seq: int) -> str:
    # Two scanners cutting the same range collide on _id instead of duplicating it.
    digest = hashlib.sha256(f"{session_key(scope, session_id)}#{from_seq}".encode()).hexdigest()
    return "snap-" + digest[:24]


def resource_key(tenant: str, user_id: str, agent_id: str | None = None) -> str:
    """A user's working-memory record (resource scope), or one agent's of the user."""
    return f"{tenant}|{user_id}" if agent_id is None else f"{tenant}|{user_id}|agent|{agent_id}"


def thread_key(tenant: str, user_id: str, thread_id: str) -> str:
    return f"{tenant}|{user_id}|{thread_id}"
