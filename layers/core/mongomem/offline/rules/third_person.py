"""Rewriting a user's first-person sentence about themselves in the third person, so a stored
note or event summary reads on its own ("I just finished my thesis" -> "Ana just finished their thesis")."""

from __future__ import annotations

import re

from mongomem.offline.rules.text import capitalise
from mongomem.offline.rules.words import NO_THIRD_PERSON_S

_ADVERBS = "always|usually|never|often|also|really|still|only|sometimes|normally|generally|just|now|currently"
_PRONOUNS = re.compile(
    rf"\b(?:(?P<iam>I'm|I am)|(?P<ive>I've)|(?P<ill>I'll)|(?P<i>I)(?:\s+(?P<adv>(?:{_ADVERBS})\s+)?"
    r"(?P<verb>[a-z']+))?|(?P<my>[Mm]y)|(?P<me>[Mm]e)|(?P<mine>[Mm]ine)|(?P<myself>[Mm]yself))\b"
)
_NOT_ONLY_THE_USER = re.compile(r"\b(?i:we|us|our|ours|you|your|yours|I'd)\b")
_IRREGULAR = {"have": "has", "do": "does", "don't": "doesn't", "go": "goes", "am": "is", "haven't": "hasn't"}
_CONTRACTED = {"iam": "is", "ive": "has", "ill": "will"}


def who(subject: str) -> str:
    """How a sentence names the subject: "The user" or their name."""
    return "The user" if subject == "user" else subject


def _conjugate(verb: str) -> str:
    if verb in _IRREGULAR:
        return _IRREGULAR[verb]
    if verb in NO_THIRD_PERSON_S or verb.endswith(("ed", "n't", "'d")) or "'" in verb:
        return verb
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(verb) > 2 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def third_person(text: str, subject: str) -> str | None:
    """Rewrite a first-person statement about `subject`; None when that is not straightforward."""
    if _NOT_ONLY_THE_USER.search(text):
        return None
    low = "the user" if subject == "user" else subject
    named = False  # once the subject is named, "my" -> "their" and "me" -> "them"

    def repl(m: re.Match[str]) -> str:
        nonlocal named
        s = capitalise(low) if m.start() == 0 else low
        kind = m.lastgroup if m.group("i") is None else "i"
        if named and kind in {"my", "mine", "me", "myself"}:
            return {"my": "their", "mine": "their", "myself": "themselves"}.get(kind, "them")
        named = True
        if kind in _CONTRACTED:
            return f"{s} {_CONTRACTED[kind]}"
        if kind == "i":
            verb = m.group("verb")
            return s if verb is None else f"{s} {m.group('adv') or ''}{_conjugate(verb)}"
        return f"{s}'s" if kind in {"my", "mine"} else s  # me / myself

    return _PRONOUNS.sub(repl, text)
