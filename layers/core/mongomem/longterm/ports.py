"""What long-term memory logic needs from storage: the memory repository (one document per version)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any, Protocol

from mongomem.models.common import Scope
from mongomem.models.memory import (
    DecisionRecord,
    EvidenceRef,
    MemoryFilter,
    MemoryRecord,
    MemoryView,
    ObservedRange,
    PayloadFilter,
)


class MemoryRepository(Protocol):
    """Memory versions scoped by (tenant, user_id); every read and write names its scope. A tenant's org
    memories live in the scope (tenant, ORG_OWNER); reads may name a `MemoryView` (the user's private
    memories and the tenant's org ones at once) where they take `Scope | MemoryView`."""

    # -- writes
    def insert(self, record: MemoryRecord) -> bool:
        """Store a new version; False when that exact version exists already (a redelivery)."""
        ...

    def supersede(self, scope: Scope, old_id: str, new_id: str, at: datetime) -> bool:
        """End an active version, replaced by `new_id`; False when it was not active (any more)."""
        ...

    def repair_lineage(
        self, scope: Scope, lineage_id: str, newest_version: int, newest_id: str, at: datetime
    ) -> None:
        """Supersede older active versions a crash between insert and supersede left behind."""
        ...

    def reinforce(
        self,
        scope: Scope,
        memory_id: str,
        evidence: EvidenceRef,
        decision: DecisionRecord,
        at: datetime,
        *,
        merged_payload: dict[str, Any] | None = None,
        merged_text: str | None = None,
        status: str = "active",
        earliest: bool = True,
        restated: Mapping[str, Any] | None = None,
    ) -> MemoryRecord | None:
        """+1, evidence and decision appended (once per snapshot), payload merged, on a version of this
        status (an active one, or a `proposed` one another user backs); None if not applied. `earliest`:
        an earlier observation moves the version's observed_at back (not for one user's word on shared
        memory). `restated`: fields the restatement sets on the version (its `expires_at`, `metadata`)."""
        ...

    def retract(
        self, scope: Scope, memory_id: str, evidence: EvidenceRef, decision: DecisionRecord, at: datetime
    ) -> MemoryRecord | None:
        """End an active version the user said is not (or no longer) true: superseded with no successor,
        valid until `at`, the retraction's evidence and decision appended; None when it is not active."""
        ...

    def activate(
        self,
        scope: Scope,
        memory_id: str,
        supersedes: str,
        decision: DecisionRecord,
        at: datetime,
        payload: dict[str, Any],
        text: str,
        carried: dict[str, Any],
    ) -> MemoryRecord | None:
        """A `proposed` version becomes the active one (superseding `supersedes`, which the caller then
        supersedes), with `carried`: the fields it takes from that version (expiry, metadata, the time it
        is dated by); None when it is no longer proposed."""
        ...

    def withdraw(self, scope: Scope, memory_id: str, at: datetime) -> None:
        """An activated version whose predecessor another writer replaced first goes back to `proposed`
        (its activation's decision taken back)."""
        ...

    def drop_proposals(self, scope: Scope, user_id: str, ids: list[str]) -> list[str]:
        """Delete these pending proposals where `user_id` alone stands behind them (no other user's
        evidence, no tenant's); the ids deleted."""
        ...

    def record_use(
        self, scope: Scope, memory_id: str, user_id: str, window: str, outcome: str, at: datetime
    ) -> tuple[MemoryRecord | None, bool]:
        """Count a user's success or failure of using an active version, once per user and `window`: a
        second report in the window replaces the first (the counts move only if the outcome changed).
        Returns (the version, whether its counts changed); (None, False) when it is not active."""
        ...

    def set_index_state(self, ids: list[str], state: str, at: datetime) -> None: ...

    def set_embeddings(self, vectors: list[tuple[str, list[float]]], model: str, at: datetime) -> None:
        """Versions re-embedded with another model (`mongomem reindex --re-embed`), index pending."""
        ...

    def forget_deleted_embeddings(self) -> int:
        """Drop the vectors deleted versions still hold (older deployments kept them)."""
        ...

    def delete_lineage(self, scope: Scope, lineage_id: str, at: datetime) -> int: ...

    def set_keys(self, keys: list[tuple[str, str]], at: datetime) -> None:
        """Versions given the match key their kind computes now (`mongomem migrate` re-keys)."""
        ...

    # -- reads
    def get(self, scope: Scope | MemoryView, memory_id: str) -> MemoryRecord | None: ...

    def get_many(self, scope: Scope | MemoryView, ids: list[str]) -> list[MemoryRecord]: ...

    def active_by_key(
        self, scope: Scope, kind: str, key: str, agent_id: str | None = None
    ) -> list[MemoryRecord]:
        """The active versions with this match key in one agent's part of the scope (None: the shared
        part), newest first."""
        ...

    def active_names(self, scope: Scope, kind: str, fields: list[str]) -> list[tuple[str, dict[str, Any]]]:
        """Every active version of the kind in the scope, as its match key and these payload fields
        only: how a name said as another memory's alias is found (a read of the kind's keys, not of
        their documents)."""
        ...

    def with_evidence(self, scope: Scope, kind: str, key: str, snapshot_id: str) -> MemoryRecord | None:
        """A version of this key that already holds this snapshot's evidence (the redelivery check)."""
        ...

    def by_keys(
        self, scope: Scope, kind: str, keys: list[str], snapshot_id: str | None
    ) -> list[MemoryRecord]:
        """In one read, for a batch of match keys: their active versions and the versions that already
        hold this snapshot's evidence (any status); never an expired version (expired means gone)."""
        ...

    def lineage(self, scope: Scope, lineage_id: str) -> list[MemoryRecord]: ...

    def list_page(
        self,
        scope: Scope | MemoryView,
        kind: str | None,
        status: str | None,
        limit: int,
        before: datetime | None,
        *,
        payload: PayloadFilter | None = None,
        observed: ObservedRange | None = None,
        filters: MemoryFilter | None = None,
    ) -> list[MemoryRecord]: ...

    def domains(self, tenant: str, user_id: str) -> list[tuple[str, int]]:
        """(domain, active taxonomic terms) the user can see (their own and the org's), most terms first."""
        ...

    def pending_index(self, older_than: datetime, limit: int) -> list[MemoryRecord]: ...

    def shared_keys(self, tenant: str, user_id: str | None, limit: int) -> list[list[MemoryRecord]]:
        """Groups of at least two active versions with one owner (user_id; None: any of the tenant's),
        kind and match key, at most `limit` groups, ordered by owner, kind and key."""
        ...

    def all_versions(self, batch: int = 500) -> Iterator[MemoryRecord]:
        """Every version that is not deleted (rebuilding the search index, re-embedding)."""
        ...

    def embedding_models(self) -> set[tuple[str, int]]:
        """Every (model, dimension) a stored vector comes from (deleted versions hold none)."""
        ...

    def count_embedded_otherwise(self, model: str, dim: int, tenant: str | None = None) -> int:
        """Live versions whose vector is not from (model, dim): what `reindex --re-embed` has to do."""
        ...

    def embedded_otherwise(self, model: str, dim: int, limit: int) -> list[MemoryRecord]: ...

    def decisions_per_day(
        self, tenant: str, user_id: str | None, since: datetime
    ) -> list[tuple[str, str, int]]:
        """(UTC day "YYYY-MM-DD", decision, count) of the decisions recorded since `since`."""
        ...
