"""Reconcile a new memory with what is known: the rules, as one pure function.

Order of evidence, strongest first:
1. the same snapshot already wrote it (an SQS redelivery): NOOP;
2. a retraction ends the active versions of its key holding its value (RETRACT), never an org memory
   unless the caller speaks for the tenant;
3. the same match key (the kind's `key`): the kind's normalised comparison decides - the same value is a
   REINFORCE, another value an UPDATE of exactly that lineage (numbers, times, names and short values are
   compared exactly, never by an embedding score); an older statement than the current one is kept as
   history; a user's other value for an org memory is a PROPOSE until enough users state it
   (docs/security.md "The tenant's trust model");
4. the nearest memories of the kind by meaning: a restatement in other words is a REINFORCE; an
   ambiguous match goes to a model's `Judgement` when there is one, which may ADD or REINFORCE but never
   UPDATE a memory of another key, nor REINFORCE across other numbers or negations;
5. otherwise ADD.
Every verdict carries its reason and whether a rule, the model or the caller made it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mongomem.kinds.base import hard_anchors
from mongomem.longterm.write.decision import (
    BackProposal,
    By,
    Candidates,
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
from mongomem.models.memory import MemoryRecord

# How many ambiguous candidates a model is shown.
JUDGED = 3


def decide(new: NewMemory, found: Candidates, thresholds: Thresholds, now: datetime) -> Verdict:
    """The verdict on `new` given what the store holds for it (`now`: when it is written)."""
    if meaning_decides(new, found):  # none of rules 1-3 applies
        return _by_meaning(new, found, thresholds)
    if found.prior is not None:
        # a version kept as history never supersedes anything: only an active one repairs its lineage
        reason = "already applied from this snapshot"
        if found.prior.status == "active":
            return RepairLineage(reason=reason, target=found.prior)
        return Unchanged(reason=reason, target=found.prior)
    if new.retraction:
        return _retract(new, found.by_key, now)
    if not new.reconcile:
        return _add("reconciliation switched off by the caller", "api")
    return _by_key(new, found, now)


def meaning_decides(new: NewMemory, found: Candidates) -> bool:
    """Whether the nearest memories by meaning decide (rule 4): not a redelivery, not a retraction,
    reconciliation on and no version with the key. Only then may a model be asked (`to_judge`)."""
    return found.prior is None and not new.retraction and new.reconcile and not found.by_key


def to_judge(new: NewMemory, found: Candidates, thresholds: Thresholds) -> list[tuple[float, MemoryRecord]]:
    """The candidates a model would be asked about (none when the rules decide without one)."""
    if not meaning_decides(new, found) or _restatement(new, found, thresholds) is not None:
        return []
    return _open_to_restatement(new, _ambiguous(found, thresholds))[:JUDGED]


def _restatement(
    new: NewMemory, found: Candidates, thresholds: Thresholds
) -> tuple[float, MemoryRecord] | None:
    """The best match by meaning when it is close enough to restate `new` and the kind agrees."""
    if not found.by_meaning:
        return None
    best_score, best = found.by_meaning[0]
    kind = new.kind
    if (
        best_score >= thresholds.reinforce_at
        and _restated_as_shared_memory_is(new, best)
        and kind.about_same(best.payload, new.payload)
        and kind.same_aspect(best.payload, new.payload)
        and kind.restates(best.payload, new.payload)
    ):
        return best_score, best
    return None


def _restated_as_shared_memory_is(new: NewMemory, candidate: MemoryRecord) -> bool:
    """Shared memory is restated to the letter only (its name and every field it holds: what a backer
    says is what the version says), never in other words, however close: a statement in other words
    backs nothing (docs/security.md, the proposal rule) and leaves no words of its own behind it."""
    if "org" not in (new.visibility, candidate.visibility):
        return True
    held, said = candidate.payload, new.payload
    return (
        new.kind.reads_as(held, said)
        and new.kind.same_name(held, said)
        and new.kind.states_exactly(held, said)
    )


def _ambiguous(found: Candidates, thresholds: Thresholds) -> list[tuple[float, MemoryRecord]]:
    """The matches by meaning too close to call unrelated, best first."""
    return [(s, c) for s, c in found.by_meaning if s >= thresholds.ambiguous_from]


def _open_to_restatement(
    new: NewMemory, matches: list[tuple[float, MemoryRecord]]
) -> list[tuple[float, MemoryRecord]]:
    """The matches `new` could restate: shared memory only to the letter, whoever decides (the rules
    or a judging model, which is never shown a shared memory it could not restate)."""
    return [(s, c) for s, c in matches if _restated_as_shared_memory_is(new, c)]


def _add(reason: str, by: By = "rule", score: float | None = None) -> NewLineage:
    return NewLineage(reason=reason, by=by, score=score)


def _reinforce(
    new: NewMemory,
    target: MemoryRecord,
    reason: str,
    by: By = "rule",
    score: float | None = None,
    *,
    own: bool = False,
) -> Reinforce:
    # one user's restatement of a shared memory counts as evidence and adds nothing to it: what it would
    # add goes through the proposal rule (_by_key), or nowhere (a memory of another key, found by meaning);
    # `own`: the speaker is the only user behind it, whose additions the rule would accept at once anyway
    merged = None if new.proposes_only and not own else new.kind.merged(target.payload, new.payload)
    # a full list takes no more (MemoryKind.capped): the answer says what was not kept
    left = new.kind.left_out(merged if merged is not None else target.payload, new.payload)
    note = f"; not merged, the memory holds as many as one statement may: {', '.join(left)}" if left else ""
    return Reinforce(reason=reason + note, by=by, score=score, target=target, merged=merged, left_out=note)


def additions(new: NewMemory, current: MemoryRecord) -> dict[str, Any] | None:
    """The version one user's restatement of an org memory would make of it (a new alias, tag, trigger,
    an empty description or domain filled), or None when it adds nothing: such a change is a proposal."""
    if not new.proposes_only:
        return None
    grown = new.kind.merged(current.payload, new.payload)
    if grown is None or new.kind.stated(grown) == new.kind.stated(current.payload):
        return None
    return grown


def restates_by_key(new: NewMemory, target: MemoryRecord) -> bool:
    """Whether `new` restates `target` for reconciliation by key: every field it gives to the letter
    (`MemoryKind.states_exactly`; for shared memory a tenant-wide writer's labels and grants whole). A
    restatement in other words is not counted as one: in private memory it is the next version, of
    shared memory from a one-user caller a proposal, from the tenant a new version. No table of value
    words (times, units, dates, orders, negations in every language) can be complete; the letter is
    (docs/adr/0080, docs/security.md "The proposal rule")."""
    if "org" in (new.visibility, target.visibility):
        if new.authoritative and any(target.payload.get(f) for f in new.cleared):
            return False  # the tenant clears a field the memory holds: a new version without it
        return new.kind.states_exactly(target.payload, new.payload, whole_lists=new.authoritative)
    if any(target.payload.get(f) for f in new.cleared):
        return False  # the user revokes their memory's tool grants: a new version without them
    return new.kind.states_exactly(target.payload, new.payload, whole_lists=False)


def _by_key(new: NewMemory, found: Candidates, now: datetime) -> Verdict:
    target, *others = found.by_key
    if restates_by_key(new, target):
        grown = additions(new, target)
        if grown is None:
            return _reinforce(new, target, "same key and the same value")
        behind = contributors(target)
        if behind and behind <= {new.evidence.user_id}:
            # only the speaker stands behind it: their additions merge as their own restatement's would
            return _reinforce(new, target, "same key and the same value, added to by its only user", own=True)
        return _propose(new, target, found.lineage, grown, now=now)
    versions = [r.version for r in found.lineage]
    if target.observed_at is not None and new.observed(now) < min(target.observed_at, now):
        # an older statement arriving late (history imported, snapshots extracted out of order)
        behind = contributors(target)
        if new.proposes_only and not (behind and behind <= {new.evidence.user_id}):
            # another user's history would be listed to every user in the org lineage: a proposal instead,
            # which this older statement cannot carry (later statements of it can)
            updated = _next(new, target)
            return _propose(new, target, found.lineage, updated, promote=False, now=now)
        when = new.observed(now).date().isoformat()
        reason = (
            f"same key, another value, but stated earlier ({when}) than the current one "
            f"({target.observed_at.date().isoformat()}): kept as history"
        )
        return PastVersion(reason=reason, target=target, version=max(versions) + 1)
    if new.proposes_only:
        return _propose(new, target, found.lineage, _next(new, target), now=now)
    # the next version number (a value kept as history may hold target.version + 1 already)
    return NewVersion(
        reason="same key, another value",
        target=target,
        version=max([target.version, *versions]) + 1,
        payload=_updated(new, target),
        # a second active value of the key (written with reconcile off, or by an older release that
        # spelled the subject another way) is a conflict: the new version supersedes it too
        also_supersedes=tuple(others),
    )


def _updated(new: NewMemory, target: MemoryRecord) -> dict[str, Any]:
    """The payload of the next version: what the kind makes of the two, and a tenant-wide writer's
    labels and grants of shared memory as that writer gave them (it may remove an alias or a tool grant,
    which the kind's merge would keep, and clear a field by sending it empty)."""
    payload = _next(new, target)
    if new.authoritative and "org" in (new.visibility, target.visibility):
        given = {f: new.payload[f] for f in new.kind.unordered if new.payload.get(f)}
        payload = {k: v for k, v in {**payload, **given}.items() if k not in new.cleared}
    return payload


def _next(new: NewMemory, target: MemoryRecord) -> dict[str, Any]:
    """What `new` makes of `target` as its next version: a statement that only adds fields (a note, a
    qualifier, a description) adds them to what the memory holds; another value is the kind's update."""
    if new.kind.adds_only(target.payload, new.payload):
        return new.kind.with_additions(target.payload, new.payload)
    payload = new.kind.updated(target.payload, new.payload)
    if new.proposes_only:
        # one user's other steps carry no tool grant: the tenant's grant was given to what the memory
        # said, and stays only on a statement that only adds to it (above); the tenant grants again
        # (docs/security.md "Tool grants are the tenant's"; issue 33's twentieth probe)
        payload = new.kind.without_grants(payload)
    return payload


def _propose(
    new: NewMemory,
    current: MemoryRecord,
    lineage: list[MemoryRecord],
    proposed: dict[str, Any],
    *,
    promote: bool = True,
    now: datetime,
) -> Propose | BackProposal | Promote:
    """A user's statement that would change an org memory (another value, or additions to it): a
    proposal of `proposed`, the version it would make, which becomes the new version once the users
    behind it include every user behind the current version (a correction of one's own statement) or
    outnumber them; until then the current version stays what everyone reads.

    A statement backs a pending proposal only when the version it would make is the proposal to the
    letter (`MemoryKind.stated`: every field, every character of every script); the proposal is never
    merged into, so what becomes active is exactly what each of its backers stated. `promote=False`: a
    statement older than the current version, which may start or back a proposal but not carry it."""
    held = _pending(new, lineage, proposed, now)
    backers = contributors(current)
    proposers = (contributors(held, now) if held is not None else set()) | _speaker(new)
    what = "adds to" if new.kind.same_content(current.payload, proposed) else "conflicts with"
    needed = len(backers) + 1 - len(proposers)
    kept = (
        f"{what} the org memory {current.memory_id} stated by {len(backers)} user(s): kept as a "
        f"proposal backed by {len(proposers)}; it replaces the current version when every user behind "
        f"that restates it or {needed} more user(s) state it"
    )
    proposal: Propose | BackProposal
    if held is not None:
        note = "another statement of a pending proposal"
        proposal = BackProposal(reason=kept, target=current, note=note, proposal=held)
    else:
        note = f"{what} org memory {current.memory_id}: proposed as its next version"
        version = max(r.version for r in lineage) + 1
        proposal = Propose(reason=kept, target=current, note=note, version=version, proposed=proposed)
    if not promote or not (backers <= proposers or len(proposers) > len(backers)):
        return proposal
    reason = (
        f"same key, another value, stated by {len(proposers)} user(s) against {len(backers)} "
        "behind the current version"
    )
    # the current version's aliases stay (a no-op for a proposal made against this version)
    payload = new.kind.updated(current.payload, held.payload if held is not None else proposed)
    return Promote(reason=reason, proposal=proposal, payload=payload)


def _pending(
    new: NewMemory, lineage: list[MemoryRecord], proposed: dict[str, Any], now: datetime
) -> MemoryRecord | None:
    """The newest pending proposal of the lineage that is `proposed` to the letter, if any. An expired one
    backs nothing, nor one whose every statement's own expiry passed (issue 33's twenty-sixth probe: a
    proposal six seconds past its proposer's expiry still carried another user's statement to the org
    memory)."""
    wanted = new.kind.stated(proposed)
    pending = [
        r
        for r in lineage
        if r.status == "proposed"
        and r.live(now)
        and contributors(r, now)
        and new.kind.stated(r.payload) == wanted
    ]
    return max(pending, key=lambda r: r.version) if pending else None


def _speaker(new: NewMemory) -> set[str]:
    return {new.evidence.user_id} if new.evidence.user_id else set()


def _retract(new: NewMemory, by_key: list[MemoryRecord], now: datetime) -> Verdict:
    """End the active memories of the key that hold the retracted value ("I'm not allergic to peanuts,
    that was wrong"); nothing is written when none does, or when the retraction predates them."""
    said = new.kind.value(new.payload)
    if new.visibility == "org" and not new.authoritative:
        # one user cannot end what every user of the tenant reads (docs/security.md, trust model)
        reason = f"retracts {said!r} in shared memory: only a tenant-wide writer can"
        return Unchanged(reason=reason)
    # what is retracted is what a memory says to the letter (docs/adr/0080): "not Andrea" ends no "Andreas"
    retracted = {k: v for k, v in new.payload.items() if k != "retracted"}
    held = [r for r in by_key if new.kind.states_exactly(r.payload, retracted)]
    if not held:
        current = f" (it holds {new.kind.value(by_key[0].payload)!r})" if by_key else ""
        return Unchanged(reason=f"retracts {said!r}, which no active memory states{current}")
    for n, target in enumerate(held):
        if target.observed_at is not None and new.observed(now) < target.observed_at:
            # the versions before it are ended all the same (the order the store returned them in)
            reason = f"retracts {said!r}, but it was stated again after the retraction: kept"
            return StatedAgain(reason=reason, kept=target, ends=tuple(held[:n]))
    reason = f"the user said {said!r} is not, or no longer, true: ended"
    first, *more = held
    return Retract(reason=reason, ends=(first, *more))


def _by_meaning(new: NewMemory, found: Candidates, thresholds: Thresholds) -> Verdict:
    if not found.by_meaning:
        return _add("no memory with this key or meaning")
    best_score = found.by_meaning[0][0]
    if (restated := _restatement(new, found, thresholds)) is not None:
        reason = f"restates a memory in other words (cosine {best_score:.2f})"
        return _reinforce(new, restated[1], reason, score=best_score)
    ambiguous = _ambiguous(found, thresholds)
    if not ambiguous:
        return _add("no memory with this key or meaning", score=best_score)
    open_to_it = _open_to_restatement(new, ambiguous)
    if found.judgement is None:
        for score, candidate in open_to_it:
            if (
                new.kind.about_same(candidate.payload, new.payload)
                and new.kind.same_aspect(candidate.payload, new.payload)
                and new.kind.restates(candidate.payload, new.payload)
            ):
                reason = f"restates a memory in other words (cosine {score:.2f}, same anchors)"
                return _reinforce(new, candidate, reason, score=score)
        return _add("close in meaning, but says something else", score=best_score)
    answer = found.judgement
    shown = open_to_it[:JUDGED]
    scored = {c.memory_id: (s, c) for s, c in shown}
    if answer.decision == "ADD" or answer.target_id not in scored:
        return _add(f"LLM: {answer.reason}", "llm", best_score)
    score, target = scored[answer.target_id]
    if answer.decision == "UPDATE":
        # An update supersedes only a memory of the same key (those were decided above by rule): an
        # UPDATE of another key would supersede an unrelated memory, so it is refused.
        reason = f"LLM proposed to update {target.memory_id} (key {target.key!r}, not {new.key!r}): refused"
        return _add(reason, "llm", score)
    if not new.kind.about_same(target.payload, new.payload):
        reason = f"LLM proposed to reinforce {target.memory_id}, a memory about another subject: refused"
        return _add(reason, "llm", score)
    if hard_anchors(new.kind.value(target.payload)) != hard_anchors(new.kind.value(new.payload)):
        # another number, time, date or a negation is a correction, whatever the model says: keeping
        # only the old memory would drop it
        reason = f"LLM proposed to reinforce {target.memory_id}, but the numbers or negations differ: refused"
        return _add(reason, "llm", score)
    return _reinforce(new, target, f"LLM: {answer.reason}", "llm", score)
