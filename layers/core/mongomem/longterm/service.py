"""Direct memory writes (through the writer extraction uses too), reads with history, lists, deletes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mongomem.errors import Forbidden, InvalidInput, NotFound, UnknownKind
from mongomem.kinds import KindError, KindRegistry, MemoryKind
from mongomem.kinds.base import about_the_user, in_first_person, names_the_user
from mongomem.longterm.filters import check_filters
from mongomem.longterm.ports import MemoryRepository
from mongomem.longterm.subjects import stored_names
from mongomem.longterm.write.writer import MemoryWriter
from mongomem.models.common import Scope, parse_utc_datetime, utcnow
from mongomem.models.memory import (
    CreateMemoryRequest,
    DeleteResult,
    EvidenceRef,
    MemoryFilter,
    MemoryOut,
    MemoryPage,
    MemoryRecord,
    MemoryView,
    MemoryWithHistory,
    ObservedRange,
    PayloadFilter,
    Visibility,
    WriteResult,
)


def memory_out(record: MemoryRecord, viewer: str | None = None) -> MemoryOut:
    """A stored version as the API shows it to `viewer` (a user): an org memory names only the viewer's
    own contributions - the other users' evidence keeps its source and time, never who, which snapshot or
    which turns (None: the whole record, for a tenant-wide read)."""
    evidence, decisions = record.evidence, record.decisions
    if viewer is not None and record.visibility == "org":
        own = {e.snapshot_id for e in evidence if e.user_id == viewer and e.snapshot_id}
        evidence = [
            e
            if e.user_id == viewer
            else EvidenceRef(source=e.source, observed_at=e.observed_at, tenant_wide=e.tenant_wide)
            for e in evidence
        ]
        decisions = [
            d if d.snapshot_id is None or d.snapshot_id in own else d.model_copy(update={"snapshot_id": None})
            for d in decisions
        ]
    return MemoryOut(
        memory_id=record.memory_id,
        lineage_id=record.lineage_id,
        version=record.version,
        type=record.type,
        status=record.status,
        payload=record.payload,
        text=record.text,
        visibility=record.visibility,
        agent_id=record.agent_id,
        metadata=record.metadata,
        reinforcement_count=record.reinforcement_count,
        last_reinforced_at=record.last_reinforced_at,
        observed_at=record.observed_at,
        created_at=record.created_at,
        supersedes=record.supersedes,
        superseded_by=record.superseded_by,
        evidence=evidence,
        decisions=decisions,
        embedding_model=record.embedding_model,
        embedding_dim=record.embedding_dim,
        index_state=record.index_state,
        valid_from=record.valid_from,
        valid_to=record.valid_to,
        expires_at=record.expires_at,
        usage=record.usage,
    )


def require_kinds(kinds: KindRegistry, names: list[str], path: str) -> None:
    """InvalidInput (400) naming the allowed kinds when a requested kind is neither built-in nor declared."""
    unknown = [n for n in names if n not in kinds]
    if unknown:
        raise UnknownKind(
            f"unknown memory type(s) {', '.join(repr(n) for n in unknown)}; this project has "
            + ", ".join(kinds.names()),
            {"path": path, "allowed": kinds.names()},
        )


class MemoryService:
    def __init__(
        self,
        store: MemoryRepository,
        kinds: KindRegistry,
        writer: MemoryWriter,
        partition_keys: Sequence[str] = (),
    ) -> None:
        self.store = store
        self.kinds = kinds
        self.writer = writer
        self.partition_keys = tuple(partition_keys)

    def _stated_names(self, kind: MemoryKind, scope: Scope) -> set[str]:
        """The names the user stated they go by ("my name is Dana Whitfield": their stored name facts), for
        a kind about users: one user's fact about "Dana Whitfield" is about them (issue 33's thirtieth
        probe; extraction reads the same names, `extraction/guards.py::_names_stated`)."""
        if kind.visibility != "private" or scope.user_id is None:
            return set()  # a kind shared by nature (terms, procedures) is read for its names only
        return stored_names(self.store, scope)

    def create(self, scope: Scope, request: CreateMemoryRequest, tenant_wide: bool = True) -> WriteResult:
        """Write one memory. `tenant_wide`: the caller speaks for the tenant (a memory_service key, an
        operator) and may change org memories directly; otherwise (a service account: one user) an org
        memory is written only for a kind whose configured visibility is org, reconciled, and a
        conflicting value is a proposal (docs/security.md "Who may write org memory")."""
        require_kinds(self.kinds, [request.type], "type")
        kind = self.kinds[request.type]
        visibility = request.visibility or self.writer.visibility_of(kind)
        names: list[set[str]] = []

        def stated() -> set[str]:  # read once, only when asked
            if not names:
                names.append(self._stated_names(kind, scope))
            return names[0]

        if (
            request.visibility is None
            and visibility == "org"
            and (
                # a kind about users by nature (facts, episodes, preferences) that the project shares: one
                # user's statement of it is theirs unless they say "org" (in any language: a word list of
                # first persons never ends, "doktorum", "طبيبي", "min läkare"; issue 33's thirtieth probe)
                (not tenant_wide and kind.visibility == "private")
                or about_the_user(request.payload, scope.user_id)
                or (not tenant_wide and in_first_person(request.payload))
                or (not tenant_wide and kind.names_its_user(request.payload, scope.user_id, stated()))
                or _about_a_stated_name(kind, request.payload, stated())
            )
        ):
            # a memory about its user is theirs unless the caller says otherwise (a kind shared by the
            # organisation shares what the organisation knows, not what one user says of themselves), and
            # so is one user's statement in the first person ("my badge code", "my insulin") or whose
            # names name the user ("the user's daily dose", "bob's badge code")
            request = request.model_copy(update={"visibility": "private"})
            visibility = "private"
        if visibility == "org" and not tenant_wide:
            self._check_one_users_org_write(kind, request)
        try:
            kind.validate(request.payload)
        except KindError as exc:
            details = [{**d, "path": f"payload.{d['path']}"} for d in exc.details]
            raise InvalidInput(f"payload is not a valid {kind.name} memory", details) from exc
        written = self.writer.write(
            scope,
            kind,
            [request.payload],
            EvidenceRef(snapshot_id=None, seqs=[], source="api", observed_at=request.observed_at or utcnow()),
            reconcile=request.reconcile,
            expires_at=request.expires_at,
            visibility=request.visibility,
            agent_id=request.agent_id,
            metadata=request.metadata,
            authoritative=tenant_wide,
        )
        outcome = written.outcomes[0]
        if outcome.record is None:
            raise NotFound(
                f"nothing to retract: {outcome.reason}",
                {"path": "payload.retracted", "reason": outcome.reason},
            )
        fresh = self.store.get(MemoryView(scope), outcome.record.memory_id) or outcome.record
        return WriteResult(
            decision=outcome.decision, reason=outcome.reason, memory=memory_out(fresh, scope.user_id)
        )

    def _check_one_users_org_write(self, kind: MemoryKind, request: CreateMemoryRequest) -> None:
        """Refuse what only a tenant-wide caller may do to org memory (docs/security.md "Who may write
        org memory"): share a kind configured private, skip reconciliation, grant tools, retract."""
        if self.writer.visibility_of(kind) != "org":
            raise Forbidden(
                f"{kind.name} memories are private in this project: a service account (one user) may "
                "not share one with the whole tenant; write it with a memory_service key",
                {"path": "visibility", "type": kind.name, "visibility": "org"},
            )
        if not request.reconcile:
            raise Forbidden(
                "an org memory is reconciled with what the tenant's users stated: only a memory_service "
                "key may write one with reconcile=false",
                {"path": "reconcile", "visibility": "org"},
            )
        granted = [g for g in kind.grants if request.payload.get(g)]
        if granted:
            raise Forbidden(
                f"{granted[0]} in shared memory grants every user's agent those tools: only a "
                "memory_service key may set it on an org memory",
                {"path": f"payload.{granted[0]}", "visibility": "org"},
            )
        if kind.retraction(request.payload):
            raise Forbidden(
                "ending an org memory changes what every user of the tenant reads: only a "
                "memory_service key may retract one (as only it may delete one)",
                {"path": "payload.retracted", "visibility": "org"},
            )

    def get(self, scope: Scope, memory_id: str, history: bool) -> MemoryWithHistory:
        """One of the user's memories or one of the tenant's org memories."""
        record = self.store.get(MemoryView(scope), memory_id)
        if record is None:
            raise NotFound(f"memory {memory_id!r} not found for this user", {"memory_id": memory_id})
        chain = None
        if history:
            # in the order the values held: an older observation written later sits where it belongs
            versions = self.store.lineage(_home(record), record.lineage_id)
            now = utcnow()  # an expired version is gone from the history too
            versions = [r for r in versions if r.live(now)]
            versions.sort(key=lambda r: (r.observed_at or r.created_at, r.version))
            chain = [memory_out(r, scope.user_id) for r in versions]
        return MemoryWithHistory(memory=memory_out(record, scope.user_id), history=chain)

    def list(
        self,
        scope: Scope,
        kind: str | None,
        status: str | None,
        limit: int,
        cursor: str | None,
        *,
        payload: PayloadFilter | None = None,
        observed: ObservedRange | None = None,
        filters: MemoryFilter | None = None,
        agent_id: str | None = None,
        visibility: Visibility | None = None,
    ) -> MemoryPage:
        """The user's memories and the tenant's org ones (one of the two with `visibility`), newest first."""
        if kind is not None:
            require_kinds(self.kinds, [kind], "type")
        before: datetime | None = None
        if cursor:
            try:
                before = parse_utc_datetime(cursor)
            except ValueError as exc:
                raise InvalidInput("cursor is not one this API returned", {"path": "cursor"}) from exc
        if payload is not None and (payload.exact or payload.prefix) and kind != "semantic":
            raise InvalidInput(
                "subject, attribute and subject_prefix filter semantic facts: add type=semantic",
                {"path": "type"},
            )
        if filters:
            check_filters(self.kinds, [kind] if kind else None, filters, None)
        view = MemoryView(scope, agent_id, visibility)
        records = self.store.list_page(
            view, kind, status, limit + 1, before, payload=payload, observed=observed, filters=filters
        )
        more = len(records) > limit
        records = records[:limit]
        return MemoryPage(
            memories=[memory_out(r, scope.user_id) for r in records],
            next_cursor=records[-1].created_at.isoformat() if more and records else None,
        )

    def delete(self, scope: Scope, memory_id: str, may_delete_org: bool = True) -> DeleteResult:
        """Delete a lineage: one of the user's, or (`may_delete_org`: a tenant-wide caller) an org memory."""
        record = self.store.get(MemoryView(scope), memory_id)
        if record is None or record.status == "deleted":
            raise NotFound(f"memory {memory_id!r} not found for this user", {"memory_id": memory_id})
        if record.visibility == "org" and not may_delete_org:
            raise Forbidden(
                "an org memory belongs to the tenant: delete it with a memory_service key",
                {"memory_id": memory_id, "visibility": "org"},
            )
        count = self.writer.delete_lineage(_home(record), record.lineage_id)
        return DeleteResult(lineage_id=record.lineage_id, deleted_versions=count)

    def domains(self, scope: Scope) -> Sequence[tuple[str, int]]:
        """The domains of the taxonomic terms the user sees, with how many active terms each holds."""
        return self.store.domains(scope.tenant, scope.user_id)


def _about_a_stated_name(kind: MemoryKind, payload: dict[str, Any], stated: set[str]) -> bool:
    """Whether a memory's subject, as it shows ("user" qualified by a name shows the name), is a name the
    user stated they go by: "Dana Whitfield's doctor" from whoever writes it for Dana (issue 33's thirtieth
    probe: through the tenant key with `user_id` too)."""
    if not stated:
        return False
    subject = kind.subject(kind.as_named(payload))
    return subject is not None and names_the_user([subject], None, stated)


def _home(record: MemoryRecord) -> Scope:
    """The scope a stored version lives in (the user's, or the tenant's org scope)."""
    return Scope(tenant=record.tenant, user_id=record.user_id)
