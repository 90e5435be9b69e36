"""In-memory implementations of repository ports, for unit tests of the logic.

Each one passes the same contract suite as the MongoDB adapter (tests/contract), so a unit test that
uses it tests the logic against the behaviour the real store has.
"""

from __future__ import annotations

import copy
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from mongomem.errors import Conflict, InvalidInput
from mongomem.models.common import Scope, utcnow
from mongomem.models.memory import ORG_OWNER, MemoryView
from mongomem.models.working_memory import Thread, WorkingMemoryKey
from mongomem.workingmemory.ports import Stored


def _now() -> datetime:
    # the MongoDB adapter keeps milliseconds (BSON dates); so does this one
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def _storable(value: Any) -> None:
    """What BSON cannot hold is refused, as the MongoDB adapter refuses it (integers beyond 64 bits)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int) and not isinstance(item, bool) and not -(2**63) <= item < 2**63:
            raise InvalidInput("working memory holds a value the store cannot keep", {"path": "data"})


class InMemoryWorkingMemory:
    """workingmemory.ports.WorkingMemoryPort in a dict, with the same compare-and-set contract."""

    def __init__(self, load_delay: float = 0.0) -> None:
        self.docs: dict[tuple[Any, ...], Stored] = {}
        self.threads: dict[tuple[str, str, str], Thread] = {}
        self.lock = threading.Lock()
        self.load_delay = load_delay
        self.saves = 0
        self.lost_races = 0

    @staticmethod
    def _id(key: WorkingMemoryKey) -> tuple[Any, ...]:
        return (key.scope, key.tenant, key.user_id, key.thread_id)

    def load(self, key: WorkingMemoryKey) -> Stored | None:
        with self.lock:
            found = self.docs.get(self._id(key))
            if found is None and key.scope == "thread" and key.thread_id is not None:
                thread = self.threads.get((key.tenant, key.user_id, key.thread_id))
                found = Stored(value=None, version=1, updated_at=thread.updated_at) if thread else None
            found = found.model_copy(update={"value": copy.deepcopy(found.value)}) if found else None
        # Widen the read-to-write window so concurrent writers really interleave.
        time.sleep(self.load_delay)
        return found

    def save(self, key: WorkingMemoryKey, value: Any, expected_version: int) -> Stored | None:
        _storable(value)
        with self.lock:
            found = self.docs.get(self._id(key))
            if found is None and key.scope == "thread" and key.thread_id is not None:
                thread = self.threads.get((key.tenant, key.user_id, key.thread_id))
                found = Stored(value=None, version=1, updated_at=thread.updated_at) if thread else None
            if (found.version if found else 0) != expected_version:
                self.lost_races += 1
                return None
            self.saves += 1
            saved = Stored(value=copy.deepcopy(value), version=expected_version + 1, updated_at=_now())
            self.docs[self._id(key)] = saved
            if key.scope == "thread" and key.thread_id is not None:
                tid = (key.tenant, key.user_id, key.thread_id)
                old = self.threads.get(tid)
                metadata = dict(old.metadata) if old else {}
                if value is None:
                    metadata.pop("workingMemory", None)
                else:
                    metadata["workingMemory"] = copy.deepcopy(value)
                created = old.created_at if old else saved.updated_at
                self.threads[tid] = Thread(
                    thread_id=key.thread_id,
                    user_id=key.user_id,
                    title=old.title if old else None,
                    metadata=metadata,
                    created_at=created or _now(),
                    updated_at=saved.updated_at or _now(),
                )
            return saved

    def create_thread(
        self, scope: Scope, thread_id: str, title: str | None, metadata: dict[str, Any]
    ) -> Thread:
        with self.lock:
            tid = (scope.tenant, scope.user_id, thread_id)
            if tid in self.threads:
                raise Conflict(f"thread {thread_id!r} already exists for this user", {"thread_id": thread_id})
            now = _now()
            thread = Thread(
                thread_id=thread_id,
                user_id=scope.user_id,
                title=title,
                metadata=copy.deepcopy(metadata),
                created_at=now,
                updated_at=now,
            )
            self.threads[tid] = thread
            key = WorkingMemoryKey(
                scope="thread", tenant=scope.tenant, user_id=scope.user_id, thread_id=thread_id
            )
            self.docs[self._id(key)] = Stored(
                value=copy.deepcopy(metadata.get("workingMemory")), version=1, updated_at=now
            )
            return thread

    def get_thread(self, scope: Scope, thread_id: str) -> Thread | None:
        with self.lock:
            found = self.threads.get((scope.tenant, scope.user_id, thread_id))
            return found.model_copy(deep=True) if found else None

    def list_threads(
        self, scope: Scope, limit: int, before: tuple[datetime, str] | None = None
    ) -> list[Thread]:
        with self.lock:
            mine = [
                t
                for (tenant, user, _), t in self.threads.items()
                if (tenant, user) == (scope.tenant, scope.user_id)
            ]
        mine.sort(key=lambda t: (t.updated_at, t.thread_id), reverse=True)
        if before is not None:
            mine = [t for t in mine if (t.updated_at, t.thread_id) < before]
        return [t.model_copy(deep=True) for t in mine[:limit]]

    def thread_ids(self, scope: Scope, thread_ids: list[str]) -> set[str]:
        with self.lock:
            return {t for t in thread_ids if (scope.tenant, scope.user_id, t) in self.threads}

    def update_thread(
        self,
        scope: Scope,
        thread_id: str,
        title: str | None,
        metadata: dict[str, Any] | None,
        set_title: bool,
    ) -> Thread | None:
        _storable(metadata)
        with self.lock:
            tid = (scope.tenant, scope.user_id, thread_id)
            old = self.threads.get(tid)
            if old is None:
                return None
            changes: dict[str, Any] = {"updated_at": _now()}
            if set_title:
                changes["title"] = title
            if metadata is not None:
                new = {k: copy.deepcopy(v) for k, v in metadata.items() if k != "workingMemory"}
                if "workingMemory" in old.metadata:
                    new["workingMemory"] = old.metadata["workingMemory"]
                changes["metadata"] = new
            self.threads[tid] = old.model_copy(update=changes)
            return self.threads[tid].model_copy(deep=True)

    def delete_thread(self, scope: Scope, thread_id: str) -> bool:
        with self.lock:
            tid = (scope.tenant, scope.user_id, thread_id)
            key = WorkingMemoryKey(
                scope="thread", tenant=scope.tenant, user_id=scope.user_id, thread_id=thread_id
            )
            self.docs.pop(self._id(key), None)
            return self.threads.pop(tid, None) is not None


def _ms(at: datetime | None) -> datetime | None:
    """What a BSON date keeps of a time: milliseconds, in UTC."""
    if at is None:
        return None
    at = at.astimezone(UTC) if at.tzinfo else at.replace(tzinfo=UTC)
    return at.replace(microsecond=at.microsecond // 1000 * 1000)


class InMemoryMemoryRepository:
    """longterm.ports.MemoryRepository in a dict of versions, with the MongoDB adapter's filters and
    conditional updates (tests/contract/test_memory_repository.py runs against both)."""

    def __init__(self) -> None:
        self.docs: dict[str, Any] = {}  # memory_id -> MemoryRecord (stored copies, insertion order)
        self.feedback: dict[str, str] = {}
        self.lock = threading.Lock()

    # -- helpers
    @staticmethod
    def _stored(record: Any) -> Any:
        times = ("created_at", "updated_at", "last_reinforced_at", "expires_at", "observed_at")
        copy_ = record.model_copy(deep=True, update={f: _ms(getattr(record, f)) for f in times})
        dim = copy_.embedding_dim or (len(copy_.vector) if copy_.vector else None)
        return copy_.model_copy(update={"embedding_dim": dim})

    @staticmethod
    def _visible(record: Any, target: Any) -> bool:
        if isinstance(target, Scope):
            return bool(record.tenant == target.tenant and record.user_id == target.user_id)
        assert isinstance(target, MemoryView)
        if record.tenant != target.tenant or record.user_id not in target.owners():
            return False
        return bool(target.agent_id is None or record.agent_id in (target.agent_id, None))

    def _in(self, target: Any) -> list[Any]:
        return [r for r in self.docs.values() if self._visible(r, target)]

    def _update(self, memory_id: str, scope: Scope, when: str, **changes: Any) -> Any:
        """Change a version of status `when` in `scope`, and return it (None when there is none)."""
        found = self.docs.get(memory_id)
        if found is None or not self._visible(found, scope) or found.status != when:
            return None
        updated = found.model_copy(deep=True, update=changes)
        self.docs[memory_id] = updated
        return updated.model_copy(deep=True)

    # -- writes
    def insert(self, record: Any) -> bool:
        with self.lock:
            clash = any(
                (r.tenant, r.user_id, r.lineage_id, r.version)
                == (record.tenant, record.user_id, record.lineage_id, record.version)
                for r in self.docs.values()
            )
            if record.memory_id in self.docs or clash:
                return False
            self.docs[record.memory_id] = self._stored(record)
            return True

    def supersede(self, scope: Scope, old_id: str, new_id: str, at: datetime) -> bool:
        with self.lock:
            return None is not self._update(
                old_id,
                scope,
                "active",
                status="superseded",
                superseded_by=new_id,
                valid_to=at.isoformat(),
                updated_at=_ms(at),
                index_state="pending",
            )

    def repair_lineage(
        self, scope: Scope, lineage_id: str, newest_version: int, newest_id: str, at: datetime
    ) -> None:
        with self.lock:
            for r in self._in(scope):
                if r.lineage_id == lineage_id and r.status == "active" and r.version < newest_version:
                    self._update(
                        r.memory_id,
                        scope,
                        "active",
                        status="superseded",
                        superseded_by=newest_id,
                        updated_at=_ms(at),
                        index_state="pending",
                    )

    def reinforce(
        self,
        scope: Scope,
        memory_id: str,
        evidence: Any,
        decision: Any,
        at: datetime,
        *,
        merged_payload: dict[str, Any] | None = None,
        merged_text: str | None = None,
        status: str = "active",
        earliest: bool = True,
        restated: dict[str, Any] | None = None,
    ) -> Any:
        with self.lock:
            found = self.docs.get(memory_id)
            if found is None or (evidence.snapshot_id and evidence.snapshot_id in found.snapshot_ids()):
                return None
            # shared memory counts one user once (their additions still merge, uncounted)
            counted = (
                scope.user_id == ORG_OWNER
                and bool(evidence.user_id)
                and not evidence.tenant_wide
                and any(e.user_id == evidence.user_id and not e.tenant_wide for e in found.evidence)
            )
            if counted and merged_payload is None:
                return None
            changes: dict[str, Any] = {
                "reinforcement_count": found.reinforcement_count + (0 if counted else 1),
                "last_reinforced_at": _ms(at),
                "updated_at": _ms(at),
                "index_state": "pending",
                "evidence": [*found.evidence, evidence.model_copy(update={"counted": not counted})],
                "decisions": [*found.decisions, decision],
            }
            seen = _ms(evidence.observed_at)
            if earliest and seen is not None and found.observed_at is not None and seen < found.observed_at:
                changes["observed_at"] = seen
            if merged_payload is not None:
                changes.update(payload=merged_payload, text=merged_text)
            changes.update({k: _ms(v) if isinstance(v, datetime) else v for k, v in (restated or {}).items()})
            return self._update(memory_id, scope, status, **changes)

    def retract(self, scope: Scope, memory_id: str, evidence: Any, decision: Any, at: datetime) -> Any:
        with self.lock:
            found = self.docs.get(memory_id)
            if found is None:
                return None
            return self._update(
                memory_id,
                scope,
                "active",
                status="superseded",
                valid_to=at.isoformat(),
                updated_at=_ms(at),
                index_state="pending",
                evidence=[*found.evidence, evidence.model_copy(update={"counted": False})],
                decisions=[*found.decisions, decision],
            )

    def activate(
        self,
        scope: Scope,
        memory_id: str,
        supersedes: str,
        decision: Any,
        at: datetime,
        payload: dict[str, Any],
        text: str,
        carried: dict[str, Any],
    ) -> Any:
        with self.lock:
            found = self.docs.get(memory_id)
            if found is None:
                return None
            return self._update(
                memory_id,
                scope,
                "proposed",
                **carried,
                status="active",
                supersedes=supersedes,
                payload=payload,
                text=text,
                updated_at=_ms(at),
                index_state="pending",
                decisions=[*found.decisions, decision],
            )

    def drop_proposals(self, scope: Scope, user_id: str, ids: list[str]) -> list[str]:
        with self.lock:
            gone = [
                i
                for i in ids
                if (r := self.docs.get(i)) is not None
                and self._visible(r, scope)
                and r.status == "proposed"
                and all(e.user_id == user_id and not e.tenant_wide for e in r.evidence)
            ]
            for i in gone:
                del self.docs[i]
            return gone

    def withdraw(self, scope: Scope, memory_id: str, at: datetime) -> None:
        with self.lock:
            found = self.docs.get(memory_id)
            if found is not None:
                self._update(
                    memory_id,
                    scope,
                    "active",
                    status="proposed",
                    supersedes=None,
                    updated_at=_ms(at),
                    index_state="pending",
                    decisions=found.decisions[:-1],
                )

    def set_index_state(self, ids: list[str], state: str, at: datetime) -> None:
        with self.lock:
            for i in ids:
                if i in self.docs:
                    self.docs[i] = self.docs[i].model_copy(update={"index_state": state})

    def set_embeddings(self, vectors: list[tuple[str, list[float]]], model: str, at: datetime) -> None:
        with self.lock:
            for memory_id, vector in vectors:
                if memory_id in self.docs:
                    self.docs[memory_id] = self.docs[memory_id].model_copy(
                        update={
                            "vector": list(vector),
                            "embedding_model": model,
                            "embedding_dim": len(vector),
                            "index_state": "pending",
                            "updated_at": _ms(at),
                        }
                    )

    def delete_lineage(self, scope: Scope, lineage_id: str, at: datetime) -> int:
        with self.lock:
            gone = [r for r in self._in(scope) if r.lineage_id == lineage_id and r.status != "deleted"]
            for r in gone:
                self.docs[r.memory_id] = r.model_copy(
                    update={
                        "status": "deleted",
                        "updated_at": _ms(at),
                        "index_state": "pending",
                        # a deleted version is never searched: its vector goes with it
                        "vector": None,
                        "embedding_model": None,
                        "embedding_dim": None,
                    }
                )
            return len(gone)

    # -- reads
    def get(self, scope: Any, memory_id: str) -> Any:
        found = self.docs.get(memory_id)
        visible = found is not None and self._visible(found, scope) and found.live(utcnow())
        return found.model_copy(deep=True) if found is not None and visible else None

    def get_many(self, scope: Any, ids: list[str]) -> list[Any]:
        return [r for i in dict.fromkeys(ids) if (r := self.get(scope, i)) is not None]

    def by_keys(self, scope: Scope, kind: str, keys: list[str], snapshot_id: str | None) -> list[Any]:
        wanted = set(keys)
        return [
            r.model_copy(deep=True)
            for r in self._in(scope)
            if r.type == kind
            and r.key in wanted
            and r.live(utcnow())
            and (r.status == "active" or (snapshot_id is not None and snapshot_id in r.snapshot_ids()))
        ]

    def active_by_key(self, scope: Scope, kind: str, key: str, agent_id: str | None = None) -> list[Any]:
        found = [r for r in self.by_keys(scope, kind, [key], None) if r.agent_id == agent_id]
        return sorted(found, key=lambda r: -r.version)

    def active_names(self, scope: Scope, kind: str, fields: list[str]) -> list[tuple[str, dict[str, Any]]]:
        return [
            (r.key, {f: r.payload.get(f) for f in fields})
            for r in self._in(scope)
            if r.type == kind and r.status == "active"
        ]

    def with_evidence(self, scope: Scope, kind: str, key: str, snapshot_id: str) -> Any:
        held = [r for r in self.by_keys(scope, kind, [key], snapshot_id) if snapshot_id in r.snapshot_ids()]
        return max(held, key=lambda r: r.version) if held else None

    def lineage(self, scope: Scope, lineage_id: str) -> list[Any]:
        found = [r.model_copy(deep=True) for r in self._in(scope) if r.lineage_id == lineage_id]
        return sorted(found, key=lambda r: r.version)

    def list_page(
        self,
        scope: Any,
        kind: str | None,
        status: str | None,
        limit: int,
        before: datetime | None,
        *,
        payload: Any = None,
        observed: Any = None,
        filters: Any = None,
    ) -> list[Any]:
        def keep(r: Any) -> bool:
            if not r.live(utcnow()):
                return False
            if (status is not None and r.status != status) or (
                status is None and r.status in ("deleted", "proposed")
            ):
                return False
            if (kind and r.type != kind) or (before is not None and not r.created_at < before):
                return False
            if observed:
                if r.observed_at is None:
                    return False
                if observed.after is not None and r.observed_at < observed.after:
                    return False
                if observed.before is not None and not r.observed_at < observed.before:
                    return False
            for field, value in (payload.exact if payload else {}).items():
                if r.payload.get(field) != value:
                    return False
            for field, prefix in (payload.prefix if payload else {}).items():
                if field not in (payload.exact if payload else {}):
                    held = r.payload.get(field)
                    if not (isinstance(held, str) and held.startswith(prefix)):
                        return False
            if filters is not None:
                tags = r.payload.get("tags") or []
                if filters.tags and not set(filters.tags) & set(tags if isinstance(tags, list) else [tags]):
                    return False
                if filters.domain is not None and r.payload.get("domain") != filters.domain:
                    return False
                if any(r.metadata.get(k) != v for k, v in filters.metadata.items()):
                    return False
                viewer = scope.scope.user_id if isinstance(scope, MemoryView) else scope.user_id
                if filters.snapshot_id is not None and not any(
                    e.snapshot_id == filters.snapshot_id and e.user_id in (viewer, None) for e in r.evidence
                ):
                    return False
            return True

        found = sorted((r for r in self._in(scope) if keep(r)), key=lambda r: r.created_at, reverse=True)
        return [r.model_copy(deep=True, update={"vector": None}) for r in found[:limit]]

    def domains(self, tenant: str, user_id: str) -> list[tuple[str, int]]:
        counts: dict[str, int] = {}
        for r in self.docs.values():
            domain = r.payload.get("domain")
            if (
                r.tenant == tenant
                and r.user_id in (user_id, ORG_OWNER)
                and r.type == "taxonomic"
                and r.status == "active"
                and isinstance(domain, str)
            ):
                counts[domain] = counts.get(domain, 0) + 1
        return sorted(counts.items(), key=lambda c: (-c[1], c[0]))

    def pending_index(self, older_than: datetime, limit: int) -> list[Any]:
        found = [
            r
            for r in self.docs.values()
            if r.index_state == "pending" and r.updated_at is not None and r.updated_at <= older_than
        ]
        return [r.model_copy(deep=True) for r in found[:limit]]

    def shared_keys(self, tenant: str, user_id: str | None, limit: int) -> list[list[Any]]:
        groups: dict[tuple[str, str, str], list[Any]] = {}
        for r in self.docs.values():
            mine = user_id is None or r.user_id == user_id
            if r.tenant == tenant and r.status == "active" and r.live(utcnow()) and mine:
                groups.setdefault((r.user_id, r.type, r.key), []).append(r.model_copy(deep=True))
        return [groups[k] for k in sorted(groups) if len(groups[k]) >= 2][:limit]

    def all_versions(self, batch: int = 500) -> Any:
        for r in list(self.docs.values()):
            if r.status != "deleted":
                yield r.model_copy(deep=True)

    def embedding_models(self) -> set[tuple[str, int]]:
        return {
            (r.embedding_model, r.embedding_dim)
            for r in self.docs.values()
            if r.embedding_model is not None and r.embedding_dim is not None
        }

    def _otherwise(self, model: str, dim: int, tenant: str | None = None) -> list[Any]:
        return [
            r
            for r in self.docs.values()
            if r.status != "deleted"
            and (tenant is None or r.tenant == tenant)
            and (r.embedding_model, r.embedding_dim) != (model, dim)
        ]

    def count_embedded_otherwise(self, model: str, dim: int, tenant: str | None = None) -> int:
        return len(self._otherwise(model, dim, tenant))

    def embedded_otherwise(self, model: str, dim: int, limit: int) -> list[Any]:
        return [r.model_copy(deep=True) for r in self._otherwise(model, dim)[:limit]]

    def decisions_per_day(
        self, tenant: str, user_id: str | None, since: datetime
    ) -> list[tuple[str, str, int]]:
        counts: dict[tuple[str, str], int] = {}
        for r in self.docs.values():
            if r.tenant != tenant or (user_id is not None and r.user_id != user_id):
                continue
            for d in r.decisions:
                if d.at >= since:
                    day = d.at.astimezone(UTC).strftime("%Y-%m-%d")
                    counts[(day, d.decision)] = counts.get((day, d.decision), 0) + 1
        return [(day, decision, n) for (day, decision), n in counts.items()]


class InMemoryApiKeyRepository:
    """identity.ports.ApiKeyRepository in a dict, with the MongoDB adapter's contract."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {}

    def get(self, key_id: str) -> Any:
        found = self.keys.get(key_id)
        return found.model_copy(deep=True) if found is not None else None

    def insert(self, key: Any) -> None:
        if key.key_id in self.keys:
            raise Conflict(f"key {key.key_id!r} exists")
        self.keys[key.key_id] = key.model_copy(deep=True, update={"created_at": _ms(key.created_at)})

    def list(self, tenant: str | None = None) -> list[Any]:
        found = [k for k in self.keys.values() if not tenant or k.tenant == tenant]
        found.sort(key=lambda k: (k.tenant, k.created_at, k.key_id))
        return [k.model_copy(update={"hash": None}) for k in found]

    def revoke(self, key_id: str, at: datetime) -> bool:
        found = self.keys.get(key_id)
        if found is None or found.revoked_at is not None:
            return False
        self.keys[key_id] = found.model_copy(update={"revoked_at": _ms(at)})
        return True

    def any(self) -> bool:
        return bool(self.keys)


def _turn_times(turn: Any) -> dict[str, Any]:
    return {"timestamp": _ms(turn.timestamp), "recorded_at": _ms(turn.recorded_at)}


class InMemoryTurnRepository:
    """shortterm.ports.TurnRepository in a dict keyed like the MongoDB adapter's unique indexes: one turn
    per (tenant, user, session, seq), one (session, client_token, batch_index) per token."""

    def __init__(self) -> None:
        self.docs: dict[tuple[str, str, str, int], Any] = {}  # (tenant, user, session, seq) -> Turn
        self.expire_at: dict[tuple[str, str, str, int], datetime] = {}  # retention (InMemoryErasure...)
        self.lock = threading.Lock()

    @staticmethod
    def _key(scope: Scope, session_id: str, seq: int) -> tuple[str, str, str, int]:
        return (scope.tenant, scope.user_id, session_id, seq)

    def _stored(self, scope: Scope, session_id: str, turn: Any) -> Any:
        from mongomem.models.turns import Turn

        fields = turn.model_dump()
        fields.update(_turn_times(turn))
        return Turn.model_construct(
            **copy.deepcopy(fields),
            id=f"{scope.tenant}|{scope.user_id}|{session_id}#{turn.seq}",
            tenant=scope.tenant,
            user_id=scope.user_id,
            session_id=session_id,
            snapshot_id=None,
            recall_ctx_next=None,
            recall_attempts=0,
        )

    def _token_taken(self, scope: Scope, session_id: str, turn: Any) -> bool:
        if turn.client_token is None:
            return False
        return any(
            (t.tenant, t.user_id, t.session_id, t.client_token, t.batch_index)
            == (scope.tenant, scope.user_id, session_id, turn.client_token, turn.batch_index)
            for t in self.docs.values()
        )

    @staticmethod
    def _out(turn: Any) -> Any:
        return turn.model_copy(deep=True)

    def _of(self, scope: Scope, session_id: str) -> list[Any]:
        found = [
            t
            for t in self.docs.values()
            if (t.tenant, t.user_id, t.session_id) == (scope.tenant, scope.user_id, session_id)
        ]
        return sorted(found, key=lambda t: t.seq)

    # -- recording
    def insert_new(self, scope: Scope, session_id: str, turns: list[Any]) -> bool:
        from mongomem.errors import StoreUnavailable

        with self.lock:
            # ordered, as the adapter's insert_many: the turns before a collision stay inserted
            for turn in turns:
                if self._token_taken(scope, session_id, turn):
                    return False
                key = self._key(scope, session_id, turn.seq)
                if key in self.docs:
                    raise StoreUnavailable(
                        "the document store is unavailable; retry with the same client_token",
                        {"retry_after_seconds": 2},
                    )
                self.docs[key] = self._stored(scope, session_id, turn)
        return True

    def insert_missing(self, scope: Scope, session_id: str, turns: list[Any]) -> None:
        with self.lock:
            for turn in turns:
                key = self._key(scope, session_id, turn.seq)
                if key not in self.docs and not self._token_taken(scope, session_id, turn):
                    self.docs[key] = self._stored(scope, session_id, turn)

    def token_batch(self, scope: Scope, session_id: str, client_token: str) -> Any:
        from mongomem.models.turns import StoredBatch

        found = [t for t in self._of(scope, session_id) if t.client_token == client_token]
        if not found:
            return None
        first = found[0]
        return StoredBatch(
            first_seq=first.seq - (first.batch_index or 0), size=first.batch_size, stored=len(found)
        )

    def import_keys(self, scope: Scope, session_id: str) -> set[str]:
        return {t.import_key for t in self._of(scope, session_id) if t.import_key is not None}

    # -- reading
    def latest(self, scope: Scope, session_id: str, limit: int, before_seq: int | None = None) -> list[Any]:
        found = [t for t in self._of(scope, session_id) if before_seq is None or t.seq < before_seq]
        return [self._out(t) for t in found[-limit:]] if limit > 0 else []

    def in_range(self, scope: Scope, session_id: str, from_seq: int, to_seq: int) -> list[Any]:
        return [self._out(t) for t in self._of(scope, session_id) if from_seq <= t.seq <= to_seq]

    def present_seqs(
        self, scope: Scope, session_id: str, from_seq: int, to_seq: int
    ) -> list[tuple[int, int]]:
        return [(t.seq, t.tokens) for t in self._of(scope, session_id) if from_seq <= t.seq <= to_seq]

    def in_ranges(self, scope: Scope, ranges: list[tuple[str, int, int]]) -> list[Any]:
        unique = {t.id: t for s, lo, hi in ranges for t in self.in_range(scope, s, lo, hi)}
        return sorted(unique.values(), key=lambda t: (t.session_id, t.seq))

    def by_ids(self, scope: Scope, ids: list[str]) -> list[Any]:
        wanted = set(ids)
        return [
            self._out(t)
            for t in self.docs.values()
            if t.id in wanted and (t.tenant, t.user_id) == (scope.tenant, scope.user_id)
        ]

    # -- deleting and promotion
    def delete_from(self, scope: Scope, session_id: str, from_seq: int | None) -> Any:
        from mongomem.models.turns import DeletedTurns

        with self.lock:
            doomed = [t for t in self._of(scope, session_id) if from_seq is None or t.seq >= from_seq]
            for t in doomed:
                del self.docs[self._key(scope, session_id, t.seq)]
                self.expire_at.pop(self._key(scope, session_id, t.seq), None)
        return DeletedTurns(deleted=len(doomed), seqs=[(t.seq, t.tokens) for t in doomed])

    def _of_snapshot(self, snapshot: Any) -> list[Any]:
        scope = Scope(tenant=snapshot.tenant, user_id=snapshot.user_id)
        return self._of(scope, snapshot.session_id)

    def delete_of_snapshot(self, snapshot: Any) -> list[Any]:
        with self.lock:
            found = [t for t in self._of_snapshot(snapshot) if t.snapshot_id == snapshot.snapshot_id]
            for t in found:
                del self.docs[(t.tenant, t.user_id, t.session_id, t.seq)]
                self.expire_at.pop((t.tenant, t.user_id, t.session_id, t.seq), None)
        return [self._out(t) for t in found]

    def tag_snapshot(self, snapshot: Any) -> None:
        with self.lock:
            for t in self._of_snapshot(snapshot):
                if snapshot.from_seq <= t.seq <= snapshot.to_seq:
                    t.snapshot_id = snapshot.snapshot_id

    # -- semantic recall
    def recall_lanes(self, limit: int) -> list[Any]:
        from mongomem.models.turns import RecallLane

        oldest: dict[tuple[str, str], Any] = {}
        for t in self.docs.values():
            if t.recall_indexed is False:
                key = (t.tenant, t.user_id)
                oldest[key] = min(oldest.get(key, t.recorded_at), t.recorded_at)
        lanes = sorted(oldest.items(), key=lambda kv: (kv[1], kv[0]))
        return [RecallLane(tenant=k[0], user_id=k[1], oldest=at) for k, at in lanes[:limit]]

    def unindexed(self, limit: int, scope: Any = None, exclude: list[str] | None = None) -> list[Any]:
        queued = [
            t
            for t in self.docs.values()
            if t.recall_indexed is False
            and (scope is None or (t.tenant, t.user_id) == (scope.tenant, scope.user_id))
            and t.id not in (exclude or ())
        ]
        queued.sort(key=lambda t: (t.recorded_at, t.seq))
        return [self._out(t) for t in queued[:limit]]

    def set_recall_state(self, ids: list[str], indexed: Any = None, ctx_next: bool | None = None) -> None:
        wanted = set(ids)
        with self.lock:
            for t in self.docs.values():
                if t.id in wanted:
                    if indexed is not None:
                        t.recall_indexed = indexed
                    if ctx_next is not None:
                        t.recall_ctx_next = ctx_next

    def note_recall_failure(self, ids: list[str], error: str) -> None:
        wanted = set(ids)
        with self.lock:
            for t in self.docs.values():
                if t.id in wanted:
                    t.recall_attempts += 1

    def requeue_recall(self) -> int:
        requeued = 0
        with self.lock:
            for t in self.docs.values():
                if t.recall_indexed is True or t.recall_indexed == "failed":
                    t.recall_indexed, t.recall_ctx_next, t.recall_attempts = False, False, 0
                    requeued += 1
        return requeued


class InMemorySessionRepository:
    """shortterm.ports.SessionRepository in a dict of documents shaped as the MongoDB adapter's, with its
    compare-and-set allocation, token window, leases and promotion point."""

    def __init__(self) -> None:
        self.docs: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.lock = threading.Lock()

    @staticmethod
    def _key(scope: Scope, session_id: str) -> tuple[str, str, str]:
        return (scope.tenant, scope.user_id, session_id)

    @staticmethod
    def _session(doc: dict[str, Any]) -> Any:
        from mongomem.models.sessions import Session

        return Session(
            tenant=doc["tenant"],
            user_id=doc["user_id"],
            session_id=doc["session_id"],
            agent_id=doc.get("agent_id"),
            created_at=doc["created_at"],
            last_turn_at=doc.get("last_turn_at"),
            last_seq=doc["last_seq"],
            promoted_through_seq=doc["promoted_through_seq"],
            pending=doc["pending"],
            unpromoted_tokens=doc["unpromoted_tokens"],
            idle_due_at=doc.get("idle_due_at"),
            size_due_at=doc.get("size_due_at"),
            deleted_ranges=[tuple(r) for r in doc.get("deleted_ranges", [])],
        )

    @staticmethod
    def _new(scope: Scope, session_id: str, agent_id: str | None, now: datetime) -> dict[str, Any]:
        return {
            "tenant": scope.tenant,
            "user_id": scope.user_id,
            "session_id": session_id,
            "agent_id": agent_id,
            "created_at": _ms(now),
            "last_seq": 0,
            "pending": 0,
            "promoted_through_seq": 0,
            "unpromoted_tokens": 0,
            "tokens": [],
        }

    # -- recording
    def allocate(self, scope: Scope, session_id: str, batch: Any, now: datetime) -> Any:
        from mongomem.shortterm.ports import TOKEN_WINDOW, AgentConflict, Allocated, TokenSeen

        agent_id, count, tokens, client_token = batch.agent_id, batch.size, batch.tokens, batch.client_token
        with self.lock:
            doc = self.docs.setdefault(
                self._key(scope, session_id), self._new(scope, session_id, agent_id, now)
            )
            if agent_id is not None and doc.get("agent_id") != agent_id:
                raise AgentConflict(doc.get("agent_id"))
            if client_token and any(t["t"] == client_token for t in doc["tokens"]):
                raise TokenSeen(client_token)
            doc["last_seq"] += count
            doc["pending"] += count
            doc["unpromoted_tokens"] += tokens
            doc["last_turn_at"], doc["idle_due_at"] = _ms(now), _ms(batch.idle_due_at)
            if client_token:
                doc["tokens"] = [*doc["tokens"], {"t": client_token, "at": _ms(now)}][-TOKEN_WINDOW:]
            return Allocated(
                doc["last_seq"], doc["pending"], doc["unpromoted_tokens"], doc.get("size_due_at") is not None
            )

    def mark_size_due(self, scope: Scope, session_id: str, at: datetime) -> None:
        with self.lock:
            doc = self.docs.get(self._key(scope, session_id))
            if doc is not None and "size_due_at" not in doc:
                doc["size_due_at"] = _ms(at)

    def clear_size_due(
        self, scope: Scope, session_id: str, max_messages: int, max_tokens: int | None
    ) -> None:
        with self.lock:
            doc = self.docs.get(self._key(scope, session_id))
            if doc is None or doc["pending"] >= max_messages:
                return
            if max_tokens and doc["unpromoted_tokens"] >= max_tokens:
                return
            doc.pop("size_due_at", None)

    def token_seen_at(self, scope: Scope, session_id: str, client_token: str) -> datetime | None:
        doc = self.docs.get(self._key(scope, session_id))
        seen = [t["at"] for t in (doc or {}).get("tokens", []) if t["t"] == client_token]
        return seen[0] if seen else None

    # -- reading
    def get(self, scope: Scope, session_id: str) -> Any:
        doc = self.docs.get(self._key(scope, session_id))
        return self._session(doc) if doc else None

    def user_sessions(
        self, scope: Scope, limit: int, before: tuple[datetime, str] | None = None
    ) -> list[Any]:
        mine = [d for d in self.docs.values() if (d["tenant"], d["user_id"]) == (scope.tenant, scope.user_id)]
        if before is not None:
            at, sid = before
            mine = [d for d in mine if (d.get("last_turn_at"), d["session_id"]) < (at, sid)]
        mine.sort(key=lambda d: (d.get("last_turn_at"), d["session_id"]), reverse=True)
        return [self._session(d) for d in mine[:limit]]

    # -- promotion
    @staticmethod
    def _free(doc: dict[str, Any], now: datetime) -> bool:
        return doc.get("lease_until") is None or not doc["lease_until"] > now

    def _lease(self, doc: dict[str, Any], owner: str, now: datetime, lease_seconds: int) -> Any:
        doc["lease_until"] = _ms(now + timedelta(seconds=lease_seconds))
        doc["lease_owner"] = owner
        return self._session(doc)

    def claim_due(self, owner: str, now: datetime, lease_seconds: int) -> Any:
        with self.lock:
            for rule in ("idle_due_at", "size_due_at"):
                due = [
                    d
                    for d in self.docs.values()
                    if d.get(rule) is not None and d[rule] <= now and self._free(d, now)
                ]
                if due:
                    return self._lease(min(due, key=lambda d: d[rule]), owner, now, lease_seconds)
        return None

    def claim(self, scope: Scope, session_id: str, owner: str, now: datetime, lease_seconds: int) -> Any:
        with self.lock:
            doc = self.docs.get(self._key(scope, session_id))
            if doc is None or not self._free(doc, now):
                return None
            return self._lease(doc, owner, now, lease_seconds)

    def release(self, scope: Scope, session_id: str, owner: str) -> None:
        with self.lock:
            doc = self.docs.get(self._key(scope, session_id))
            if doc is not None and doc.get("lease_owner") == owner:
                doc.pop("lease_until", None)
                doc.pop("lease_owner", None)

    def advance(self, scope: Scope, session_id: str, snapshot: Any) -> Any:
        with self.lock:
            doc = self.docs.get(self._key(scope, session_id))
            if doc is None or doc["promoted_through_seq"] != snapshot.from_seq - 1:
                return None
            doc["promoted_through_seq"] = snapshot.to_seq
            doc["pending"] -= snapshot.to_seq - snapshot.from_seq + 1
            doc["unpromoted_tokens"] -= snapshot.tokens
            if doc["pending"] <= 0:
                doc.pop("idle_due_at", None)
                doc.pop("size_due_at", None)
                doc["unpromoted_tokens"] = 0
            return self._session(doc)

    def forget_deleted(
        self, scope: Scope, session_id: str, tokens: int, deleted: tuple[int, int] | None
    ) -> None:
        from mongomem.shortterm.ports import DELETED_RANGES

        with self.lock:
            doc = self.docs.get(self._key(scope, session_id))
            if doc is None:
                return
            doc["unpromoted_tokens"] -= tokens
            if deleted is not None:
                doc["deleted_ranges"] = [*doc.get("deleted_ranges", []), tuple(deleted)][-DELETED_RANGES:]

    # -- threads
    def create_copy(self, scope: Scope, session_id: str, source: Any, now: datetime) -> bool:
        with self.lock:
            key = self._key(scope, session_id)
            if key in self.docs:
                return False
            doc = self._new(scope, session_id, source.agent_id, now)
            doc.update(
                last_turn_at=_ms(source.last_turn_at or now),
                last_seq=source.last_seq,
                promoted_through_seq=source.last_seq,
            )
            self.docs[key] = doc
            return True

    def delete(self, scope: Scope, session_id: str) -> bool:
        with self.lock:
            return self.docs.pop(self._key(scope, session_id), None) is not None


class InMemorySnapshotRepository:
    """shortterm.ports.SnapshotRepository in a dict of documents shaped as the MongoDB adapter's: the id
    is a hash of (session, from_seq), so racing cuts of one range collide as they do there."""

    def __init__(self) -> None:
        self.docs: dict[str, dict[str, Any]] = {}  # snapshot_id -> document
        self.lock = threading.Lock()

    @staticmethod
    def _id(scope: Scope, session_id: str, from_seq: int) -> str:
        import hashlib

        name = f"{scope.tenant}|{scope.user_id}|{session_id}#{from_seq}"
        return "snap-" + hashlib.sha256(name.encode()).hexdigest()[:24]

    @staticmethod
    def _snapshot(doc: dict[str, Any]) -> Any:
        from mongomem.models.sessions import StoredSnapshot

        return StoredSnapshot.model_validate(copy.deepcopy(doc))

    @staticmethod
    def _mine(doc: dict[str, Any], scope: Scope) -> bool:
        return bool((doc["tenant"], doc["user_id"]) == (scope.tenant, scope.user_id))

    def create(self, snapshot: Any) -> Any:
        scope = Scope(tenant=snapshot.tenant, user_id=snapshot.user_id)
        sid = self._id(scope, snapshot.session_id, snapshot.from_seq)
        with self.lock:
            if sid not in self.docs:
                doc = snapshot.model_dump(exclude={"extraction"})
                doc["created_at"] = _ms(doc["created_at"])
                doc.update(
                    snapshot_id=sid,
                    fanned_out=False,
                    extraction={k: v.model_dump(exclude_none=True) for k, v in snapshot.extraction.items()},
                )
                self.docs[sid] = doc
            return self._snapshot(self.docs[sid])

    def get(self, snapshot_id: str) -> Any:
        doc = self.docs.get(snapshot_id)
        return self._snapshot(doc) if doc else None

    def get_for(self, scope: Scope, snapshot_id: str) -> Any:
        doc = self.docs.get(snapshot_id)
        return self._snapshot(doc) if doc and self._mine(doc, scope) else None

    def starting_at(self, scope: Scope, session_id: str, from_seq: int) -> Any:
        return self.get(self._id(scope, session_id, from_seq))

    def of_session(self, scope: Scope, session_id: str, limit: int = 100) -> list[Any]:
        found = [d for d in self.docs.values() if self._mine(d, scope) and d["session_id"] == session_id]
        found.sort(key=lambda d: d["from_seq"], reverse=True)
        return [self._snapshot(d) for d in found[:limit]]

    def failed(
        self, tenant: str, user_id: str | None, kinds: list[str], limit: int, before: datetime | None = None
    ) -> list[Any]:
        found = [
            d
            for d in self.docs.values()
            if d["tenant"] == tenant
            and (user_id is None or d["user_id"] == user_id)
            and (before is None or d["created_at"] < before)
            and any(d["extraction"].get(k, {}).get("status") == "failed" for k in kinds)
        ]
        found.sort(key=lambda d: d["created_at"], reverse=True)
        return [self._snapshot(d) for d in found[:limit]]

    def mark_fanned_out(self, snapshot_id: str) -> None:
        with self.lock:
            if snapshot_id in self.docs:
                self.docs[snapshot_id]["fanned_out"] = True

    def unfanned(self, older_than: datetime, limit: int) -> list[Any]:
        found = [d for d in self.docs.values() if not d["fanned_out"] and d["created_at"] <= older_than]
        found.sort(key=lambda d: d["created_at"])
        return [self._snapshot(d) for d in found[:limit]]

    def set_extraction(self, snapshot_id: str, kind: str, update: Any, inc_attempts: bool = False) -> Any:
        fields = update.model_dump(exclude_unset=True)
        with self.lock:
            doc = self.docs.get(snapshot_id)
            if doc is None:
                return None
            status = doc["extraction"].setdefault(kind, {})
            status.update({k: _ms(v) if isinstance(v, datetime) else v for k, v in fields.items()})
            if inc_attempts:
                status["attempts"] = status.get("attempts", 0) + 1
            return self._snapshot(doc)

    def requeue_extraction(self, scope: Scope, snapshot_id: str, kind: str, at: datetime) -> Any:
        with self.lock:
            doc = self.docs.get(snapshot_id)
            status = doc["extraction"].get(kind) if doc and self._mine(doc, scope) else None
            if doc is None or status is None or "status" not in status or status["status"] == "done":
                return None
            status.update(status="queued", error=None, updated_at=_ms(at))
            return self._snapshot(doc)

    def hand_off(self, snapshot_id: str, kind: str, done: bool = True) -> bool:
        with self.lock:
            doc = self.docs.get(snapshot_id)
            if doc is None:
                return False
            if (doc["extraction"].get(kind, {}).get("handed_off") is True) == done:
                return False
            doc["extraction"].setdefault(kind, {})["handed_off"] = done
            return True

    def delete_session(self, scope: Scope, session_id: str) -> int:
        with self.lock:
            doomed = [
                k for k, d in self.docs.items() if self._mine(d, scope) and d["session_id"] == session_id
            ]
            for k in doomed:
                del self.docs[k]
        return len(doomed)


class InMemoryStore:
    """Every collection the cross-collection repositories read together, as the fakes above: what one
    MongoDB database is to the erasure, backlog and directory adapters. `others` stands for collections
    no repository knows (added later), which erasure must sweep all the same."""

    def __init__(self) -> None:
        self.sessions = InMemorySessionRepository()
        self.turns = InMemoryTurnRepository()
        self.snapshots = InMemorySnapshotRepository()
        self.memories = InMemoryMemoryRepository()
        self.working_memory = InMemoryWorkingMemory()
        self.others: dict[str, list[dict[str, Any]]] = {}

    # -- seeding hooks (tests/contract/seed.py: MongoStore has the same)
    def add_memory(self, scope: Scope, memory_id: str, status: str, at: datetime) -> None:
        from mongomem.models.memory import MemoryRecord

        record = MemoryRecord(
            memory_id=memory_id,
            lineage_id=memory_id,
            version=1,
            tenant=scope.tenant,
            user_id=scope.user_id,
            type="semantic",
            key="fact",
            payload={},
            text="a fact",
            created_at=at,
            updated_at=at,
            status=status,
        )
        assert self.memories.insert(record)

    def add_record(self, record: Any) -> None:
        assert self.memories.insert(record)

    def record(self, scope: Scope, memory_id: str) -> Any:
        return self.memories.get(scope, memory_id)

    def add_document(self, collection: str, doc: dict[str, Any]) -> None:
        self.others.setdefault(collection, []).append(copy.deepcopy(doc))

    def documents(self, scope: Scope) -> dict[str, int]:
        """How many documents of the scope each collection holds (those holding any), by MongoDB's names."""
        mine = (scope.tenant, scope.user_id)
        found = {
            "sessions": sum((d["tenant"], d["user_id"]) == mine for d in self.sessions.docs.values()),
            "turns": sum((t.tenant, t.user_id) == mine for t in self.turns.docs.values()),
            "snapshots": sum((d["tenant"], d["user_id"]) == mine for d in self.snapshots.docs.values()),
            "memories": sum((r.tenant, r.user_id) == mine for r in self.memories.docs.values()),
            "resources": sum(k[0] == "resource" and k[1:3] == mine for k in self.working_memory.docs),
            "threads": sum(k[:2] == mine for k in self.working_memory.threads),
        }
        for name, docs in self.others.items():
            found[name] = sum((d.get("tenant"), d.get("user_id")) == mine for d in docs)
        return {name: n for name, n in found.items() if n}

    def turn_expiry(self) -> dict[tuple[str, int], datetime]:
        return {(key[1], key[3]): at for key, at in self.turns.expire_at.items()}


class InMemoryErasureRepository:
    """erasure.ErasureRepository over an InMemoryStore: retention and erasing a user everywhere."""

    def __init__(self, store: InMemoryStore) -> None:
        self.store = store

    def expire_turns(self, snapshot: Any, expire_at: datetime) -> int:
        turns, at = self.store.turns, _ms(expire_at)
        assert at is not None
        given = 0
        with turns.lock:
            for t in turns._of_snapshot(snapshot):
                key = (t.tenant, t.user_id, t.session_id, t.seq)
                if snapshot.from_seq <= t.seq <= snapshot.to_seq and key not in turns.expire_at:
                    turns.expire_at[key] = at  # a turn that has an expiry keeps it
                    given += 1
        doc = self.store.snapshots.docs.get(snapshot.snapshot_id)
        if doc is not None:
            doc["turns_expire_at"] = at
        return given

    def erase(self, scope: Scope) -> dict[str, int]:
        store, mine = self.store, (scope.tenant, scope.user_id)

        def drop(docs: dict[Any, Any], owner: Any) -> int:
            doomed = [k for k, v in docs.items() if owner(k, v) == mine]
            for k in doomed:
                del docs[k]
            return len(doomed)

        counts = {"procedure_feedback": 0}  # the memory fake keeps no per-user reports
        counts["sessions"] = drop(store.sessions.docs, lambda k, d: (d["tenant"], d["user_id"]))
        counts["snapshots"] = drop(store.snapshots.docs, lambda k, d: (d["tenant"], d["user_id"]))
        counts["turns"] = drop(store.turns.docs, lambda k, t: (t.tenant, t.user_id))
        drop(store.turns.expire_at, lambda k, at: k[:2])
        counts["memories"] = drop(store.memories.docs, lambda k, r: (r.tenant, r.user_id))
        wm = store.working_memory
        counts["threads"] = drop(wm.threads, lambda k, t: k[:2])
        counts["resources"] = drop(wm.docs, lambda k, v: k[1:3] if k[0] == "resource" else None)
        drop(wm.docs, lambda k, v: k[1:3])  # thread working memory went with its thread
        counts["queue_messages"] = 0  # no local queue here
        other = 0
        for name, docs in store.others.items():
            kept = [d for d in docs if (d.get("tenant"), d.get("user_id")) != mine]
            other += len(docs) - len(kept)
            store.others[name] = kept
        counts["other"] = other
        return counts

    def forget_in_request_logs(self, tenant: str, memory_ids: list[str]) -> int:
        """The fake roots keep no request log (requests are not logged in memory)."""
        return 0

    def settle(self) -> None:
        """Nothing to checkpoint in memory."""

    def schedule_sweep(self, scope: Scope, due: datetime, written_before: datetime) -> None:
        self.store.others.setdefault("erasure_sweeps", [])
        sweeps = [d for d in self.store.others["erasure_sweeps"] if d["key"] != (scope.tenant, scope.user_id)]
        sweeps.append({"key": (scope.tenant, scope.user_id), "due": due, "written_before": written_before})
        self.store.others["erasure_sweeps"] = sweeps

    def due_sweeps(self, now: datetime, limit: int) -> list[Any]:
        from mongomem.erasure import PendingSweep

        due = sorted(
            (d for d in self.store.others.get("erasure_sweeps", []) if d["due"] <= now),
            key=lambda d: d["due"],
        )
        return [
            PendingSweep(
                tenant=d["key"][0], user_id=d["key"][1], due=d["due"], written_before=d["written_before"]
            )
            for d in due[:limit]
        ]

    def sweep_done(self, sweep: Any) -> None:
        self.store.others["erasure_sweeps"] = [
            d
            for d in self.store.others.get("erasure_sweeps", [])
            if not (d["key"] == (sweep.tenant, sweep.user_id) and d["written_before"] == sweep.written_before)
        ]

    def forget_org_evidence(self, scope: Scope, at: datetime) -> tuple[list[str], list[str]]:
        memories, when = self.store.memories, _ms(at)
        changed: list[str] = []
        deleted: list[str] = []
        emptied: dict[str, str | None] = {}  # lineage -> the id its deleted active version replaced
        replaced: dict[str, str | None] = {}  # deleted version -> the id it replaced
        with memories.lock:
            stated = [
                r
                for r in memories.docs.values()
                if (r.tenant, r.user_id) == (scope.tenant, ORG_OWNER)
                and any(e.user_id == scope.user_id for e in r.evidence)
            ]
            for r in stated:
                # a tenant-wide entry naming the user is the tenant's word: it stays, without them
                mine = [e for e in r.evidence if e.user_id == scope.user_id and not e.tenant_wide]
                rest = [
                    e.model_copy(update={"user_id": None, "snapshot_id": None, "seqs": []})
                    if e.user_id == scope.user_id
                    else e
                    for e in r.evidence
                    if not (e.user_id == scope.user_id and not e.tenant_wide)
                ]
                if not rest:
                    del memories.docs[r.memory_id]
                    deleted.append(r.memory_id)
                    replaced[r.memory_id] = r.supersedes
                    if r.status == "active":
                        emptied[r.lineage_id] = r.supersedes
                    continue
                said = {e.snapshot_id for e in mine if e.snapshot_id}
                update: dict[str, Any] = {
                    "evidence": rest,
                    "decisions": [d for d in r.decisions if d.snapshot_id not in said],
                    "reinforcement_count": max(1, r.reinforcement_count - sum(e.counted for e in mine)),
                    "updated_at": when,
                    "index_state": "pending",
                }
                seen = [e.observed_at for e in rest if e.observed_at]
                if seen:  # never earlier than the version's own time (docs/adr/0072)
                    update["observed_at"] = max(min(seen), r.observed_at) if r.observed_at else min(seen)
                memories.docs[r.memory_id] = r.model_copy(deep=True, update=update)
                changed.append(r.memory_id)
            for lineage_id, before in emptied.items():
                while before in replaced:  # past the versions this erase deleted too
                    before = replaced[before]
                versions = {
                    r.memory_id: r
                    for r in memories.docs.values()
                    if (r.tenant, r.user_id, r.lineage_id) == (scope.tenant, ORG_OWNER, lineage_id)
                }
                # replaced by a later version: never a proposal, one kept as history, or one retracted
                survivors = [
                    r
                    for r in versions.values()
                    if r.status == "superseded"
                    and r.superseded_by
                    and (r.superseded_by not in versions or versions[r.superseded_by].version > r.version)
                ]
                if not survivors or any(r.status == "active" for r in versions.values()):
                    continue
                back = next((r for r in survivors if r.memory_id == before), None) or max(
                    survivors, key=lambda r: r.version
                )
                memories.docs[back.memory_id] = back.model_copy(
                    update={
                        "status": "active",
                        "updated_at": when,
                        "index_state": "pending",
                        "superseded_by": None,
                        "valid_to": None,
                    }
                )
                changed.append(back.memory_id)
            for r in list(memories.docs.values()):  # the metadata the user gave, wherever it was carried
                if (r.tenant, r.user_id, r.metadata_by) == (scope.tenant, ORG_OWNER, scope.user_id):
                    update = {
                        "metadata": {},
                        "metadata_by": None,
                        "updated_at": when,
                        "index_state": "pending",
                    }
                    memories.docs[r.memory_id] = r.model_copy(update=update)
                    changed.append(r.memory_id)
        return list(dict.fromkeys(changed)), deleted


def _of(tenant: str | None, user_id: str | None, doc_tenant: str, doc_user: str) -> bool:
    return (tenant is None or doc_tenant == tenant) and (user_id is None or doc_user == user_id)


class InMemoryBacklogRepository:
    """status.BacklogRepository over an InMemoryStore: waiting work per tenant, user, or overall."""

    WAITING = ("queued", "running", "failed")

    def __init__(self, store: InMemoryStore) -> None:
        self.store = store

    def sessions_waiting(self, tenant: str | None, user_id: str | None = None) -> int:
        docs = self.store.sessions.docs.values()
        return sum(_of(tenant, user_id, d["tenant"], d["user_id"]) and d["pending"] > 0 for d in docs)

    def recall_pending(self, tenant: str | None, user_id: str | None = None) -> int:
        turns = self.store.turns.docs.values()
        return sum(_of(tenant, user_id, t.tenant, t.user_id) and t.recall_indexed is False for t in turns)

    def extraction_backlog(self, tenant: str | None, user_id: str | None = None) -> dict[str, Any]:
        from mongomem.models.stats import KindBacklog

        rows: dict[str, dict[str, Any]] = {}
        for doc in self.store.snapshots.docs.values():
            if not _of(tenant, user_id, doc["tenant"], doc["user_id"]):
                continue
            for kind, status in doc["extraction"].items():
                state = status.get("status")
                if state not in self.WAITING:
                    continue
                row = rows.setdefault(kind, {})
                row[state] = row.get(state, 0) + 1
                if state != "failed":
                    seen = row.get("oldest_waiting_at")
                    row["oldest_waiting_at"] = min(seen, doc["created_at"]) if seen else doc["created_at"]
        return {kind: KindBacklog.model_validate(figures) for kind, figures in rows.items()}

    def extraction_health(self, tenant: str | None, since: datetime) -> dict[str, Any]:
        from mongomem.models.stats import KindHealth

        recent = [
            (doc["snapshot_id"], kind, status)
            for doc in self.store.snapshots.docs.values()
            if _of(tenant, None, doc["tenant"], doc["user_id"])
            for kind, status in doc["extraction"].items()
            if status.get("updated_at") is not None and status["updated_at"] >= since
        ]
        out: dict[str, dict[str, Any]] = {}
        for snapshot_id, kind, status in sorted(recent, key=lambda r: r[2]["updated_at"]):
            row = out.setdefault(
                kind,
                {
                    "failures": 0,
                    "done": 0,
                    "refused": {},
                    "outcomes": {},
                    "suspect_empty": 0,
                    "kept_private": {},
                },
            )
            if status.get("status") == "failed":
                row["failures"] += 1
                row["last_error"] = {
                    "at": status.get("updated_at"),
                    "snapshot_id": snapshot_id,
                    "reason": status.get("reason"),
                    "final": bool(status.get("final")),
                    "error": status.get("error"),
                }
            elif status.get("status") == "done":
                row["done"] += 1
            for reason, n in (status.get("refused") or {}).items():
                row["refused"][reason] = row["refused"].get(reason, 0) + int(n)
            for reason, n in (status.get("kept_private") or {}).items():
                row["kept_private"][reason] = row["kept_private"].get(reason, 0) + int(n)
            outcome = status.get("outcome") if status.get("status") == "done" else None
            if outcome:
                row["outcomes"][outcome] = row["outcomes"].get(outcome, 0) + 1
                if outcome == "empty_answer" and (status.get("rules_found") or 0) > 0:
                    row["suspect_empty"] += 1
        return {kind: KindHealth.model_validate(figures) for kind, figures in out.items()}

    def user_backlog(self, scope: Scope, recall: bool) -> Any:
        from mongomem.status import UserBacklog

        store, out = self.store, UserBacklog()
        for doc in store.sessions.docs.values():
            if not _of(scope.tenant, scope.user_id, doc["tenant"], doc["user_id"]) or doc["pending"] <= 0:
                continue
            out.unpromoted_turns += doc["pending"]
            rest = [
                t for t in store.turns._of(scope, doc["session_id"]) if t.seq > doc["promoted_through_seq"]
            ]
            if rest:
                out.note(rest[0].recorded_at)
        for doc in store.snapshots.docs.values():
            statuses = {s.get("status") for s in doc["extraction"].values()}
            if _of(scope.tenant, scope.user_id, doc["tenant"], doc["user_id"]) and statuses & {
                "queued",
                "running",
            }:
                out.extracting_snapshots += 1
                out.extracting_turns += doc["turn_count"]
                out.note(doc["created_at"])
        if recall:
            waiting = [
                t
                for t in store.turns.docs.values()
                if (t.tenant, t.user_id) == (scope.tenant, scope.user_id) and t.recall_indexed is False
            ]
            out.unindexed_turns = len(waiting)
            if waiting:
                out.note(min(t.recorded_at for t in waiting))
        return out


class InMemoryDirectoryRepository:
    """directory.DirectoryRepository over an InMemoryStore: a tenant's users, found where their data is
    (sessions, memories, working memory), each stream cut at `limit` users then merged, as the adapter."""

    def __init__(self, store: InMemoryStore) -> None:
        self.store = store

    def users(self, tenant: str, limit: int, after: str | None = None, only: str | None = None) -> list[Any]:
        from mongomem.models.users import UserSummary

        def wanted(doc_tenant: str, user: str) -> bool:
            if doc_tenant != tenant:
                return False
            if only is not None:
                return user == only
            return after is None or user > after

        store = self.store
        streams: dict[str, list[tuple[str, int, datetime | None]]] = {
            "sessions": [
                (d["user_id"], 1, d.get("last_turn_at"))
                for d in store.sessions.docs.values()
                if wanted(d["tenant"], d["user_id"])
            ],
            "memories": [
                (r.user_id, int(r.status == "active"), _ms(r.updated_at))
                for r in store.memories.docs.values()
                if wanted(r.tenant, r.user_id)
            ],
            "working_memory": [
                (k[2], 1, v.updated_at)
                for k, v in store.working_memory.docs.items()
                if k[0] == "resource" and wanted(k[1], k[2])
            ],
        }
        rows: dict[str, dict[str, Any]] = {}
        for field, entries in streams.items():
            groups: dict[str, tuple[int, datetime | None]] = {}
            for user, n, at in entries:
                count, last = groups.get(user, (0, None))
                groups[user] = (count + n, at if last is None or (at is not None and at > last) else last)
            for user in sorted(groups)[:limit]:
                count, last = groups[user]
                row = rows.setdefault(
                    user, {"user_id": user, "sessions": 0, "memories": 0, "last_activity_at": None}
                )
                if field in row:
                    row[field] = count
                seen = row["last_activity_at"]
                row["last_activity_at"] = last if seen is None or (last is not None and last > seen) else seen
        return [UserSummary.model_validate(rows[user]) for user in sorted(rows)[:limit]]


class InMemoryQueue:
    """ports.QueuePort in lists: one queue per extraction queue name (a built-in kind's own, `custom` for
    every custom type), as SQS and the local stack's queue; tests/contract/test_queue_port.py runs against
    all three. The body travels as JSON (what cannot be serialised is refused, as by both), and a kind
    whose queue is not configured is refused as SqsQueue refuses it."""

    def __init__(self, queues: list[str]) -> None:
        self.queues: dict[str, list[str]] = {name: [] for name in queues}
        self.lock = threading.Lock()

    def send_extraction(self, kind: str, body: dict[str, Any]) -> None:
        import json

        from mongomem.errors import QueueUnavailable
        from mongomem.kindnames import queue_name

        queue = queue_name(kind)
        if queue not in self.queues:
            raise QueueUnavailable(f"no queue configured for memory type {str(kind)!r} (queue {queue!r})")
        text = json.dumps(body, sort_keys=True)
        with self.lock:
            self.queues[queue].append(text)

    def receive(self, queue: str) -> list[dict[str, Any]]:
        """Take every message waiting in the queue (received messages are gone: no redelivery here)."""
        import json

        with self.lock:
            taken, self.queues[queue] = self.queues[queue], []
        return [json.loads(text) for text in taken]
