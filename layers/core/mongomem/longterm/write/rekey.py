"""Re-keying stored memories: every version gets the match key its kind computes now.

A kind's `key` may change between releases (semantic keys became canonical forms of the attribute in
mongomem.kinds.labels: "favourite colour" and "favorite color" are one key). Reconciliation looks memories
up by key, so a stored key computed the old way would no longer meet its restatements. `mongomem migrate`
(and the stack's Migration custom resource, on every deploy) runs `rekey`: idempotent, it writes only the
keys that differ.

A fact about the user is keyed under the canonical subject "user" whatever name it used (the user's stated
name, their id: mongomem.longterm.subjects); an older release keyed "Maria home city" apart from "user
home city". The payload keeps its wording; only the key changes.

Two memories that were apart under the old keys and share one now (a paraphrase stored twice) are merged
the way reconciliation would have decided: the most recently observed one stays active, the others are
superseded by it (kept as history, listed with status=superseded, never deleted). Their search entries are
marked pending and the index sync rewrites them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from mongomem.kinds import KindRegistry
from mongomem.kinds.base import norm
from mongomem.kinds.labels import names_user
from mongomem.longterm.ports import MemoryRepository
from mongomem.models.common import Scope, utcnow
from mongomem.models.memory import ORG_OWNER, MemoryRecord

BATCH = 500


@dataclass
class RekeyReport:
    seen: int = 0
    rekeyed: int = 0
    merged: int = 0  # active duplicates superseded by the memory they now share a key with
    complete: bool = True  # False: stopped for time; the keys written so far stay, a rerun finishes

    def as_dict(self) -> dict[str, int | bool]:
        return {"seen": self.seen, "rekeyed": self.rekeyed, "merged": self.merged, "complete": self.complete}


def _newest(record: MemoryRecord) -> tuple[datetime, datetime, int, str]:
    observed = record.observed_at or record.created_at
    return (observed, record.created_at, record.version, record.memory_id)


def rekey(
    store: MemoryRepository,
    kinds: KindRegistry,
    progress: Callable[[str], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> RekeyReport:
    """Give every stored version its kind's current key; merge actives that now share one.

    `should_stop` is asked between batches: once it says so, the keys found so far are written and the
    walk ends without merging (merges need every member of a group); the report says it is incomplete."""
    say = progress or (lambda _line: None)
    report = RekeyReport()
    now = utcnow()
    pending: list[tuple[str, str]] = []
    changed_groups: set[tuple[str, str, str, str]] = set()
    actives: dict[tuple[str, str, str, str], list[MemoryRecord]] = defaultdict(list)
    names = _user_names(store, kinds)
    for record in store.all_versions(BATCH):
        if should_stop is not None and report.seen % BATCH == 0 and report.seen and should_stop():
            report.complete = False
            break
        report.seen += 1
        key = _current_key(record, kinds, names)
        if key is None:
            continue
        group = (record.tenant, record.user_id, record.type, key)
        if key != record.key:
            pending.append((record.memory_id, key))
            changed_groups.add(group)
            if len(pending) >= BATCH:
                store.set_keys(pending, now)
                report.rekeyed += len(pending)
                pending = []
        if record.status == "active":
            actives[group].append(record)
    store.set_keys(pending, now)
    report.rekeyed += len(pending)
    if not report.complete:
        say(f"memories: stopped for time after {report.seen} versions ({report.rekeyed} re-keyed); run again")
        return report
    for group in changed_groups:
        report.merged += _merge(store, group, actives.get(group, []), now)
    say(f"memories: {report.rekeyed} of {report.seen} versions re-keyed, {report.merged} duplicates merged")
    return report


def _current_key(
    record: MemoryRecord, kinds: KindRegistry, names: dict[tuple[str, str], set[str]]
) -> str | None:
    """The key the record's kind computes now (in a user's memory a subject naming the user made "user";
    in shared memory the name it shows: docs/adr/0075); None when the kind is unknown to this deployment
    or cannot read the payload (written by another version): the record keeps its key."""
    kind = kinds.get(record.type)
    if kind is None:
        return None
    try:
        payload = record.payload
        if record.user_id == ORG_OWNER:
            return kind.key(kind.as_named(payload))
        subject = kind.subject(payload)
        if subject is not None and names_user(
            subject, names.get((record.tenant, record.user_id), set()), record.user_id
        ):
            payload = kind.with_subject(payload, "user")
        return kind.key(payload)
    except (KeyError, TypeError, ValueError):
        return None


def _merge(
    store: MemoryRepository, group: tuple[str, str, str, str], members: list[MemoryRecord], now: datetime
) -> int:
    """Supersede a group's active versions by its most recently observed one; how many were superseded."""
    if len(members) < 2:
        return 0
    keep = max(members, key=_newest)
    scope = Scope(tenant=group[0], user_id=group[1])
    others = [m for m in members if m.memory_id != keep.memory_id]
    for other in others:
        store.supersede(scope, other.memory_id, keep.memory_id, now)
    return len(others)


def _user_names(store: MemoryRepository, kinds: KindRegistry) -> dict[tuple[str, str], set[str]]:
    """Per (tenant, user): the names the user's active facts give them ("my name is Maria")."""
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for record in store.all_versions(BATCH):
        kind = kinds.get(record.type)
        if record.status != "active" or kind is None:
            continue
        try:
            name = kind.user_name(record.payload)
        except (KeyError, TypeError, ValueError):
            continue
        if name:
            found[(record.tenant, record.user_id)].add(norm(name))
    return found
