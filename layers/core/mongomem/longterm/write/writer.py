"""The one writer of long-term memory: validate, embed, read candidates, decide, store, index.

Extraction (whatever proposed the items), the API's direct writes and imported history all write
through `MemoryWriter.write`; a lineage is deleted through `delete_lineage`. Reconciliation is
`decide` (pure); this module applies its verdict to the repository, the history and the search index.
History is never destroyed: an UPDATE writes a new version and marks the old one superseded.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import KW_ONLY, dataclass, field, replace
from datetime import datetime
from typing import Any, assert_never

from mongomem.errors import Unavailable
from mongomem.kinds import KindError, MemoryKind
from mongomem.longterm.ports import MemoryRepository
from mongomem.longterm.subjects import UserSubjects
from mongomem.longterm.write.decide import decide, to_judge
from mongomem.longterm.write.decision import (
    BackProposal,
    By,
    Decision,
    Judge,
    NewLineage,
    NewMemory,
    NewVersion,
    PastVersion,
    Promote,
    Propose,
    Reinforce,
    RepairLineage,
    Retract,
    StatedAgain,
    Thresholds,
    Unchanged,
    Verdict,
    contributors,
)
from mongomem.longterm.write.indexing import MemoryIndexer
from mongomem.longterm.write.reads import CandidateReader, KeyReads
from mongomem.longterm.write.records import decision_record, lineage_id, new_version
from mongomem.models.common import Scope, utcnow
from mongomem.models.memory import ORG_OWNER, EvidenceRef, MemoryRecord, Visibility, stated_words
from mongomem.observability import logger
from mongomem.ports import EmbeddingProvider
from mongomem.vectors.port import VectorIndex

# How many times one write is read and decided when other writers keep taking its version number.
DECIDE_ATTEMPTS = 3
# The pending proposals one user may hold per org memory: a new one withdraws their oldest (docs/adr/0077).
MAX_PENDING_PROPOSALS = 5


@dataclass
class Outcome:
    decision: Decision
    reason: str
    record: MemoryRecord | None  # None: a retraction that found nothing to end
    by: By = "rule"
    score: float | None = None
    touched: list[str] = field(default_factory=list)  # ids whose index entry must be (re)written


@dataclass
class Written:
    outcomes: list[Outcome] = field(default_factory=list)
    refused: Counter[str] = field(default_factory=Counter)  # items the kind refused, by reason

    @property
    def decisions(self) -> dict[str, int]:
        return dict(Counter(o.decision.value for o in self.outcomes))


@dataclass(frozen=True)
class WriteRequest:
    """One batch of items of one kind to write, and how.

    `scope` is the user who said it. A private memory is written (and reconciled) in the user's scope -
    in one agent's part of it with `agent_id` -, an org memory in the tenant's org scope, where the same
    statement by another user reinforces it; the evidence names the user either way. A user's statement
    that conflicts with an org memory is only a proposal unless `authoritative` (a tenant-wide caller's
    direct write). A subject naming the user (a stated name, one of `user_names`, the user id) is stored
    as "user". `turn_times` are the turns evidence may cite (seq -> when it was said): an item's evidence
    is observed when the latest turn it cites was said."""

    scope: Scope
    kind: MemoryKind
    items: list[dict[str, Any]]
    evidence: EvidenceRef
    turn_times: Mapping[int, datetime] | None = None
    _: KW_ONLY
    reconcile: bool = True  # False: written as it is (an API write with reconcile=false)
    expires_at: datetime | None = None
    deadline: float | None = None  # for the judge's model call
    visibility: Visibility | None = None  # None: the kind's configured visibility
    agent_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    authoritative: bool = False
    user_names: Collection[str] = ()


# An accepted item: its payload, its evidence and the fields a tenant-wide writer sent empty.
Accepted = tuple[dict[str, Any], EvidenceRef, frozenset[str]]


class MemoryWriter:
    def __init__(
        self,
        store: MemoryRepository,
        index: VectorIndex | None,
        indexer: MemoryIndexer,
        embedder: EmbeddingProvider,
        judge: Judge | None = None,
        thresholds: Thresholds | None = None,
        visibilities: Mapping[str, Visibility] | None = None,
    ) -> None:
        self.store = store
        self.reads = CandidateReader(store, index)
        self.indexer = indexer
        self.embedder = embedder
        # asked about ambiguous matches by meaning (None: the rules decide them)
        self.judge = judge
        self.thresholds = thresholds or Thresholds()
        # memory.extraction.<kind>.visibility where the project config sets it; else the kind's default
        self.visibilities = dict(visibilities or {})

    def visibility_of(self, kind: MemoryKind) -> Visibility:
        return self.visibilities.get(kind.name, kind.visibility)

    def write(
        self,
        scope: Scope,
        kind: MemoryKind,
        items: list[dict[str, Any]],
        evidence: EvidenceRef,
        turn_times: Mapping[int, datetime] | None = None,
        *,
        reconcile: bool = True,
        expires_at: datetime | None = None,
        deadline: float | None = None,
        visibility: Visibility | None = None,
        agent_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        authoritative: bool = False,
        user_names: Collection[str] = (),
    ) -> Written:
        """`write_request` with the request's fields as arguments (see `WriteRequest`)."""
        return self.write_request(
            WriteRequest(
                scope,
                kind,
                items,
                evidence,
                turn_times,
                reconcile=reconcile,
                expires_at=expires_at,
                deadline=deadline,
                visibility=visibility,
                agent_id=agent_id,
                metadata=metadata or {},
                authoritative=authoritative,
                user_names=user_names,
            )
        )

    def write_request(self, request: WriteRequest) -> Written:
        """Write each valid item as ADD / UPDATE / REINFORCE / RETRACT / PROPOSE (or NOOP), then index
        the versions the batch touched."""
        result = Written()
        kind, scope = request.kind, request.scope
        visibility = request.visibility or self.visibility_of(kind)
        home = scope if visibility == "private" else Scope(tenant=scope.tenant, user_id=ORG_OWNER)
        accepted = self._accept(request, visibility, result.refused)
        if not accepted:
            return result
        news = self._new_memories(request, visibility, accepted)
        keys = [new.key for new in news]
        batch = self.reads.batch(home, kind, keys, request.evidence.snapshot_id) if len(news) > 1 else None
        touched: list[str] = []
        for new in news:
            outcome = self.apply(home, new, request.deadline, batch)
            result.outcomes.append(outcome)
            touched.extend(outcome.touched)
            # ids and the decision only: a reason quotes values ("the user said '...' is not true"), and
            # logs never hold what users said (docs/security.md); the reason is in the memory's history
            logger.info(
                "reconciled",
                extra={
                    "memory_type": kind.name,
                    "decision": outcome.decision.value,
                    "memory_id": outcome.record.memory_id if outcome.record else None,
                    "by": outcome.by,
                },
            )
        if touched:
            self.indexer.sync(self.store.get_many(home, list(dict.fromkeys(touched))))
        return result

    def _accept(self, request: WriteRequest, visibility: Visibility, refused: Counter[str]) -> list[Accepted]:
        """The items the kind accepts (those it refuses counted in `refused`, by reason), each with its
        evidence (the user who said it, and the turns it cites) and, from a tenant-wide writer, the
        fields it sent empty (`_cleared`)."""
        kind = request.kind
        # a tenant-wide key's statement of shared memory is the tenant's, whichever user it names
        tenant_wide = request.authoritative and visibility == "org"
        evidence = request.evidence.model_copy(
            update={"user_id": request.scope.user_id, "tenant_wide": tenant_wide}
        )
        accepted: list[Accepted] = []
        for raw in request.items:
            try:
                payload, cited = kind.validate(raw)
            except KindError as exc:
                refused[exc.reason] += 1
                logger.info(
                    "proposed item refused",
                    # the fields only: a schema's message quotes the value ("'x' is not of type ...")
                    extra={
                        "memory_type": kind.name,
                        "reason": exc.reason,
                        "fields": [d["path"] for d in exc.details],
                    },
                )
                continue
            if visibility == "org" and not request.authoritative and any(payload.get(g) for g in kind.grants):
                # a tool grant in shared memory is the tenant's to give: one user's statement carries none
                logger.info(
                    "tool grants of a user's statement dropped from shared memory",
                    extra={"memory_type": kind.name, "fields": [g for g in kind.grants if payload.get(g)]},
                )
                payload = kind.without_grants(payload)
            proof = _cited(evidence, cited, request.turn_times)
            if visibility == "org":  # what this user said, so erasing them can take out what only they said
                proof = proof.model_copy(update={"said": stated_words(payload), "said_keyed": True})
            accepted.append((payload, proof, _cleared_by(request, visibility, raw)))
        return accepted

    def _new_memories(
        self,
        request: WriteRequest,
        visibility: Visibility,
        accepted: list[Accepted],
    ) -> list[NewMemory]:
        """The accepted items as memories to reconcile, embedded: in the user's own memory a subject
        naming the user is made "user"; shared memory keeps the name it shows ("user" is no one there)."""
        kind = request.kind
        if visibility == "org":
            accepted = [(kind.as_named(p), proof, cleared) for p, proof, cleared in accepted]
        elif kind.subject(accepted[0][0]) is not None:
            payloads = [p for p, _, _ in accepted]
            subjects = UserSubjects(self.store, request.scope, kind, payloads, request.user_names)
            accepted = [(subjects.canonical(p), proof, cleared) for p, proof, cleared in accepted]
        vectors = self.embedder.embed([kind.text(p) for p, _, _ in accepted], "document")
        return [
            NewMemory(
                kind,
                payload,
                vector,
                proof,
                self.embedder.model,
                request.expires_at,
                visibility=visibility,
                agent_id=request.agent_id if visibility == "private" else None,
                metadata=dict(request.metadata),
                authoritative=request.authoritative,
                reconcile=request.reconcile,
                cleared=cleared,
            )
            for (payload, proof, cleared), vector in zip(accepted, vectors, strict=True)
        ]

    def apply(
        self, scope: Scope, new: NewMemory, deadline: float | None = None, batch: KeyReads | None = None
    ) -> Outcome:
        """Read what `decide` needs, decide, and store the verdict (the index is the caller's: `write`
        syncs a batch's touched versions at once). Safe to repeat for the same snapshot. A version
        number another writer took meanwhile (two writes of one lineage at the same moment) is read and
        decided again: the later write comes after the other, never lost as a redelivery."""
        for attempt in range(1, DECIDE_ATTEMPTS + 1):
            now = utcnow()
            found = self.reads.read(scope, new, batch if attempt == 1 else None)
            if self.judge is not None and (ambiguous := to_judge(new, found, self.thresholds)):
                found.judgement = self.judge.judge(new, ambiguous, deadline)
            try:
                return self.store_verdict(scope, new, decide(new, found, self.thresholds, now), now)
            except _VersionTaken as taken:
                logger.info(
                    "another writer took this version meanwhile: read and decided again",
                    extra={"lineage_id": taken.lineage_id, "attempt": attempt},
                )
        raise Unavailable(f"the memory kept changing under this write ({DECIDE_ATTEMPTS} attempts): retry")

    def store_verdict(self, scope: Scope, new: NewMemory, verdict: Verdict, now: datetime) -> Outcome:
        """Apply a verdict to the repository (and the versions' history)."""
        match verdict:
            case Unchanged():
                return Outcome(verdict.decision, verdict.reason, verdict.target)
            case RepairLineage(target=target):
                self.store.repair_lineage(scope, target.lineage_id, target.version, target.memory_id, now)
                return Outcome(verdict.decision, verdict.reason, target)
            case NewLineage():
                note = decision_record(verdict, new, now, None)
                record = new_version(scope, new, lineage_id(scope, new), 1, note, now)
                self._insert(scope, record)
                return self._outcome(verdict, record, [record.memory_id])
            case NewVersion():
                return self._new_version(scope, new, verdict, now)
            case PastVersion(target=target):
                note = decision_record(verdict, new, now, target)
                kept = new_version(scope, new, target.lineage_id, verdict.version, note, now).model_copy(
                    update={"status": "superseded", "superseded_by": target.memory_id}
                )
                self._insert(scope, kept)
                return self._outcome(verdict, kept, [kept.memory_id])
            case Reinforce():
                return self._reinforce(scope, new, verdict, now)
            case Retract():
                ended = self._end(scope, new, verdict, now)
                if ended is None:  # ended meanwhile by another writer
                    return Outcome(Decision.NOOP, "already ended", verdict.ends[0])
                return self._outcome(verdict, ended, [r.memory_id for r in verdict.ends])
            case StatedAgain():  # the earlier versions end; the one stated after the retraction stays
                self._end(scope, new, verdict, now)
                touched = [r.memory_id for r in verdict.ends]
                return Outcome(verdict.decision, verdict.reason, verdict.kept, touched=touched)
            case Propose() | BackProposal():
                return self._propose(scope, new, verdict, now)
            case Promote():
                return self._promote(scope, new, verdict, now)
            case _:
                assert_never(verdict)

    def _insert(self, scope: Scope, record: MemoryRecord) -> bool:
        """Insert a version: True when stored, False when this very version is stored already (a
        redelivery); `_VersionTaken` when another writer stored another version under its number."""
        if self.store.insert(record):
            return True
        if self.store.get(scope, record.memory_id) is None:
            raise _VersionTaken(record.lineage_id)
        return False

    def delete_lineage(self, scope: Scope, lineage: str) -> int:
        """Delete every version of a lineage (its vectors go with it) and take them out of the index."""
        count = self.store.delete_lineage(scope, lineage, utcnow())
        self.indexer.sync(self.store.lineage(scope, lineage))
        return count

    @staticmethod
    def _outcome(verdict: Verdict, record: MemoryRecord | None, touched: list[str]) -> Outcome:
        return Outcome(verdict.decision, verdict.reason, record, verdict.by, verdict.score, touched)

    def _new_version(self, scope: Scope, new: NewMemory, verdict: NewVersion, now: datetime) -> Outcome:
        """Insert first, then supersede: a crash in between leaves two actives that the redelivery's
        `RepairLineage` supersedes. A target another writer replaced meanwhile (a promotion carried at
        the same moment) is replaced again: this version, the newest, supersedes what is active before it."""
        target = verdict.target
        record = new_version(
            scope,
            new,
            target.lineage_id,
            verdict.version,
            decision_record(verdict, new, now, target),
            now,
            supersedes=target.memory_id,
            payload=verdict.payload,
        )
        inserted = self._insert(scope, record)
        superseded = [target, *verdict.also_supersedes]
        if not self.store.supersede(scope, target.memory_id, record.memory_id, now) and inserted:
            self.store.repair_lineage(scope, target.lineage_id, record.version, record.memory_id, now)
        for old in verdict.also_supersedes:
            self.store.supersede(scope, old.memory_id, record.memory_id, now)
        return self._outcome(verdict, record, [record.memory_id, *(r.memory_id for r in superseded)])

    def _reinforce(self, scope: Scope, new: NewMemory, verdict: Reinforce, now: datetime) -> Outcome:
        target, merged = verdict.target, verdict.merged
        restated = _restated(new, target)
        replaced = bool(restated.pop(_METADATA_REPLACED, False))
        record = self.store.reinforce(
            scope,
            target.memory_id,
            new.evidence,
            decision_record(verdict, new, now, target),
            now,
            merged_payload=merged,
            merged_text=new.kind.text(merged) if merged else None,
            # one user's restatement of shared memory never moves when every user's copy was stated
            earliest=not _one_users_word_on_shared(new, target),
            restated=restated,
        )
        if record is None:  # this snapshot was already counted (or the target changed meanwhile)
            current = self.store.get(scope, target.memory_id) or target
            reason = "restatement already counted" + verdict.left_out
            return Outcome(Decision.NOOP, reason, current, verdict.by, verdict.score)
        # re-indexed even when nothing was merged: search ranks by the index's reinforcement_count
        outcome = self._outcome(verdict, record, [record.memory_id])
        if replaced:  # the caller learns which of the memory's metadata keys are gone
            outcome.reason += (
                f"; its metadata is this statement's: merged with the memory's it would pass "
                f"{MERGED_METADATA_BYTES // 1024} KiB, so keys the statement did not repeat are gone"
            )
        return outcome

    def _end(
        self, scope: Scope, new: NewMemory, verdict: Retract | StatedAgain, now: datetime
    ) -> MemoryRecord | None:
        """End each version of `verdict.ends`; the last one this writer ended (None: none was active)."""
        ended: MemoryRecord | None = None
        for target in verdict.ends:
            note = decision_record(verdict, new, now, target, decision=Decision.RETRACT.value)
            ended = self.store.retract(scope, target.memory_id, new.evidence, note, now) or ended
        return ended

    def _store_proposal(
        self, scope: Scope, new: NewMemory, verdict: Propose | BackProposal, now: datetime
    ) -> MemoryRecord | Outcome:
        """Insert a new proposal or back the pending one: the proposal, or the NOOP when this snapshot
        already backs it."""
        note = decision_record(verdict, new, now, verdict.target, reason=verdict.note)
        # the statement's own expiry: the proposal keeps the replaced version's (below), and the statement
        # backs it until its own (`EvidenceRef.until`; issue 33's twenty-sixth probe)
        new = replace(new, evidence=new.evidence.model_copy(update={"until": new.expires_at}))
        match verdict:
            case BackProposal(proposal=pending):  # backed as it stands: nothing merges into a proposal
                backed = self.store.reinforce(
                    scope,
                    pending.memory_id,
                    new.evidence,
                    note,
                    now,
                    status="proposed",
                    earliest=not _one_users_word_on_shared(new, pending),
                )
                return backed or Outcome(Decision.NOOP, "restatement already counted", pending)
            case Propose():
                lineage = verdict.target.lineage_id
                # a proposal keeps the expiry and the metadata of the version it would replace, and is not
                # dated before it: its backers state a value, and one of them alone never decides when every
                # user's version ends, what filters find it, or when it was first said (docs/adr/0072)
                proposal = new_version(
                    scope, new, lineage, verdict.version, note, now, payload=verdict.proposed
                )
                proposal = proposal.model_copy(
                    update={"status": "proposed", **_carried(verdict.target, proposal)}
                )
                self._insert(scope, proposal)
                return proposal
            case _:
                assert_never(verdict)

    def _propose(
        self, scope: Scope, new: NewMemory, verdict: Propose | BackProposal, now: datetime
    ) -> Outcome:
        proposal = self._store_proposal(scope, new, verdict, now)
        if isinstance(proposal, Outcome):
            return proposal
        reason = verdict.reason
        if isinstance(verdict, Propose) and (dropped := self._keep_pending_capped(scope, new, proposal)):
            reason += (
                f"; your {dropped} oldest pending proposal(s) of this memory withdrawn: a user keeps at "
                f"most {MAX_PENDING_PROPOSALS} pending per org memory"
            )
        return Outcome(Decision.PROPOSE, reason, proposal, touched=[proposal.memory_id])

    def _keep_pending_capped(self, scope: Scope, new: NewMemory, proposal: MemoryRecord) -> int:
        """Withdraw the speaker's oldest pending proposals of the lineage that only they back, beyond
        `MAX_PENDING_PROPOSALS` (docs/adr/0077): one user's proposals never grow every user's history and
        every later write of the memory without end. How many were withdrawn."""
        user = new.evidence.user_id
        if not user or new.evidence.tenant_wide:
            return 0
        lineage = self.store.lineage(scope, proposal.lineage_id)
        mine = sorted(
            (r for r in lineage if r.status == "proposed" and contributors(r) == {user}),
            key=lambda r: r.version,
        )
        excess = mine[:-MAX_PENDING_PROPOSALS]
        if not excess:
            return 0
        gone = set(self.store.drop_proposals(scope, user, [r.memory_id for r in excess]))
        # out of the index too: a withdrawn proposal's words are kept nowhere
        self.indexer.sync([r.model_copy(update={"status": "deleted"}) for r in excess if r.memory_id in gone])
        logger.info(
            "older pending proposals withdrawn",
            extra={"memory_type": new.kind.name, "lineage_id": proposal.lineage_id, "withdrawn": len(gone)},
        )
        return len(gone)

    def _promote(self, scope: Scope, new: NewMemory, verdict: Promote, now: datetime) -> Outcome:
        """Store the proposal (or back the pending one), then make it the active version."""
        proposed = verdict.proposal
        proposal = self._store_proposal(scope, new, proposed, now)
        if isinstance(proposal, Outcome):
            return proposal
        current = proposed.target
        promoted = self.store.activate(
            scope,
            proposal.memory_id,
            current.memory_id,
            decision_record(verdict, new, now, current),
            now,
            verdict.payload,
            new.kind.text(verdict.payload),
            # from the version it replaces now (the tenant may have corrected it since the proposal)
            _carried(current, proposal),
        )
        if promoted is None or not self.store.supersede(scope, current.memory_id, promoted.memory_id, now):
            # another writer changed the lineage meanwhile (a promotion or an update carried at the same
            # moment replaced `current` first): this one stays a proposal, never a second active version
            if promoted is not None:
                self.store.withdraw(scope, promoted.memory_id, now)
            return Outcome(Decision.PROPOSE, proposed.reason, proposal, touched=[proposal.memory_id])
        touched = [promoted.memory_id, current.memory_id]
        return Outcome(verdict.decision, verdict.reason, promoted, touched=touched)


def _carried(replaced: MemoryRecord, proposal: MemoryRecord) -> dict[str, Any]:
    """What a proposal takes from the version it replaces (docs/adr/0072): its expiry and metadata, and a
    date never before it. Its backers state a value; one of them alone never decides when every user's
    version ends, what filters find it, or when it was first said."""
    observed = proposal.observed_at
    if replaced.observed_at is not None and (observed is None or observed < replaced.observed_at):
        observed = replaced.observed_at
    return {
        "expires_at": replaced.expires_at,
        "metadata": dict(replaced.metadata),
        "metadata_by": replaced.metadata_by,
        "observed_at": observed,
    }


class _VersionTaken(Exception):
    """Another writer stored a version of the lineage under the number this write chose."""

    def __init__(self, lineage_id: str) -> None:
        super().__init__(lineage_id)
        self.lineage_id = lineage_id


def _one_users_word_on_shared(new: NewMemory, target: MemoryRecord) -> bool:
    """A statement by one user (not the tenant) about a memory every user of the tenant reads."""
    return "org" in (new.visibility, target.visibility) and not new.authoritative


def _cleared_by(request: WriteRequest, visibility: Visibility, raw: Any) -> frozenset[str]:
    """The fields this item clears: from a tenant-wide writer every field it sends empty (`_cleared`); from
    a user's own direct write of their private memory its tool grants sent empty (`"allowed_tools": []`
    revokes what they granted; issue 33's twentieth probe); from extraction nothing (a model's empty list
    says nothing)."""
    if request.authoritative:
        return _cleared(request.kind, raw)
    if visibility == "private" and request.evidence.source == "api":
        return _cleared(request.kind, raw) & frozenset(request.kind.grants)
    return frozenset()


def _restated(new: NewMemory, target: MemoryRecord) -> dict[str, Any]:
    """What a restatement says of a memory besides its payload, set on the memory it restates: the expiry
    it gives, and the metadata a direct write gives (merged over the memory's). Only from the memory's
    own user or the tenant: one user's word on shared memory changes nothing of it (issue 33's twentieth
    probe: a restatement that asked to keep a memory for a month, or to let it go in a minute, was lost)."""
    if _one_users_word_on_shared(new, target):
        return {}
    fields: dict[str, Any] = {}
    if new.expires_at is not None and new.expires_at != target.expires_at:
        fields["expires_at"] = new.expires_at
    held = dict(target.metadata or {})
    if new.evidence.source == "api" and any(held.get(k, _MISSING) != v for k, v in new.metadata.items()):
        merged = {**held, **new.metadata}
        if target.metadata_by is not None and new.evidence.tenant_wide:
            # shared memory's metadata one user gave (erased with them): the tenant's replaces it, so
            # erasing that user never takes the tenant's keys with theirs (who gave each key is not kept)
            merged = dict(new.metadata)
            fields["metadata_by"] = None
        elif len(json.dumps(merged, default=str)) > MERGED_METADATA_BYTES:
            merged = dict(new.metadata)  # restatements never grow a memory's metadata past the cap
            # the keys the memory held and the restatement does not repeat are gone: a caller should know
            # (the answer's reason says so: `_reinforce`)
            logger.warning(
                "metadata replaced: merged it would pass the cap",
                extra={"memory_id": target.memory_id, "cap_bytes": MERGED_METADATA_BYTES},
            )
            fields[_METADATA_REPLACED] = True
        fields["metadata"] = merged
    return fields


_MISSING = object()
_METADATA_REPLACED = "(metadata replaced)"  # `_restated`'s mark for `_reinforce`: never a stored field
# How large a memory's metadata may grow by restatements merging theirs in (one statement may carry more:
# what it carries then replaces the memory's; issue 33's twenty-third probe).
MERGED_METADATA_BYTES = 64 * 1024


def _cleared(kind: MemoryKind, raw: Any) -> frozenset[str]:
    """The fields an item sends empty (`[]`, `null`, ""): from a tenant-wide writer, what it clears in
    an org memory (an omitted field keeps what the memory holds)."""
    if not isinstance(raw, Mapping):
        return frozenset()
    fields = kind.item.model_fields
    return frozenset(
        f for f, v in raw.items() if f in fields and f != "evidence_seqs" and v in (None, [], "", {})
    )


def _cited(
    evidence: EvidenceRef, cited: Collection[int], turn_times: Mapping[int, datetime] | None
) -> EvidenceRef:
    """An item's evidence: the turns it cites (all of them when it cites none it was given), observed when
    the latest of them was said."""
    if turn_times is None:
        return evidence
    own = sorted({s for s in cited if s in turn_times}) or sorted(turn_times)
    observed = max((turn_times[s] for s in own), default=evidence.observed_at)
    return evidence.model_copy(update={"seqs": own, "observed_at": observed})
