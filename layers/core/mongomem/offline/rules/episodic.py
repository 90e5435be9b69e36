"""Episodic rules: events the user tells in the past tense with a first-person subject ("Last
Saturday I went hiking in Sintra with Maria"), one event per sentence."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from mongomem.dates import find_dates, replace_dates
from mongomem.extraction.proposal import TurnView
from mongomem.kinds.meaning import norm
from mongomem.offline.rules import speaker
from mongomem.offline.rules.phrases import is_name_word, take_name, take_proper
from mongomem.offline.rules.text import capitalise, clip, hedged, squash, statements
from mongomem.offline.rules.third_person import third_person, who
from mongomem.offline.rules.words import EVENT_VERBS, MONTH_WORDS, NOT_NAMES, RELATION_ALT, RELATIONS

# Objects that turn a verb into an idiom rather than an event ("went ahead", "had no idea").
_IDIOM = re.compile(
    r"^\s*(?i:ahead|through|over|wrong|no\b|a\s+question|a\s+look|a\s+feeling|an\s+idea|a\s+chance|"
    r"the\s+impression|the\s+feeling|it\b|that\b|this\b|what\b|how\b|been\b|used\b|confused|lost\b|"
    r"you\b|your\b|back\s+to\s+you|the\s+(?:idea|point|message|memo|hint))"
)
_EVENT = re.compile(
    r"(?:^|(?<=[\s,;:(\"]))(?P<subj>I|i|[Ww]e|(?:[Mm]y\s+(?P<rel>"
    + RELATION_ALT
    + r")|(?P<pname>[A-Z][\w'\-]+))\s+and\s+I)\s+(?:(?:just|finally|also|actually|then|even|recently|eventually|"
    r"both|all|really|once|first|already|spontaneously)\s+)*(?P<verb>"
    + "|".join(sorted(EVENT_VERBS, key=len, reverse=True))
    + r")\b(?P<rest>[^.!?;\n]*)"
)
_TITLE_BOUNDARY = re.compile(
    r"\s+(?:with|because|but|so|and\s+then|and\s+(?:I|we|it|she|he|they)|which|where|who|after|before|while|when|"
    r"since|until|for\s+(?:the\s+first|a\s+while)|-)\b|[,(]"
)
_FILLER = re.compile(
    r"^(?:(?i:oh|ah|also|and|well|so|then|anyway|btw|plus|great|ok|okay|yes|yeah)\b[,!.]?\s*)+"
)
_CLAUSE_END = re.compile(r",\s*(?:and|but|so|then)\b|\s+(?:and|but|so)\s+(?:I|we|then)\b|;")
_PLACE_CUE = re.compile(r"\b(?:in|at|to|near|around)\s+(?P<rest>(?:the\s+)?[A-Z][^.!?;\n]*)")
_WITH = re.compile(r"\bwith\s+(?P<rest>[^.!?;\n]*)")
_WITH_RELATION = re.compile(rf"(?i:my)\s+(?P<rel>(?i:{RELATION_ALT}))\b(?:\s*,?\s+(?P<n>[A-Z][\w'\-]+))?")


def _relation_of(subject: str, word: str) -> str:
    return f"{subject}'s {RELATIONS[word.lower()][0]}"


def _participants(m: re.Match[str], clause: str, subject: str, place: str | None) -> list[str]:
    """The subject, "X and I", the people after "with", and whom the user met, saw or visited."""
    people = [subject]

    def add(name: str | None) -> None:
        if name and name not in people and (place is None or name not in place):
            people.append(name)

    if m.group("rel"):
        add(_relation_of(subject, m.group("rel")))
    if m.group("pname") and is_name_word(m.group("pname")):
        add(m.group("pname"))
    for w in _WITH.finditer(clause):
        for part in re.split(r",\s*|\s+and\s+", w.group("rest"))[:6]:
            rel = _WITH_RELATION.match(part.strip())
            if rel:
                n = rel.group("n")
                add(n if n and is_name_word(n) else _relation_of(subject, rel.group("rel")))
            else:
                add(take_name(part.strip(), max_words=2))
    if m.group("verb") in {"met", "saw", "visited"} and place is None:
        add(take_name(m.group("rest"), max_words=2))
    return people[:50]


def _event(m: re.Match[str], sentence: str, turn: TurnView, subject: str) -> dict[str, Any] | None:
    verb, rest = m.group("verb"), m.group("rest")
    clear = EVENT_VERBS[verb]
    if _IDIOM.match(rest) or (not clear and re.match(r"^\s*(?:to\b|[a-z]+ed\b)", rest)):
        return None
    ref = turn.timestamp.date()
    # the event's own clause: "I met Sarah 3 days ago, and in 2022 I moved ..." ends at ", and"
    clause = _CLAUSE_END.split(rest, maxsplit=1)[0]
    clause_end = m.start("rest") + len(clause)
    dates = find_dates(sentence, ref, past=True)
    own = [d for d in dates if d.start < clause_end]
    dates = own or dates
    just = re.search(r"\b(?i:just)\s+" + verb, sentence)
    if not clear and not dates and not just:
        return None
    # title: the verb and its object, without time phrases, cut at the first clause boundary
    obj = rest
    for d in sorted(find_dates(rest, ref, past=True), key=lambda d: -d.start):
        obj = obj[: d.start] + obj[d.end :]
    obj = squash(_TITLE_BOUNDARY.split(obj, maxsplit=1)[0]).strip(" ,;:-")
    words = [w for w in obj.split() if w.lower() not in {"my", "our"}][:7]
    title = clip(" ".join([verb.capitalize(), *words]).strip(), 120)
    place = take_proper(clause) if verb in {"visited", "explored", "toured"} else None
    if place is None:
        cue = _PLACE_CUE.search(clause)
        place = take_proper(cue.group("rest")) if cue else None
    if place and (place.lower() in NOT_NAMES or place.lower() in MONTH_WORDS):
        place = None
    occurred = dates[0].iso if dates else (ref.isoformat() if just else None)
    resolved = _FILLER.sub("", replace_dates(sentence, dates)) or sentence
    third = third_person(resolved, subject) if m.group("subj") not in {"we", "We"} else None
    summary = capitalise(third) if third is not None else f'{who(subject)} said: "{capitalise(resolved)}"'
    return {
        "title": title,
        "summary": clip(summary, 2000),
        "participants": _participants(m, sentence[:clause_end], subject, place),
        "occurred_at": occurred,
        "place": place,
        "evidence_seqs": [turn.seq],
    }


def propose(turns: Sequence[TurnView]) -> list[dict[str, Any]]:
    """One event per user sentence that tells one; a retold event merges its evidence."""
    subject = speaker.subject(turns)
    events: dict[tuple[str, str], dict[str, Any]] = {}
    for turn in speaker.user_turns(turns):
        for sentence in statements(turn.content):
            m = next((e for e in _EVENT.finditer(sentence) if not hedged(sentence[: e.start()])), None)
            event = _event(m, sentence, turn, subject) if m is not None else None
            if event is None:
                continue
            key = (norm(event["title"]), event["occurred_at"] or "")
            if key not in events:
                events[key] = event
            elif turn.seq not in events[key]["evidence_seqs"]:
                events[key]["evidence_seqs"].append(turn.seq)
    return list(events.values())
