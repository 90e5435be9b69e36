"""What a memory kind is: one object that knows its item model, prompt, match key, text and merge rules.

Extraction, reconciliation, search text, the offline rules' validation and the API's direct writes
all go through a kind's methods; nothing else branches on a kind's name. Built-in kinds live one per
module beside this one; a project config can register more (mongomem.kinds.registry).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Visibility = Literal["private", "org"]

# Spelled-out numbers, ordinals and negations: a change in one is a change of content, however alike
# the two sentences embed (ten/eleven, first/second, "can"/"cannot").
_MEANINGFUL_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty hundred thousand million billion "
    "first second third fourth fifth sixth seventh eighth ninth tenth half quarter double triple "
    "no not never none nothing nobody cannot cant dont doesnt didnt wont isnt arent wasnt without "
    "monday tuesday wednesday thursday friday saturday sunday "
    "january february march april may june july august september october november december "
    "am pm yesterday today tomorrow".split()
)
# A value of at most this many words is compared exactly (after normalisation): "Blue" is not "Blue changed".
SHORT_WORDS = 4


def norm(text: str) -> str:
    """Case-, accent- and punctuation-insensitive form used for keys and equality."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", " ", folded).strip()


def anchors(text: str) -> frozenset[str]:
    """What must be equal for two texts to say the same thing: numbers (phone numbers, times, dates,
    versions, amounts, ids), spelled-out numbers, negations, weekdays and months, and proper nouns."""
    found: set[str] = set()
    for token in re.findall(r"[+$€£#]?\d[\w.:,/+-]*", text):
        found.add(re.sub(r"[^0-9a-z]", "", token.lower()))
    words = re.findall(r"[A-Za-z][A-Za-z'\u2019-]*", text)
    for i, word in enumerate(words):
        plain = norm(word).replace(" ", "")
        if plain in _MEANINGFUL_WORDS:
            found.add(plain)
        elif word[0].isupper() and (i > 0 or word.isupper()) and len(plain) > 1:
            found.add(plain)  # a name, place or acronym (a sentence's first word does not count)
        elif re.search(r"\d", word) or (len(word) > 2 and word.isupper()):
            found.add(plain)
    return frozenset(found)


def hard_anchors(text: str) -> frozenset[str]:
    """The anchors no paraphrase changes: numbers, spelled-out numbers, negations, weekdays and months
    (names are left out: "NYC" may restate "New York City")."""
    return frozenset(a for a in anchors(text) if re.search(r"\d", a) or a in _MEANINGFUL_WORDS)


def content_words(text: str) -> set[str]:
    return {w for w in norm(text).split() if len(w) > 2}


def same_value(old: str, new: str) -> bool:
    """The same value after normalisation: exactly, for short values; for longer text the same anchors
    (numbers, names, negations ...) and mostly the same words. Never an embedding score alone."""
    a, b = norm(old), norm(new)
    if a == b:
        return True
    if len(a.split()) <= SHORT_WORDS or len(b.split()) <= SHORT_WORDS:
        return False
    if anchors(old) != anchors(new):
        return False
    wa, wb = content_words(old), content_words(new)
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= 0.6


def restates(old: str, new: str) -> bool:
    """A paraphrase of the same statement: the same anchors and a fair share of the words (the vector
    match that brought the two together says they mean alike)."""
    if same_value(old, new):
        return True
    if anchors(old) != anchors(new):
        return False
    wa, wb = content_words(old), content_words(new)
    return bool(wa and wb) and len(wa & wb) / min(len(wa), len(wb)) >= 0.5


class Item(BaseModel):
    """What a proposer emits for a kind: the payload fields plus the turns they come from."""

    model_config = ConfigDict(extra="ignore")

    evidence_seqs: list[int] = Field(
        default_factory=list, description="seq numbers of the turns this item comes from", max_length=200
    )


class KindError(ValueError):
    """A payload is not valid for its kind; `details` names each field."""

    def __init__(self, message: str, details: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.details = details


class MemoryKind:
    """A memory kind. Subclasses set the class attributes and override the methods that differ."""

    name: ClassVar[str]
    item: ClassVar[type[Item]]
    # What the LLM is asked to extract (one kind per call); the shared instructions come first.
    instructions: ClassVar[str]
    # Who sees a memory of this kind by default: one user, or every user of the tenant.
    visibility: ClassVar[Visibility] = "private"

    # -- the payload -----------------------------------------------------------------------------
    def payload(self, item: BaseModel) -> dict[str, Any]:
        """The stored payload of a proposed (already validated) item."""
        return item.model_dump(mode="json", exclude={"evidence_seqs"}, exclude_none=True)

    def validate(self, data: Any) -> tuple[dict[str, Any], list[int]]:
        """(payload, evidence seqs) of raw item data; KindError naming every bad field."""
        try:
            item = self.item.model_validate(data)
        except ValidationError as exc:
            details = [
                {"path": ".".join(str(p) for p in e["loc"]) or "(item)", "message": e["msg"]}
                for e in exc.errors(include_url=False, include_input=False)
            ]
            raise KindError(f"not a valid {self.name} memory", details) from exc
        return self.payload(item), list(getattr(item, "evidence_seqs", []) or [])

    # -- identity and meaning --------------------------------------------------------------------
    def key(self, payload: dict[str, Any]) -> str:
        """The exact-match key reconciliation looks up: two memories with one key are one thing."""
        raise NotImplementedError

    def text(self, payload: dict[str, Any]) -> str:
        """The text that is embedded and indexed for search."""
        raise NotImplementedError

    def value(self, payload: dict[str, Any]) -> str:
        """The part of the payload a restatement repeats and an update changes."""
        return self.text(payload)

    def same_content(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """True when `new` says what `old` says (REINFORCE); False when it changes it (UPDATE)."""
        return same_value(self.value(old), self.value(new))

    def restates(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """For memories found by meaning (another key): `new` restates `old` in other words."""
        return restates(self.value(old), self.value(new))

    # -- merge rules -----------------------------------------------------------------------------
    def merged(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
        """What a restatement adds to the stored payload (aliases, participants), or None."""
        return None

    def updated(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        """The payload of the new version when `new` changes `old` (UPDATE)."""
        return new


def add_unique(have: list[str], extra: list[str]) -> list[str] | None:
    """`have` plus the entries of `extra` it lacks (compared normalised), or None when none is new."""
    seen = {norm(h) for h in have}
    new = [e for e in dict.fromkeys(extra) if norm(e) not in seen]
    return [*have, *new] if new else None
