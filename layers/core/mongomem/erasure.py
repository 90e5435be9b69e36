"""Retention and erasure: turns expire after their snapshot is extracted; a user can be erased everywhere."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Protocol

from pydantic import BaseModel

from mongomem import contentcache
from mongomem.models.common import Scope, utcnow
from mongomem.models.memory import ORG_OWNER
from mongomem.models.sessions import StoredSnapshot
from mongomem.models.turns import Turn
from mongomem.shortterm.ports import SnapshotRepository, TurnRepository
from mongomem.vectors.port import VectorIndex

# A kind whose extraction ended: its turns are no longer needed for it.
TERMINAL = frozenset({"done", "skipped"})


class ErasureResult(BaseModel):
    """What `DELETE /v1/users/{user_id}` removed, per place."""

    tenant: str
    user_id: str
    erased: dict[str, int]
    total: int


# A kind's text of a payload (`MemoryKind.text`), by the kind's name; KeyError for a kind no longer declared.
TextOf = Callable[[str, dict[str, Any]], str]


# The label fields of the built-in kinds (their `unordered` lists: tests/unit/test_erasure_labels.py keeps
# the two equal): a tenant-wide entry naming an erased user loses its labels with that user, never its
# texts or its value's lists (a procedure's steps): docs/adr/0073.
LABELS = frozenset(
    {"aliases", "related_terms", "participants", "tags", "trigger_conditions", "allowed_tools"}
)


def without_erased_words(
    payload: dict[str, Any],
    erased: list[dict[str, list[str]] | None],
    rest: list[dict[str, list[str]] | None],
    *,
    keyed: bool = True,
) -> dict[str, Any] | None:
    """An org memory's payload without the words only the erased user said (`erased`: their statements'
    words; `rest`: the other users'), or None when nothing changes: a list item (an alias, a tag, a tool
    grant) no other user said, an optional text (a domain, a qualifier's note) no other user gave that
    same value of. Only when every other statement recorded its words (older entries did not: then nothing
    is taken out); a mapping's entries only when they recorded it per key too (`keyed`, "qualifiers.note":
    `stated_words`)."""
    if not erased or any(w is None for w in erased) or any(w is None for w in rest):
        return None
    stated = [w for w in rest if w]
    theirs = {_folded(t) for w in stated for texts in w.values() for t in texts}
    given: dict[str, set[str]] = {}
    for w in stated:
        for name, texts in w.items():
            given.setdefault(name, set()).update(_folded(t) for t in texts)
    # a field every other statement gave is one the kind requires (a term, a definition, a fact's value):
    # it is never emptied, whatever form the others gave it in (a name is matched by its key, not its letters)
    required = set.intersection(*(set(w) for w in stated)) if stated else set()
    mine: dict[str, set[str]] = {}
    for said in erased:
        for name, texts in (said or {}).items():
            mine.setdefault(name, set()).update(_folded(t) for t in texts)
    words = _Words(mine, theirs, given, required, keyed)
    out = words.mapping(payload, "")
    return out if out != payload else None


def _folded(text: str) -> str:
    """A word as erasure compares it (`EvidenceRef.said` entries and payload values alike)."""
    return text.strip().casefold()


class _Words:
    """What the erased user said (`mine`) against what the others said, for one payload."""

    def __init__(
        self,
        mine: dict[str, set[str]],
        theirs: set[str],
        given: dict[str, set[str]],
        required: set[str],
        keyed: bool,
    ) -> None:
        self.mine, self.theirs, self.given, self.required, self.keyed = mine, theirs, given, required, keyed

    def mapping(self, value: dict[str, Any], prefix: str) -> dict[str, Any]:
        """The payload (no prefix: a text that goes becomes None) or one of its mappings (a text that
        goes leaves the mapping: a qualifier has no empty value)."""
        out: dict[str, Any] = {}
        for name, item in value.items():
            path = f"{prefix}{name}"
            if isinstance(item, list):
                said = self.mine.get(path, set()) - self.theirs
                item = [v for v in item if not (isinstance(v, str) and _folded(v) in said)] if said else item
            elif isinstance(item, str) and self.goes(path, item):
                if prefix:
                    continue
                item = None
            elif isinstance(item, dict) and self.keyed:
                item = self.mapping(item, f"{path}.")
            out[name] = item
        return out

    def goes(self, path: str, text: str) -> bool:
        """A text only the erased user gave: they said it, and no other statement gave the field that
        value (nor is it a field every statement gives)."""
        said = _folded(text)
        return (
            said in self.mine.get(path, set())
            and said not in self.given.get(path, set())
            and (path not in self.required)
        )


class ErasureRepository(Protocol):
    """Operations across every collection of a user (the adapter knows which collections hold user data)."""

    def expire_turns(self, snapshot: StoredSnapshot, expire_at: datetime) -> int:
        """Give the snapshot's turns that have no expiry yet `expire_at` (the store deletes them then)."""
        ...

    def erase(self, scope: Scope) -> dict[str, int]:
        """Delete every document of the scope, everywhere; how many per place."""
        ...

    def forget_org_evidence(
        self, scope: Scope, at: datetime, text_of: TextOf | None = None
    ) -> tuple[list[str], list[str]]:
        """Remove the user's evidence from the tenant's org memories; delete the versions it alone
        supported; take out of the others the words only the user said (`without_erased_words`, the
        text rewritten by `text_of`; without it the payload is kept). (changed ids, deleted ids)."""
        ...

    def forget_in_request_logs(self, tenant: str, memory_ids: list[str]) -> int:
        """Drop the calls of the tenant's request logs that returned one of these memories; how many."""
        ...

    def settle(self) -> None:
        """Make the deletions reach the storage files (a checkpoint), where the deployment allows it."""
        ...

    def schedule_sweep(self, scope: Scope, due: datetime, written_before: datetime) -> None:
        """Note that the index must be swept for the user again at `due` (what was written before
        `written_before` only); a later note for the same user replaces it."""
        ...

    def due_sweeps(self, now: datetime, limit: int) -> list[PendingSweep]:
        """The noted sweeps due by `now`, oldest first."""
        ...

    def sweep_done(self, sweep: PendingSweep) -> None:
        """Forget a noted sweep (unless a newer erase of the user replaced it)."""
        ...


class PendingSweep(BaseModel):
    """An erased user's index entries to sweep again once the index has made every earlier write
    searchable (a Serverless collection). Names the user, holds nothing they said."""

    tenant: str
    user_id: str
    due: datetime
    written_before: datetime


def expire_after_extraction(
    snapshots: SnapshotRepository,
    store: ErasureRepository,
    snapshot_id: str,
    ttl_days: int,
    now: datetime | None = None,
) -> int:
    """Start the turns' retention clock once every kind of the snapshot is extracted (done or skipped).

    Unextracted turns never expire. Returns how many turns got an expiry.
    """
    snapshot = snapshots.get(snapshot_id)
    if snapshot is None:
        return 0
    statuses = [s.status for s in snapshot.extraction.values()]
    if not statuses or any(s not in TERMINAL for s in statuses):
        return 0
    return store.expire_turns(snapshot, (now or utcnow()) + timedelta(days=ttl_days))


def delete_after_extraction(
    snapshots: SnapshotRepository,
    turns: TurnRepository,
    forget: Callable[[list[Turn]], int],
    snapshot_id: str,
) -> int:
    """`snapshot.delete_promoted`: once every kind of the snapshot is extracted, delete its turns now,
    and their recall index entries. Returns how many turns were deleted (0 until then, and after)."""
    snapshot = snapshots.get(snapshot_id)
    if snapshot is None:
        return 0
    statuses = [s.status for s in snapshot.extraction.values()]
    if not statuses or any(s not in TERMINAL for s in statuses):
        return 0
    gone = turns.delete_of_snapshot(snapshot)
    # MongoDB first: recall reads turns from MongoDB, so an index entry left by a failure is never returned
    forget(gone)
    return len(gone)


def sweep_erased(
    store: ErasureRepository, index: VectorIndex | None, now: datetime | None = None, limit: int = 100
) -> int:
    """index_sync: sweep the index again for the erased users whose follow-up is due; how many
    documents it removed. A sweep that fails stays noted (the next run retries it)."""
    if index is None:
        return 0
    removed = 0
    for sweep in store.due_sweeps(now or utcnow(), limit):
        removed += index.delete_user(sweep.tenant, sweep.user_id, written_before=sweep.written_before)
        store.sweep_done(sweep)
    return removed


def erase_user(
    store: ErasureRepository,
    index: VectorIndex | None,
    scope: Scope,
    resync: Callable[[Scope, list[str]], int] | None = None,
    text_of: TextOf | None = None,
) -> ErasureResult:
    """Remove a user's turns, sessions, snapshots, memories (all versions), working memory and index entries,
    and their evidence from the tenant's org memories (an org memory only they stated goes entirely, the
    words only they said of one others stated go with `text_of`).

    Idempotent: run it again after a failure (or concurrent activity) to finish the job. `resync` rewrites
    the index entries of org memories that changed (else index_sync does, they are left pending).
    """
    erased = store.erase(scope)
    changed, gone = store.forget_org_evidence(scope, utcnow(), text_of)
    erased["org_memories_deleted"] = len(gone)
    erased["org_memories_updated"] = len(changed)
    # MongoDB first: the index is derived, and index_sync cannot resurrect what MongoDB no longer has.
    erased["index_entries"] = index.delete_user(scope.tenant, scope.user_id) if index is not None else 0
    if index is not None and gone:
        index.delete(gone)
        erased["index_entries"] += len(gone)
    if index is not None and changed:
        # a version that lost the user's words leaves the index before it is written again (`resync` below,
        # else index_sync): replaced in place, its old text stayed in the local index file's freed pages
        # (issue 33's twenty-ninth probe); a deletion is zeroed and checkpointed
        index.delete(changed)
    if index is not None and (later := index.sweep_again_after()) > 0:
        # A write made just before the erase is not searchable yet, so the sweep above cannot see it:
        # index_sync sweeps again once it is (durable: a note in MongoDB, no second call from anyone).
        now = utcnow()
        store.schedule_sweep(scope, now + timedelta(seconds=later), now)
    if resync is not None and changed:
        resync(Scope(tenant=scope.tenant, user_id=ORG_OWNER), changed)
    # Other users were shown the org memories the user stated (their context, their searches): the
    # versions that went, and the ones that lost the user's words, leave those users' request logs too.
    erased["request_log_calls"] = store.forget_in_request_logs(scope.tenant, [*gone, *changed])
    if any(erased.values()):  # nothing deleted: no checkpoint (it costs a journal file locally)
        store.settle()
    # this process's caches keyed by content (other processes forget theirs within ten minutes)
    contentcache.forget()
    return ErasureResult(
        tenant=scope.tenant, user_id=scope.user_id, erased=erased, total=sum(erased.values())
    )
