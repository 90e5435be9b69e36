"""Taxonomic rules: domain terms defined in user and assistant turns ("SLA stands for ...",
"churn means ...", "Kubernetes, also known as K8s, is ..."), with their aliases and acronyms."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mongomem.extraction.orgscreen import feeling_or_opinion
from mongomem.extraction.proposal import TurnView
from mongomem.kinds.meaning import norm
from mongomem.offline.rules.phrases import acronym_of, is_acronym
from mongomem.offline.rules.text import clip, statements, strip_punct
from mongomem.offline.rules.words import NOT_TERMS

_LEADIN = r"(?:(?i:here|in\s+\w+(?:\s+\w+)?|for\s+us|at\s+\w+|basically|so|ok|okay|fyi|note)\s*,\s*)?"
_TERM = (
    r"(?:\"(?P<q1>[^\"]{1,60})\"|'(?P<q2>[^']{1,60})'|`(?P<q3>[^`]{1,60})`|"
    r"(?P<w>[A-Za-z][\w\-/&.+#]*(?:\s+[\w\-/&.+#]+){0,3}?))"
)
_DEF = r"(?P<def>[^\n]{2,})"
_IS = r"(?i:is|are|refers\s+to|means)"
_DEF_STARTERS = re.compile(
    r"^(?i:a|an|the|that|any|something|someone|somebody|when|whenever|where|to|one|each|every|our|"
    r"a\s+kind|a\s+type|using|having|being|doing)\b"
)
# "terms" announces a glossary ("our terms:"), not in "in terms of" or "terms and conditions"
_GLOSSARY_CUE = re.compile(
    r"\b(?i:glossary|terminology|definitions?|jargon|acronyms?|abbreviations?|"
    r"(?<!in\s)terms(?!\s+(?:and|&)\s+conditions|\s+of\b))\b"
)


@dataclass
class _Term:
    term: str
    definition: str
    aliases: list[str] = field(default_factory=list)
    abbreviation: bool = False  # the definition is only "Short for ...": a fuller one replaces it


def _term_text(m: re.Match[str]) -> tuple[str, bool]:
    """(term, whether it was quoted)."""
    groups = m.groupdict()
    if groups.get("g") is not None:  # a glossary line: "TERM: definition"
        return strip_punct(groups["g"]), False
    quoted = groups.get("q1") or groups.get("q2") or groups.get("q3")
    if quoted:
        return quoted.strip(), True
    return re.sub(r"^(?i:an?|the)\s+", "", m.group("w").strip()), False


def _good_term(term: str) -> bool:
    words = term.split()
    if not words or len(words) > 4 or len(term) > 60:
        return False
    if words[0].lower() in NOT_TERMS or any(w.lower() in {"i", "we", "you", "my", "me"} for w in words):
        return False
    return bool(re.match(r"[A-Za-z0-9]", term))


def _definition(text: str) -> str:
    return strip_punct(re.sub(r"^(?i:that)\s+", "", text.strip()))


Builder = Callable[[re.Match[str], str, bool, str], _Term | None]  # (match, term, quoted, definition)


def _means(m: re.Match[str], term: str, quoted: bool, definition: str) -> _Term | None:
    strong = quoted or is_acronym(term) or acronym_of(definition)[: len(term)] == term.upper()
    if not strong and not _DEF_STARTERS.match(m.group("def").strip()):
        return None  # "Running late means I'll miss the bus" is not a definition
    return _Term(term, definition)


def _stands_for(m: re.Match[str], term: str, quoted: bool, definition: str) -> _Term | None:
    expansion = re.split(r"\s*[,(;]|\s+-\s", definition, maxsplit=1)[0].strip()
    extra = definition[len(expansion) :].strip(" ,;-()")
    aliases = [expansion] if len(expansion.split()) <= 8 else []
    return _Term(term, f"Short for {expansion}" + (f": {extra}" if extra else ""), aliases, not extra)


def _also_known_as(m: re.Match[str], term: str, quoted: bool, definition: str) -> _Term | None:
    """ "X (also called Z) is Y", "X (ABC) is Y", "X, also known as Z, is Y"."""
    alias = strip_punct(m.group("alias"))
    if m.groupdict().get("comma"):  # what follows the alias is the definition only after "is"
        verb = re.match(rf"{_IS}\s+(?P<d>.+)", m.group("def").strip())
        definition = (_definition(verb.group("d")) if verb else "") or f"Also known as {alias}"
    return _Term(term, definition, [alias]) if alias else None


def _plain(m: re.Match[str], term: str, quoted: bool, definition: str) -> _Term | None:
    if len(term.split()) > 3:
        return None
    if "bullet" in m.groupdict() and not m.group("bullet") and not is_acronym(term):
        return None  # "Got it: thanks" in a glossary turn is not an entry
    return _Term(term, definition)


# (pattern, builder): matched against whole sentences, the first that builds a term wins.
_RULES: list[tuple[str, Builder]] = [
    (
        rf"^{_LEADIN}{_TERM}\s+(?i:stands\s+for|is\s+short\s+for|is\s+an?\s+(?:abbreviation|acronym)\s+(?:for|of))"
        rf"\s+{_DEF}",
        _stands_for,
    ),
    (
        rf"^{_LEADIN}{_TERM}\s*\((?i:also\s+called|also\s+known\s+as|aka|a\.k\.a\.|or|i\.e\.)\s+(?P<alias>[^)]{{1,60}})\)"
        rf"\s*,?\s+{_IS}\s+{_DEF}",
        _also_known_as,
    ),
    (rf"^{_LEADIN}{_TERM}\s*\((?P<alias>[A-Z][A-Za-z0-9&]{{1,9}})\)\s*,?\s+{_IS}\s+{_DEF}", _also_known_as),
    (
        rf"^{_LEADIN}{_TERM}(?P<comma>,)\s+(?i:also\s+known\s+as|aka|a\.k\.a\.|also\s+called|otherwise\s+known\s+as)"
        rf"\s+(?P<alias>[^,]{{1,60}}),\s*{_DEF}",
        _also_known_as,
    ),
    (rf"^{_LEADIN}{_TERM}\s+(?i:means|refers\s+to|is\s+defined\s+as|is\s+jargon\s+for)\s+{_DEF}", _means),
    (rf"\b(?i:by|when\s+I\s+say)\s+{_TERM}\s*,?\s+(?i:I|we)\s+(?i:mean)\s+{_DEF}", _means),
    (rf"^(?:An?|an?)\s+{_TERM}\s+(?i:is)\s+(?P<def>(?i:a|an|the|when|where|any|what)\s[^\n]+)", _plain),
]
RULES = [(re.compile(pattern), build) for pattern, build in _RULES]
# "TERM: definition" lines count only in a turn that announces a glossary
GLOSSARY_LINE = (
    re.compile(
        r"^(?P<bullet>[-*\u2022]\s+)?(?P<g>[A-Za-z][\w\-/&.+# ]{0,40}?)\s*(?::|\s-\s)\s*(?P<def>[^\n]{3,})"
    ),
    _plain,
)


def _aliases(found: _Term, turn_text: str) -> list[str]:
    """The stated aliases, plus acronym expansions both ways where the letters line up."""
    out = list(found.aliases)
    term = found.term
    if is_acronym(term) and not out:
        words = found.definition.split()
        n = len(term.rstrip("s"))
        for width in range(n, min(len(words), n + 3) + 1):
            lead = " ".join(words[:width])
            if acronym_of(lead) == term.rstrip("s").upper():
                out.append(strip_punct(lead))
                break
    elif len(term.split()) >= 2:
        acronym = acronym_of(term)
        if len(acronym) >= 2 and re.search(rf"\b{re.escape(acronym)}s?\b", turn_text):
            out.append(acronym)
    return [a for a in dict.fromkeys(out) if a and norm(a) != norm(term)]


def _definitions(text: str) -> list[_Term]:
    """At most one definition per sentence of a turn."""
    rules = [*RULES, GLOSSARY_LINE] if _GLOSSARY_CUE.search(text) else RULES
    out: list[_Term] = []
    for sentence in statements(text):
        for pattern, build in rules:
            m = pattern.search(sentence)
            if m is None:
                continue
            (term, quoted), definition = _term_text(m), _definition(m.group("def"))
            if feeling_or_opinion(definition):
                continue  # "Family time means a lot to me", "a humidifier is a great idea": not definitions
            found = build(m, term, quoted, definition) if _good_term(term) and definition else None
            if found is not None:
                out.append(found)
                break
    return out


def propose(turns: Sequence[TurnView]) -> list[dict[str, Any]]:
    """One item per term; a term reached again by name or alias merges aliases and evidence, and
    a fuller definition replaces a bare "Short for ..."."""
    items: list[dict[str, Any]] = []
    abbreviated: list[bool] = []
    index: dict[str, int] = {}  # normalised term or alias -> position in items
    for turn in turns:
        if turn.role not in {"user", "assistant"}:
            continue
        for found in _definitions(turn.content):
            found.definition = clip(found.definition, 1000)
            aliases = _aliases(found, turn.content)
            at = next((index[k] for k in map(norm, [found.term, *aliases]) if k in index), None)
            if at is None:
                at = len(items)
                items.append(
                    {"term": found.term, "definition": found.definition, "aliases": [], "evidence_seqs": []}
                )
                abbreviated.append(found.abbreviation)
            elif not found.abbreviation or abbreviated[at]:
                items[at]["definition"], abbreviated[at] = found.definition, found.abbreviation
            item = items[at]
            for alias in [found.term, *aliases]:
                if norm(alias) != norm(item["term"]) and alias not in item["aliases"]:
                    item["aliases"].append(clip(alias, 120))
            if turn.seq not in item["evidence_seqs"]:
                item["evidence_seqs"].append(turn.seq)
            for k in [norm(item["term"]), *map(norm, item["aliases"])]:
                index.setdefault(k, at)
    return items
