"""Whether an extracted item of an org kind (every user of the tenant reads it) is the organisation's.

An org kind (taxonomic and procedural by default) publishes what one user's conversation held to every
user of the tenant. Only a term or a procedure of the organisation belongs there, never a user's own
phrase ("Family time: a lot to me"), their feelings or their life. `org_verdict` reads one item:

- `not_a_term`: refused. The "definition" is an opinion or a feeling, not what the term is ("a great
  choice", "a lot to me", "a fantastic way to ..."), or a procedure's name is a fragment of a sentence
  ("Congratulations on your upcoming performance! I'd"): nothing to remember as a term or procedure.
- `personal`: kept in the user's private scope. The item speaks in the first person singular ("my",
  "I", "me"), or a definition addresses the user ("your living room"): the user's own life.
- `not_term_like`: kept private. A term with no sign of being a domain term: no acronym, no capital
  inside the term or where the conversation uses it, no code-like spelling, no quotes, and no "stands
  for" / "means" / "is defined as" / "refers to" / "short for" / "also known as" after it in the cited
  turns. Lower-case everyday words ("wet zone", "tea syrup") stay with the user who said them.

Pure: the item and the turns in, a reason out (docs/trust.md "Org memory from extraction";
tests/unit/test_org_screen.py holds the table).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from mongomem.extraction.proposal import TurnView
from mongomem.kinds.base import first_person, texts_of

_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|you're|you've|you'll)\b", re.IGNORECASE)
# What a feeling or an opinion says where a definition should be: "means a lot to me", "a great choice".
FEELING = re.compile(
    r"^(?:(?:so|very|really)\s+)?(?:a\s+lot|a\s+ton|a\s+great\s+deal|so\s+much|everything|nothing|"
    r"the\s+world|much|more\s+than\s+anything)\b(?:\s+to\s+\w+)?",
    re.IGNORECASE,
)
EVALUATIVE = frozenset(
    """great fantastic perfect wonderful excellent amazing awesome lovely nice good fun cool brilliant
    terrific superb fabulous beautiful thoughtful smart clever classic popular crucial essential vital
    must-have treasure favourite favorite best better ideal superb solid decent helpful useful
    valuable worthwhile powerful special sweet cute charming delightful exciting""".split()
)
_EVALUATION = re.compile(
    r"^(?:an?|the|such\s+an?|quite\s+an?|really\s+an?)\s+(?:\w+\s+)?(?P<word>[\w-]+)", re.IGNORECASE
)
# "X stands for / means / is defined as ...": the conversation defines the term.
CUE = r"(?:stands\s+for|means|is\s+defined\s+as|refers\s+to|is\s+short\s+for|short\s+for|also\s+known\s+as|aka|a\.k\.a\.|is\s+called|we\s+call)"
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9&]{1,7}s?\b")
_CODE = re.compile(r"[_/#.+]\w|\w[A-Z][a-z]|\d|`")
# a procedure's name that is the head of a sentence, not a task: an exclamation, a greeting, a reply
_FRAGMENT_END = re.compile(
    r"\b(?:a|an|the|and|or|for|of|to|with|via|in|on|at|by|from|is|are|was|that|which|what|if|when|how|why|"
    r"because|like|same|one|different|side|\d+|"
    r"i'd|i'll|it's|that's)$",
    re.IGNORECASE,
)
# a sentence where a name should be: an opinion, a verb of being, a pronoun whose referent is elsewhere
_SENTENCE = re.compile(
    r"\b(?:is|are|was|were|can\s+be|could\s+be|will\s+be|requires?|sounds|it|them|this|these|those)\b",
    re.IGNORECASE,
)
# a name that says nothing of the task ("Do the task", "Get started")
_GENERIC = frozenset(
    "do the a task get started start begin identify issue choose right one ones thing things".split()
)
_POSSESSIVE_YOU = re.compile(r"\b(?:your|yours|yourself)\b", re.IGNORECASE)
# one's own credential with its value, in a step said to the user: "your PIN 7781", "your password is
# Bluebird7" (a value holding a digit)
_YOUR_SECRET = re.compile(
    r"\byour\s+(?:[\w-]+\s+){0,2}?(?:password|passcode|passphrase|pin|code|number|key|token|secret)"
    r"(?:\s+is\s+|\s*[=:]\s*|\s+)[\"'`]?[\w-]*\d",
    re.IGNORECASE,
)
# a sentence about something else where a definition should be: "The Tagger user should be able to ..."
_STATEMENT = re.compile(
    r"^(?:The|An?|This|These|It)\b(?:\s+(?!(?i:that|which|who|where)\b)[\w'-]+){0,6}?\s+"
    r"(?i:can|could|should|will|would|must|may|has|have)\b"
)
_TERM_START = re.compile(
    r"^(?:for|to|with|in|on|at|by|from|if|when|while|because|so|and|but|or)\s", re.IGNORECASE
)
_REPLY_START = re.compile(
    r"^(?:congratulations|certainly|sure|yes|no|ok|okay|great|thanks|thank\s+you|what\s+a|that's|that\s+is|"
    r"it\s+sounds|it's|i'm|i'd|i\s+am|i\s+would|here\s+are|here's|wow|excellent|absolutely|of\s+course|"
    r"both|let's|don't|as\s+an\s+ai|an?(?=\s)|as(?=\s))\b",
    re.IGNORECASE,
)


def feeling_or_opinion(definition: str) -> bool:
    """Whether a definition is a feeling ("a lot to me") or an opinion ("a great choice") rather than
    what the term is."""
    text = definition.strip()
    if FEELING.match(text):
        return True
    m = _EVALUATION.match(text)
    if m is None:
        return False
    words = text.split()
    # "a great choice", "a fantastic way to ...": the evaluative word is the first or second after the article
    return any(w.lower().strip(",.;:!") in EVALUATIVE for w in words[1:3])


def _cited(item: dict[str, Any], turns: Sequence[TurnView]) -> list[TurnView]:
    seqs = {s for s in item.get("evidence_seqs") or [] if isinstance(s, int)}
    return [t for t in turns if t.seq in seqs] or list(turns)


def term_like(term: str, turns: Sequence[TurnView]) -> bool:
    """Whether a term shows a sign of being a domain term (an acronym, a capital inside it or where the
    conversation uses it, a code-like spelling, quotes, or a defining phrase after it in `turns`)."""
    term = term.strip()
    if not term:
        return False
    if _ACRONYM.search(term) or _CODE.search(term):
        return True
    words = term.split()
    if any(w[:1].isupper() for w in words[1:]):
        return True  # "Marley Flooring", "Certified Fresh"
    escaped = re.escape(term)
    for turn in turns:
        text = turn.content
        if re.search(rf"[\"'`\u201c\u2018]{escaped}[\"'`\u201d\u2019]", text, re.IGNORECASE):
            return True  # quoted
        if re.search(rf"\b{escaped}\s*,?\s+{CUE}\b", text, re.IGNORECASE):
            return True
        if words[0][:1].isupper() and _mid_sentence(term, text):
            return True  # capitalised where no sentence starts: a name ("we moved to Kubernetes")
    return False


def _mid_sentence(term: str, text: str) -> bool:
    """Whether `term`, as spelt, occurs in `text` where no sentence, line or quote starts."""
    for m in re.finditer(rf"(?<![\w-]){re.escape(term)}(?![\w-])", text):
        before = text[: m.start()].rstrip()
        if before and before[-1] not in ".!?:;\n\"'(\u201c-*\u2022>":
            return True
    return False


def org_verdict(item: Any, turns: Sequence[TurnView]) -> str | None:
    """None when an org kind's item may reach every user of the tenant; else why not: `not_a_term`
    (refuse), `personal` or `not_term_like` (keep private)."""
    if not isinstance(item, dict):
        return None  # malformed: the commit refuses and counts it
    term, definition = item.get("term"), item.get("definition")
    name = item.get("name")
    if isinstance(term, str) and isinstance(definition, str):
        if feeling_or_opinion(definition) or _STATEMENT.match(definition.strip()) or _TERM_START.match(term):
            return "not_a_term"
        head = " ".join([term, definition, *[a for a in item.get("aliases") or [] if isinstance(a, str)]])
        if first_person(head) or _SECOND_PERSON.search(definition):
            return "personal"
        if not term_like(term, _cited(item, turns)):
            return "not_term_like"
        return None
    if isinstance(name, str):
        plain = name.strip()
        if (
            "!" in plain
            or "?" in plain
            or ". " in plain
            or len(plain.split()) < 2
            or _REPLY_START.match(plain)
            or _FRAGMENT_END.search(plain)
            or _SENTENCE.search(plain)
            or any(w.lower().strip(",.;:") in EVALUATIVE for w in plain.split())
            or all(w.lower() in _GENERIC for w in plain.split())
        ):
            return "not_a_term"  # a reply's first words or an opinion, not the name of a task
        about = " ".join(str(item.get(field) or "") for field in ("name", "description", "when_to_use"))
        if first_person(about) or _POSSESSIVE_YOU.search(about) or _SECOND_PERSON.search(plain):
            return "personal"  # "my morning routine", "clean the sensor on your Canon EOS 80D"
        # every text of it, its steps and their expected outputs too: "log in with my password Bluebird"
        # or "enter your PIN 7781" in a step is the user's own; "submit to your manager" is how anyone
        # does it (issue 33's twenty-seventh probe)
        steps = " ".join(texts_of(item))
        if first_person(steps) or _YOUR_SECRET.search(steps):
            return "personal"
        return None
    # another org kind: only the first person marks it the user's own
    if first_person(" ".join(texts_of(item))):
        return "personal"
    return None
