"""What the writer reads before it decides: a new memory's `Candidates`, in the order of evidence.

Reading stops where the evidence suffices (a redelivery needs no key lookup, a key match no vector
search), so a write costs the round trips its decision needs. A batch of one kind reads its keys in
one round trip (`KeyReads`); a key written during the batch is read again from the store, so two items
of one batch with the same key see each other's write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mongomem.kinds import MemoryKind
from mongomem.kinds.base import accents_of, as_read, norm, run_together, symbols_of
from mongomem.longterm.ports import MemoryRepository
from mongomem.longterm.write.decide import additions, restates_by_key
from mongomem.longterm.write.decision import Candidates, NewMemory
from mongomem.models.common import Scope
from mongomem.models.memory import MemoryRecord
from mongomem.observability import logger
from mongomem.vectors.port import DimensionMismatch, IndexUnavailable, SearchQuery, VectorIndex

# How many memories of the kind the vector index is asked for.
CANDIDATES = 5


@dataclass
class KeyReads:
    """One read of a batch's match keys: their active versions and the versions already holding the
    snapshot's evidence; `stale` are the keys the batch has written since."""

    snapshot_id: str | None
    records: list[MemoryRecord]
    keys: set[str]
    stale: set[str] = field(default_factory=set)

    def knows(self, new: NewMemory) -> bool:
        return self.snapshot_id == new.snapshot_id and new.key in self.keys and new.key not in self.stale

    def with_evidence(self, key: str) -> MemoryRecord | None:
        held = [
            r
            for r in self.records
            if r.key == key and any(e.snapshot_id == self.snapshot_id for e in r.evidence)
        ]
        return max(held, key=lambda r: r.version) if held else None

    def active(self, key: str, agent_id: str | None) -> list[MemoryRecord]:
        found = [r for r in self.records if r.key == key and r.status == "active" and r.agent_id == agent_id]
        return sorted(found, key=lambda r: -r.version)


class CandidateReader:
    def __init__(self, store: MemoryRepository, index: VectorIndex | None) -> None:
        self.store = store
        self.index = index

    def batch(self, scope: Scope, kind: MemoryKind, keys: list[str], snapshot_id: str | None) -> KeyReads:
        """Read a batch's keys at once (one round trip instead of two per item)."""
        return KeyReads(snapshot_id, self.store.by_keys(scope, kind.name, keys, snapshot_id), set(keys))

    def read(self, scope: Scope, new: NewMemory, batch: KeyReads | None = None) -> Candidates:
        """The redelivery check, the key's active versions (and its lineage when the key gets another
        value), and only when no key matched, the nearest memories by meaning."""
        cached = batch is not None and batch.knows(new)
        if batch is not None:
            batch.stale.add(new.key)  # whatever happens next may write this key
        found = Candidates()
        if new.snapshot_id:
            found.prior = (
                batch.with_evidence(new.key)
                if cached and batch is not None
                else self.store.with_evidence(scope, new.kind.name, new.key, new.snapshot_id)
            )
            if found.prior is not None and new.kind.keyed_apart(found.prior.payload, new.payload):
                found.prior = self._prior_apart(scope, new)  # the snapshot's other value of the key
            if found.prior is not None:
                return found
        if not new.reconcile and not new.retraction:
            return found
        by_key = (
            batch.active(new.key, new.agent_id)
            if cached and batch is not None
            else self.store.active_by_key(scope, new.kind.name, new.key, new.agent_id)
        )
        # one key, another name ("Q++" and "Q#", "C++ team" and "C# team" share the key "q") is not the
        # same memory, in any memory; nor another value of a key that holds it ("C++" and "C#" of one's
        # languages)
        shared, kind = new.visibility == "org", new.kind
        found.by_key = [r for r in by_key if kind.same_name(r.payload, new.payload)]
        if not found.by_key and new.proposes_only and not new.retraction:
            alike = self.read_alike(scope, new, by_key)
            if alike:
                by_key, found.by_key = alike, alike
        elif found.by_key and new.proposes_only and not new.retraction and shared:
            claimed = self.claimed_by_alias(scope, new, found.by_key[0])
            if claimed:
                by_key, found.by_key = claimed, claimed
        if (
            found.by_key
            and not new.retraction
            and (not restates_by_key(new, found.by_key[0]) or additions(new, found.by_key[0]) is not None)
        ):
            # another value for the key (for an org memory: not repeated to the letter), or one user's
            # additions to an org memory: its versions decide the next number (and hold any proposal)
            found.lineage = self.store.lineage(scope, found.by_key[0].lineage_id)
        if not found.by_key and not new.retraction:
            # a memory of the key under another name is no restatement of this one by meaning either
            other_names = {r.memory_id for r in by_key}
            found.by_meaning = [
                (s, c) for s, c in self.by_meaning(scope, new) if c.memory_id not in other_names
            ]
        return found

    def _prior_apart(self, scope: Scope, new: NewMemory) -> MemoryRecord | None:
        """The newest version of the key holding this snapshot's evidence whose value is the new
        memory's (a key that holds values told apart by their marks: "C++" and "C#" of one snapshot)."""
        held = [
            r
            for r in self.store.by_keys(scope, new.kind.name, [new.key], new.snapshot_id)
            if any(e.snapshot_id == new.snapshot_id for e in r.evidence)
            and not new.kind.keyed_apart(r.payload, new.payload)
        ]
        return max(held, key=lambda r: r.version) if held else None

    def read_alike(self, scope: Scope, new: NewMemory, by_key: list[MemoryRecord]) -> list[MemoryRecord]:
        """One user's new org memory whose name reads as an org memory's name ("PLTZ." or "\u0420LTZ",
        Cyrillic ER, for "PLTZ"; "KPI" for a stored "K.P.I."), in the form it was said or in another form
        the kind holds it under (`MemoryKind.held_forms`: a fact said to be many-valued): that memory's
        active versions, newest first, after the new memory takes its form and name (docs/security.md
        "Names that read alike"). The statement is then a restatement of that memory or a proposal against
        it, never a second one beside it that nobody backs; the tenant key keeps the exact name
        (`same_name`: its "X#" is no "X++")."""
        kind = new.kind
        for form in [new.payload, *kind.held_forms(new.payload)]:
            alike = self._alike(scope, new, form, by_key if form is new.payload else [])
            if alike:
                break
        else:
            return []
        return _renamed(new, form, alike)

    def claimed_by_alias(self, scope: Scope, new: NewMemory, held: MemoryRecord) -> list[MemoryRecord]:
        """One user's restatement of an org memory that adds, as an alias, a name another org memory
        goes by (their own term, then its alias "P7ABCD", the tenant's term): that memory's active
        versions, after the statement is renamed as it. Said in one statement, a new term claiming the
        name is a proposal against that memory (`read_alike`); said in two, it is the same proposal,
        never an addition its only user merges at once (issue 33's eleventh probe)."""
        kind = new.kind
        if len(kind.named) != 1:
            return []
        had = {norm(str(a)) for f in kind.alias_fields for a in held.payload.get(f) or []}
        added = [
            a
            for f in kind.alias_fields
            for a in new.payload.get(f) or []
            if isinstance(a, str) and norm(a) and norm(a) not in had
        ]
        if not added:
            return []
        # the names the new aliases read as, and only those: the memory's own name is its own
        said = {kind.name_read({**new.payload, kind.named[0]: a}) for a in added}
        claimed = self.named_as_alias(scope, new, new.payload, besides=held.key, said=said)
        return _renamed(new, new.payload, claimed) if claimed else []

    def _alike(
        self, scope: Scope, new: NewMemory, form: dict[str, Any], by_key: list[MemoryRecord]
    ) -> list[MemoryRecord]:
        """The active org versions whose name reads as `form`'s: by its key and its read key (`by_key`:
        the versions of the new memory's own key, read already), then among the stored names that read
        otherwise than they are keyed, then through aliases."""
        kind = new.kind
        alike = [*by_key]
        known = new.key if form is new.payload else None  # `by_key` holds its versions
        for key in dict.fromkeys((kind.key(form), kind.read_key(form))):
            if key != known:
                alike += self.store.active_by_key(scope, kind.name, key, new.agent_id)
        alike = [r for r in alike if r.visibility == "org" and _reads_alike(kind, r.payload, form)]
        return alike or self.stored_read_as(scope, new, form) or self.named_as_alias(scope, new, form)

    def stored_read_as(self, scope: Scope, new: NewMemory, form: dict[str, Any]) -> list[MemoryRecord]:
        """The active org versions whose name reads as `form`'s though their keys differ: a name stored
        spelled out ("K.P.I.", keyed "k p i") or with look-alike letters, said as the word, or one word
        split by a hyphen or a space on either side ("Wi-Fi" / "WiFi"). Reads the kind's active keys once
        (only for a one-user caller's new org name no key matched) and looks up those that read alike."""
        kind = new.kind
        wanted = _read(kind.read_key(form))
        looked_up = {kind.key(form), kind.read_key(form)}  # by `_alike`, already
        for key, _ in self.store.active_names(scope, kind.name, []):
            if key not in looked_up and _read(key) == wanted:
                found = self.store.active_by_key(scope, kind.name, key, new.agent_id)
                found = [r for r in found if r.visibility == "org" and _reads_alike(kind, r.payload, form)]
                if found:
                    return found
        return []

    def named_as_alias(
        self,
        scope: Scope,
        new: NewMemory,
        form: dict[str, Any],
        besides: str | None = None,
        said: set[str] | None = None,
    ) -> list[MemoryRecord]:
        """One user's new org memory that goes by a name an org memory goes by, through an alias on
        either side ("pallet zone K" named as the tenant's term whose alias it is, or a new term claiming
        that term's name as its alias): that memory's active versions, newest first (docs/security.md
        "Names that read alike"). Reads every active name of the kind once, for a new org name only
        (`besides`: the key of the memory the statement restates, whose names are its own; `said`: the
        names to look for, else every name `form` goes by)."""
        kind = new.kind
        if not kind.alias_fields:
            return []
        said = kind.names_read(form) if said is None else said
        fields = [*kind.named, *sorted(kind.alias_fields)]
        for key, names in self.store.active_names(scope, kind.name, fields):
            if key != besides and said & kind.names_read(names):
                found = self.store.active_by_key(scope, kind.name, key, new.agent_id)
                found = [r for r in found if r.visibility == "org"]
                if found:
                    return found
        return []

    def by_meaning(self, scope: Scope, new: NewMemory) -> list[tuple[float, MemoryRecord]]:
        """The kind's nearest active memories of this scope and embedding model, best first."""
        if self.index is None or not new.vector:
            return []
        query = SearchQuery(
            tenant=scope.tenant,
            user_id=scope.user_id,
            kind="memory",
            text=new.text,
            vector=new.vector,
            top_k=CANDIDATES,
            filters={
                "type": new.kind.name,
                "status": "active",
                "model": new.embedding_model,
                # one agent's memories, or (None) the user's shared ones: never another agent's
                "agent_id": [new.agent_id],
            },
            mode="knn",
        )
        try:
            hits = self.index.search(query)
        except (IndexUnavailable, DimensionMismatch) as exc:
            # without the index (or with another model's index) reconciliation falls back to keys only
            logger.info(
                "reconciling by key only: the vector index cannot be asked", extra={"reason": str(exc)}
            )
            return []
        scores = {h.id: h.score for h in hits}
        found = [
            r
            for r in self.store.get_many(scope, list(scores))
            if r.status == "active"
            and r.type == new.kind.name
            and r.embedding_model == new.embedding_model
            and r.agent_id == new.agent_id
        ]
        return sorted(((scores[r.memory_id], r) for r in found), key=lambda p: (-p[0], p[1].memory_id))


def _renamed(new: NewMemory, form: dict[str, Any], alike: list[MemoryRecord]) -> list[MemoryRecord]:
    """`alike`'s versions of `alike[0]`'s exact name, after the new memory takes `form` and that name."""
    kind = new.kind
    named = alike[0].payload
    said = {f: form[f] for f in kind.named if f in form}
    new.payload = {**form, **{f: named[f] for f in kind.named if f in named}}
    logger.info(
        "a one-user org memory named as another reads as it: takes its form and name",
        extra={"memory_id": alike[0].memory_id, "fields": sorted(said)},
    )
    return [r for r in alike if kind.same_name(r.payload, named)]


def _read(key: str) -> str:
    """A match key as a reader takes it, part by part (`as_read`: look-alike letters as Latin ones, a
    name spelled letter by letter as the word), its words run together: "Wi-Fi" and "WiFi", "PLTZ 7" and
    "PLTZ7" read alike (a hyphen or a space inside a word is no other name), two numbers never ("1.23" /
    "12.3": `run_together`); the parts' separator is the key's own."""
    return "|".join(run_together(_without_the(norm(as_read(part)))) for part in key.split("|"))


def _without_the(words: str) -> str:
    """A key's words without "the" (a key is folded to lower case, so a capital "A" naming a zone, a
    server or a plan cannot be told from the article "a": only "the" is read away here; issue 33's
    seventeenth probe)."""
    kept = " ".join(w for w in words.split() if w != "the")
    return kept or words


def _reads_alike(kind: MemoryKind, held: dict[str, Any], said: dict[str, Any]) -> bool:
    if kind.keyed_apart(held, said):
        return False
    # accents are letters of a name (Unicode TR39 keeps them): "Résumé" is not "Resume", "avó" not "avô"
    if any(accents_of(str(held.get(f) or "")) != accents_of(str(said.get(f) or "")) for f in kind.named):
        return False
    # so are its symbols: "C++ team" is not "C# team", "Grade A+" not "Grade A-" (issue 33's eighteenth probe)
    if any(symbols_of(str(held.get(f) or "")) != symbols_of(str(said.get(f) or "")) for f in kind.named):
        return False
    return kind.reads_as(held, said) or _read(kind.read_key(held)) == _read(kind.read_key(said))
