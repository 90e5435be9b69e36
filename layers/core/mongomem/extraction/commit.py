"""The shared commit step: validate proposed items by their kind, embed, reconcile, store, index.

Extraction (any proposer) and the API's direct writes both end here, so a memory is written one way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mongomem.extraction.reconcile import NewMemory, Outcome, Reconciler
from mongomem.extraction.subjects import UserSubjects
from mongomem.kinds import KindError, MemoryKind
from mongomem.longterm.ports import MemoryRepository
from mongomem.models.common import Scope
from mongomem.models.memory import ORG_OWNER, EvidenceRef, Visibility
from mongomem.observability import logger
from mongomem.ports import EmbeddingProvider
from mongomem.retrieval.indexing import MemoryIndexer


@dataclass
class Committed:
    outcomes: list[Outcome] = field(default_factory=list)
    refused: Counter[str] = field(default_factory=Counter)  # items the kind refused, by reason

    @property
    def decisions(self) -> dict[str, int]:
        return dict(Counter(o.decision for o in self.outcomes))


class Committer:
    def __init__(
        self,
        store: MemoryRepository,
        reconciler: Reconciler,
        embedder: EmbeddingProvider,
        indexer: MemoryIndexer,
        visibilities: Mapping[str, Visibility] | None = None,
    ) -> None:
        self.store = store
        self.reconciler = reconciler
        self.embedder = embedder
        self.indexer = indexer
        # memory.extraction.<kind>.visibility where the project config sets it; else the kind's default
        self.visibilities = dict(visibilities or {})

    def visibility_of(self, kind: MemoryKind) -> Visibility:
        return self.visibilities.get(kind.name, kind.visibility)

    def commit(
        self,
        scope: Scope,
        kind: MemoryKind,
        items: list[dict[str, Any]],
        evidence: EvidenceRef,
        turn_times: dict[int, datetime] | None = None,
        *,
        reconcile: bool = True,
        expires_at: datetime | None = None,
        deadline: float | None = None,
        visibility: Visibility | None = None,
        agent_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        authoritative: bool = False,
        user_names: Collection[str] = (),
    ) -> Committed:
        """Write each valid item as ADD / UPDATE / REINFORCE; `turn_times` are the turns evidence may cite
        (seq -> when it was said): an item's evidence is observed when the latest turn it cites was said.

        `scope` is the user who said it. A private memory is written (and reconciled) in the user's
        scope - in one agent's part of it with `agent_id` -, an org memory in the tenant's org scope,
        where the same statement by another user reinforces it; the evidence names the user either way.
        A user's statement that conflicts with an org memory is only a proposal unless `authoritative`
        (a tenant-wide caller's direct write): `Reconciler._propose`.
        A subject naming the user (a stated name, one of `user_names`, the user id) is stored as "user".
        """
        result = Committed()
        visibility = visibility or self.visibility_of(kind)
        home = scope if visibility == "private" else Scope(tenant=scope.tenant, user_id=ORG_OWNER)
        agent = agent_id if visibility == "private" else None
        evidence = evidence.model_copy(update={"user_id": scope.user_id})
        accepted: list[tuple[dict[str, Any], EvidenceRef]] = []
        for raw in items:
            try:
                payload, cited = kind.validate(raw)
            except KindError as exc:
                result.refused[exc.reason] += 1
                logger.info(
                    "proposed item refused",
                    extra={"memory_type": kind.name, "reason": exc.reason, "details": exc.details},
                )
                continue
            if turn_times is None:
                accepted.append((payload, evidence))
                continue
            own = sorted({s for s in cited if s in turn_times}) or sorted(turn_times)
            observed = max((turn_times[s] for s in own), default=evidence.observed_at)
            accepted.append((payload, evidence.model_copy(update={"seqs": own, "observed_at": observed})))
        if not accepted:
            return result
        if kind.subject(accepted[0][0]) is not None:
            subjects = UserSubjects(self.store, scope, kind, [p for p, _ in accepted], user_names)
            accepted = [(subjects.canonical(p), proof) for p, proof in accepted]
        vectors = self.embedder.embed([kind.text(p) for p, _ in accepted], "document")
        known = (
            self.reconciler.known_keys(home, kind, [kind.key(p) for p, _ in accepted], evidence.snapshot_id)
            if len(accepted) > 1
            else None
        )
        touched: list[str] = []
        for (payload, proof), vector in zip(accepted, vectors, strict=True):
            outcome = self.reconciler.apply(
                home,
                NewMemory(
                    kind,
                    payload,
                    vector,
                    proof,
                    self.embedder.model,
                    expires_at,
                    visibility=visibility,
                    agent_id=agent,
                    metadata=dict(metadata or {}),
                    authoritative=authoritative,
                ),
                reconcile=reconcile,
                deadline=deadline,
                known=known,
            )
            result.outcomes.append(outcome)
            touched.extend(outcome.touched)
            logger.info(
                "reconciled",
                extra={
                    "memory_type": kind.name,
                    "decision": outcome.decision,
                    "reason": outcome.reason,
                    "memory_id": outcome.record.memory_id if outcome.record else None,
                    "by": outcome.by,
                },
            )
        if touched:
            self.indexer.sync(self.store.get_many(home, list(dict.fromkeys(touched))))
        return result
