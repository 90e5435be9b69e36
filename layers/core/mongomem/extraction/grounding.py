"""Grounded or refused: a proposed item is kept only when the turns it cites state it, about the right person.

A model (small ones most of all) fills the fields of a schema with what sounds right: the example a
description gives, a friend's trip credited to the user, a place nobody named. Nothing downstream can
tell such an item from a fact, so every item is checked against the conversation before it is written:

- `no_evidence`: it cites no turn of the snapshot (the answer schema requires `evidence_seqs`, so a
  grammar-held model always cites; a citation of a turn that does not exist is no citation).
- `ungrounded`: too few of its value's words are said in the cited turns (with the turn before each, an
  answer often completes a question): the value is not stated there and does not follow from them.
  A list value keeps only the elements the cited turns say ("interests: counseling, mental health,
  art" cited to a turn about counseling and mental health is that much).
- `invented`: a name, number or term in any of its fields appears nowhere in the conversation (an
  invented place, a date's day that no turn gives, the example attribute of the prompt).
- `wrong_subject`: an item about the user (its subject is the user, or an episode told as the user's)
  that cites only turns another speaker said: the friend's activity is not the user's; and the other way
  round, an item told as another speaker's that only the user's own turns state (the user's volunteering
  credited to the friend they told it to).
- `not_defined`: a term whose stating turn and the two before it do not define it ("X means / stands
  for ...", "X (...)", "X: ...", "X is a ...", "... (X)", "called X"): a small model glosses any word a
  chat used ("TikTok: a social media platform ...") from what it knows, not from the conversation.
- `no_steps`: a procedure whose stating turn and the two before it give no steps: no list, no sequence
  ("first ... then ..."), no instruction ("To X, do Y."; "here's how"), no tool call. A chat about a pottery
  class is not a procedure, whatever steps a model writes around its words.

Words are compared as the lexical index compares them (lower-cased, accents folded, stop words out,
light stemming), so "hiking" grounds "hikes"; numbers spelled out ground digits. The shares are per
kind: a fact's value is mostly the speaker's words, an episode's summary a paraphrase of several turns.
The rules and their thresholds are written down in docs/trust.md ("Grounded or refused").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from mongomem.extraction.orgscreen import CUE as _CUE
from mongomem.extraction.proposal import TurnView
from mongomem.kinds import MemoryKind, norm
from mongomem.kinds.base import texts_of
from mongomem.retrieval.lexical import stem, tokenize

# How many turns, ending at a cited one, may state an item together.
WINDOW = 3
# The share of a value's words the cited turns must say, per kind (default for custom kinds). A fact or
# a preference is short and in the speaker's words; an episode's summary and a procedure's steps
# paraphrase several turns.
MIN_SHARE = {"semantic": 0.5, "preference": 0.5, "taxonomic": 0.5, "episodic": 0.34, "procedural": 0.34}
DEFAULT_SHARE = 0.4
# Words a model adds around any value without the conversation saying them.
FILLER = frozenset(
    tokenize(
        "user users speaker person someone people thing things something stuff also really very "
        "currently recently previously usually often sometimes always never still now new old "
        "enjoys likes loves wants plans feels felt thinks said says mentioned shared told talked "
        "experience activity event time day week month year friend friends family"
    )
)
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
}
# A date the model resolved ("last year" -> 2022, "yesterday" -> 2023-01-19): no turn spells it.
_ISO_DATE = re.compile(r"\b(?:1[89]|2[01])\d{2}(?:-\d{2}(?:-\d{2})?(?:T[\d:.+Z-]+)?)?\b")
# The elements of a list value: "a, b, and c", "a; b" (not "1,000"; "salt and pepper" is one).
_LIST_SPLIT = re.compile(r"[,;]\s+(?:(?:and|or)\s+)?")
_ANCHOR_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
# A code mixing letters and digits ("QA1B2C3", "A320", "1h52"): one anchor, as written.
_CODE = re.compile(r"\b[A-Za-z\d]*(?:\d[A-Za-z]|[A-Za-z]\d)[A-Za-z\d]*\b")
_CODE_PART = re.compile(r"\d+|[^\W\d_]+")
# A user's reply that only confirms what was just said to them ("Your home airport is LIS now?" - "Yes"):
# the user states it (the offline rules read confirmations the same way).
_CONFIRM = re.compile(
    r"^\s*(yes|yep|yeah|yup|correct|exactly|right|indeed|absolutely|that'?s (right|correct|it)|"
    r"that is (right|correct)|you'?re right|you are right|confirmed)\b[\s,.!]*"
    r"((please|thanks|thank you|that'?s (right|correct)|it is|i do|i am|exactly)[\s,.!]*)*$",
    re.IGNORECASE,
)
# Turns that give steps: a list of two lines or more, two sequence words, an instruction, a tool call.
_LIST_LINE = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*\u2022])\s+\S|(?:^|\s)\d{1,2}[.)]\s+[^\W\d]", re.MULTILINE)
_SEQUENCE = re.compile(
    r"(?:^|[.!?;:,]\s*|\band\s+)(first(?:ly)?|second(?:ly)?|third(?:ly)?|then|next|after\s+that|afterwards|finally|lastly|"
    r"step\s+\d+|before\s+(?:that|you)|once\s+(?:that|it|you))\b",
    re.IGNORECASE | re.MULTILINE,
)
_INSTRUCTION = re.compile(
    r"(?:(?:^|[.!?:]\s+)to\s+(?!(?:be|me|us|him|her|them|this|that|my|our|your)\b)\w+(?:\s+[\w'-]+){0,6}?"
    r"(?:,\s*(?:you\s+|we\s+|i\s+)?|\s+(?:you|we|i)\s+)(?:just\s+|simply\s+|always\s+)?"
    r"(?!(?:it|that|this|he|she|they|there)\b)[a-z]+|"
    r"\bby\s+\w+ing\b[^.!?]{0,200}?\bthen\s+\w+|\bhere(?:'s|\s+is)\s+how\b|\bthe\s+steps\s+are\b|"
    r"\b(?:the\s+)?(?:process|procedure|routine|recipe|checklist|runbook)\s+(?:is|goes)\s*:)",
    re.IGNORECASE | re.MULTILINE,
)


_DEFINING_AFTER = rf"\s*(?:,?\s+{_CUE}\b|\(|:|=|\s+(?:is|are)\s+(?:an?|the)\b|,\s+(?:an?|i\.e\.|that\s+is)\s)"  # "X means", "X, a ..."
_DEFINING_BEFORE = (
    r"(?:\b(?:is|are|means)\s+(?:an?\s+|the\s+)?|(?:\bcalled|\bcall\s+(?:it|this|that|them)|\bknown\s+as|"
    r"\bthe\s+term)\s+[\"'\u201c\u2018]?)"
)


def defines(text: str, terms: Iterable[str]) -> bool:
    """Whether a text defines one of `terms`: "X means / stands for / is short for ...", "X (...)", "X:
    ...", "X is a ...", "... (X)", "called X", "known as X"."""
    for term in terms:
        name = re.escape(term.strip())
        if not name:
            continue
        if re.search(rf"(?<!\w){name}(?!\w)[\"'\u201d\u2019]?{_DEFINING_AFTER}", text, re.IGNORECASE):
            return True
        if re.search(rf"{_DEFINING_BEFORE}{name}(?!\w)|\(\s*{name}\s*\)", text, re.IGNORECASE):
            return True
    return False


def gives_steps(text: str) -> bool:
    """Whether a text gives steps: a list, a sequence, an instruction or a tool call."""
    if "[calls " in text or len(_LIST_LINE.findall(text)) >= 2:
        return True
    if len({m.group(1).lower() for m in _SEQUENCE.finditer(text)}) >= 2:
        return True
    return _INSTRUCTION.search(text) is not None


_TO_USER = re.compile(r"\byou(r|'re|rs)?\b", re.IGNORECASE)
_POSSESSIVE = re.compile(r"'s?$")


def words(text: str) -> set[str]:
    """A text's words as the lexical index sees them, spelled-out numbers as digits, resolved dates out."""
    return {_NUMBER_WORDS.get(w, w) for w in tokenize(_ISO_DATE.sub(" ", text))}


def anchors(text: str) -> set[str]:
    """What a value may not make up: its numbers (dates resolved by the model aside: a relative date
    becomes an ISO date no turn spells) and its names. A name is a capitalised word that does not start a
    sentence; in a short value (three words or fewer: "LIS", "Los Angeles") every capitalised word is
    one, and a Title Cased text (most words capitalised: an episode's title) has none by case alone."""
    plain = _ISO_DATE.sub(" ", text)
    codes = {norm(c) for c in _CODE.findall(plain)}
    plain = _CODE.sub(" ", plain)
    found = codes | {n.replace(",", "").replace(".", "") for n in _ANCHOR_NUMBER.findall(plain)}
    for sentence in re.split(r"(?<=[.!?;:])\s+", plain):
        tokens = [_POSSESSIVE.sub("", w) for w in _WORD.findall(sentence)]  # "Ana's" names Ana
        capital = [i for i, w in enumerate(tokens) if w[0].isupper()]
        inner = [i for i in capital if i > 0]  # a sentence's first word is capitalised anyway
        if len(tokens) <= 3:
            found.update(norm(tokens[i]) for i in capital)
        elif len(inner) < 0.6 * (len(tokens) - 1):
            # "The airport in Lisbon, Portugal.": two names in four words after the first, no title
            found.update(norm(tokens[i]) for i in inner)
    return {a for a in found if a}


class Conversation:
    """The snapshot's turns, indexed for the checks: each turn's words, and the words and anchors of all."""

    def __init__(self, turns: Sequence[TurnView], user_names: Iterable[str] = ()) -> None:
        self.turns = {t.seq: t for t in turns}
        self.order = [t.seq for t in turns]
        self.words = {t.seq: words(t.content) for t in turns}
        self.all_words: set[str] = set().union(*self.words.values()) if self.words else set()
        text = " ".join(t.content for t in turns)
        names = " ".join(t.name or "" for t in turns)
        self.all_text = f" {norm(text)} {norm(names)} "
        self.user_names = {norm(n) for n in user_names if n} | {"user", "the user"}
        # the numbers the turns say, read as a value's are ("1h52" says 1 and 52)
        self.numbers = {n.replace(",", "").replace(".", "") for n in _ANCHOR_NUMBER.findall(text)}

    def cited(self, seqs: Iterable[Any]) -> list[int]:
        return [s for s in dict.fromkeys(seqs) if isinstance(s, int) and s in self.turns]

    def window(self, seq: int) -> list[int]:
        """A cited turn and the two before it: an answer completes the question it follows."""
        i = self.order.index(seq)
        return self.order[max(0, i - WINDOW + 1) : i + 1]

    def share(self, seqs: Iterable[int], wanted: set[str]) -> float:
        said: set[str] = set().union(*(self.words[s] for s in seqs))
        return len(wanted & said) / len(wanted) if wanted else 1.0

    def locate(self, seqs: Sequence[int], wanted: set[str]) -> tuple[int, float]:
        """The cited turn whose window says most of `wanted`, and that share (the turn that says more
        itself wins a tie: a model citing every turn of the snapshot still gets the one that states it)."""
        return max(
            ((s, self.share(self.window(s), wanted), self.share([s], wanted)) for s in seqs),
            key=lambda found: (found[1], found[2]),
        )[:2]

    def stated_by(self, where: int, wanted: set[str], cited: Sequence[int] = ()) -> set[str]:
        """Who said the item: the roles of the window's turns that say most of it themselves (the user's
        too when a cited turn of theirs confirms what such a turn just said to them)."""
        shares = {s: self.share([s], wanted) for s in self.window(where)}
        top = max(shares.values())
        stating = [s for s, got in shares.items() if got == top]
        roles = {self.turns[s].role for s in stating}
        for s in cited:
            i = self.order.index(s)
            before = self.turns[self.order[i - 1]] if i else None
            if (
                self.turns[s].role == "user"
                and _CONFIRM.match(self.turns[s].content)
                and before is not None
                and before.seq in stating
                and _TO_USER.search(before.content)
            ):
                roles.add("user")
        return roles

    def says(self, anchor: str) -> bool:
        """Whether any turn (or a speaker's name) says the anchor, as written or in another form."""
        if f" {anchor} " in self.all_text or stem(anchor) in self.all_words or anchor in self.numbers:
            return True
        # a code the turns write otherwise ("3pm" for "3 pm"): each of its parts said
        parts = _CODE_PART.findall(anchor)
        return len(parts) > 1 and all(self.says(p) for p in parts)


def check(
    kind: MemoryKind, item: Any, conversation: Conversation, *, allowed: Iterable[str] = ()
) -> str | None:
    """Why an item is refused (no_evidence, ungrounded, invented, not_defined, no_steps, wrong_subject), or
    None when the turns it cites state it. `allowed` are words any item may use (the user's names, a kind's enums)."""
    if not isinstance(item, dict):
        return None  # malformed: the commit refuses and counts it
    seqs = conversation.cited(item.get("evidence_seqs") or [])
    if not seqs:
        return "no_evidence"
    try:
        payload, _ = kind.validate(item)
        value = kind.value(payload)
    except Exception:
        return None  # malformed: the commit refuses and counts it
    free = {norm(a) for a in allowed} | conversation.user_names
    if kind.name == "semantic" and _trim_list(item, seqs, conversation, free):
        payload, _ = kind.validate(item)
        value = kind.value(payload)
    fields = [s for s in texts_of(payload) if s not in enum_values(kind)]
    for text in fields:
        for anchor in anchors(text):
            if anchor not in free and not conversation.says(anchor):
                return "invented"
    # what the item says: its value (a fact's), or its text where the value is only a setting (a
    # preference's polarity and strength)
    filler = FILLER | {w for e in enum_values(kind) for w in words(e)}
    names = {w for n in free for w in words(n)}
    # a definition that repeats its term ("LGBTQ support group: a support group for LGBTQ people") is
    # grounded by what it adds, not by the term the turn used
    named = words(kind.name_of(payload))
    wanted = _said_of(words(value) - filler, names) or _said_of(words(kind.text(payload)) - filler, names)
    wanted = wanted - named or wanted
    where, share = conversation.locate(seqs, wanted)
    if share < MIN_SHARE.get(kind.name, DEFAULT_SHARE):
        return "ungrounded"
    if kind.name == "taxonomic" and not defines(
        "\n".join(conversation.turns[s].content for s in conversation.window(where)),
        [str(payload.get("term") or ""), *[str(a) for a in payload.get("aliases") or []]],
    ):
        return "not_defined"
    if kind.name == "procedural" and not gives_steps(
        "\n".join(conversation.turns[s].content for s in conversation.window(where))
    ):
        return "no_steps"
    told_as = _told_as(kind, payload, conversation)
    stated_by = conversation.stated_by(where, wanted, seqs)
    if told_as == "user" and "user" not in stated_by:
        return "wrong_subject"
    if told_as == "other" and stated_by == {"user"}:
        return "wrong_subject"  # the user's own trip credited to the friend they told it to
    # the item's evidence is the turns that state it, not every turn a model listed
    item["evidence_seqs"] = [s for s in conversation.window(where) if s in seqs] or [where]
    return None


def _trim_list(item: dict[str, Any], seqs: Sequence[int], conversation: Conversation, free: set[str]) -> bool:
    """A list value keeps only the elements the cited turns say: "interests: counseling, mental health,
    art, self-expression" cited to a turn about counseling and mental health is that much, not the
    hobbies a model added from elsewhere. True when the value changed (one element left at least)."""
    value = item.get("value")
    if not isinstance(value, str):
        return False
    elements = [e for e in _LIST_SPLIT.split(value) if e.strip()]
    if len(elements) < 2:
        return False
    said: set[str] = set().union(*(conversation.words[w] for s in seqs for w in conversation.window(s)))
    names = {w for n in free for w in words(n)}
    kept = [
        e for e in elements if not (want := words(e) - FILLER - names) or len(want & said) * 2 >= len(want)
    ]
    if not kept or len(kept) == len(elements):
        return False
    item["value"] = ", ".join(e.strip() for e in kept)
    return True


def _said_of(found: set[str], names: set[str]) -> set[str]:
    """The words a cited turn must say: without the user's names (a turn says "I", the item "Ana"),
    unless the names are all there is (the user's name itself, said in the turn)."""
    return found - names or found


def _told_as(kind: MemoryKind, payload: dict[str, Any], conversation: Conversation) -> str | None:
    """Whose the item is told as: "user" (a subject that is the user or, for kinds without a subject, a
    text that names the user and no one else who spoke), "other" (it names only another speaker), or None."""
    others = {norm(t.name) for t in conversation.turns.values() if t.name and t.role != "user"} - {""}
    others -= conversation.user_names
    subject = kind.subject(payload)
    if subject is not None:
        said = norm(str(subject))
        return "user" if said in conversation.user_names else ("other" if said in others else None)
    text = f" {norm(kind.text(payload))} "
    names_user = any(f" {n} " in text for n in conversation.user_names)
    names_other = any(f" {n} " in text for n in others)
    if names_user != names_other:
        return "user" if names_user else "other"
    return None


def enum_values(kind: MemoryKind) -> frozenset[str]:
    """The values a kind's schema fixes (polarity, strength, cardinality): never made up."""
    out: set[str] = set()
    stack: list[Any] = [kind.item_schema()]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            out.update(str(v) for v in node.get("enum") or [])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(out)
