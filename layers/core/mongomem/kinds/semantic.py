"""Semantic facts: a labelled fact about the user or the world (subject, attribute, value)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field

from mongomem.kinds.base import Item, MemoryKind, accents_of, as_read, cased_apart, said_alike
from mongomem.kinds.fields import DateText, Long, SafeKey, Short
from mongomem.kinds.labels import attribute_form, many_valued, subject_form, value_form
from mongomem.kinds.meaning import name_marks, norm, same_value, signs_and_money
from mongomem.markers import unseen

# Attributes that record what the user asked, not what is true of them.
QUESTION_ATTRIBUTES = frozenset(
    norm(a)
    for a in (
        "question",
        "questions",
        "asked",
        "asks",
        "asked about",
        "asking about",
        "query",
        "request",
        "wants to know",
        "wanted to know",
        "inquiry",
        "enquiry",
        "current question",
        "last question",
    )
)


# The qualifier keeping the name a fact used for the user ("Maria home city" -> subject "user", name "Maria").
SUBJECT_ALIAS = "name"
# The match keys of the facts that state the user's own name ("user|name": "Maria").
USER_NAME_KEYS = ("user|name", "user|preferred name", "user|first name", "user|full name", "user|nickname")


class SemanticItem(Item):
    """A labelled fact about the user or the world, self-contained."""

    subject: Short = Field(description="who or what the fact is about, e.g. 'user' or 'Acme Corp'")
    attribute: Short = Field(description="the property, e.g. 'home airport', 'favourite food'")
    value: Long = Field(description="the value, with relative dates resolved to absolute ones")
    cardinality: Literal["one", "many"] = Field(
        "one",
        description="'one' when the attribute holds one value at a time (a new value replaces the old, e.g. "
        "home airport), 'many' when it holds several at once (each value is its own fact, e.g. likes, "
        "languages, children)",
    )
    qualifiers: dict[SafeKey, Short] = Field(
        default_factory=dict, max_length=32, description="optional context, e.g. since"
    )
    valid_from: DateText | None = Field(None, description="ISO date from which the fact holds, if stated")
    retracted: bool = Field(
        False,
        description="true when the user says the fact is not, or no longer, true ('I'm not allergic to "
        "peanuts, that was wrong'; 'I don't live in Madrid anymore'): it ends the stored fact",
    )


class Semantic(MemoryKind):
    name = "semantic"
    named = ("subject", "attribute")
    aspects = ("attribute",)
    item = SemanticItem
    instructions = (
        "Extract FACTS only: labelled, self-contained facts about the user or the world (subject, attribute, "
        "value, optional qualifiers). Use subject 'user' for the user. Resolve relative dates "
        "('last Saturday', 'yesterday') to absolute ISO dates using the time of the turn that says them. "
        "Skip small talk."
    )

    def payload(self, item: Any) -> dict[str, Any]:
        data = super().payload(item)
        if data.get("cardinality") == "one":
            data.pop("cardinality")  # the default: stored payloads stay as they were
        if not data.get("retracted"):
            data.pop("retracted", None)
        return data

    def retraction(self, payload: dict[str, Any]) -> bool:
        return bool(payload.get("retracted"))

    user_name_keys = (
        "user|name",
        "user|preferred name",
        "user|first name",
        "user|full name",
        "user|nickname",
    )

    def subject(self, payload: dict[str, Any]) -> str | None:
        return str(payload["subject"])

    def with_subject(self, payload: dict[str, Any], subject: str, alias: str | None = None) -> dict[str, Any]:
        """The payload about `subject`; the name it used for the user is kept as the `name` qualifier."""
        if not alias:
            return {**payload, "subject": subject}
        return {
            **payload,
            "subject": subject,
            "qualifiers": {**(payload.get("qualifiers") or {}), SUBJECT_ALIAS: alias},
        }

    def as_named(self, payload: dict[str, Any]) -> dict[str, Any]:
        qualifiers = dict(payload.get("qualifiers") or {})
        alias = qualifiers.pop(SUBJECT_ALIAS, None) if _is_user(payload["subject"]) else None
        if not alias or not str(alias).strip():
            return payload
        return {**payload, "subject": str(alias).strip(), "qualifiers": qualifiers}

    def user_name(self, payload: dict[str, Any]) -> str | None:
        about = f"{subject_form(payload['subject'])}|{attribute_form(payload['attribute'])}"
        return (
            str(payload["value"]) if about in self.user_name_keys and not self.retraction(payload) else None
        )

    def junk(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        found = super().junk(payload)
        if norm(payload["attribute"]) in QUESTION_ATTRIBUTES:
            found.append({"path": "attribute", "message": "the user's question is not a fact about them"})
        return found

    def meaningful(self, payload: dict[str, Any]) -> list[tuple[str, str, bool]]:
        # a subject or attribute may be a question word ("what to cook"); the value may not be a question
        return [
            ("subject", payload["subject"], False),
            ("attribute", payload["attribute"], False),
            ("value", payload["value"], True),
        ]

    def key(self, payload: dict[str, Any]) -> str:
        """subject|attribute in their canonical forms (mongomem.kinds.labels): "the user's favourite colour"
        and "favorite color" are one key. An attribute of many values (as the proposer said, or one the
        labels know holds several: likes, languages, allergies, pets ...) adds the value: each value is its
        own memory, never an update of another."""
        attribute = payload["attribute"]
        key = f"{subject_form(payload['subject'])}|{attribute_form(attribute)}"
        if payload.get("cardinality") == "many" or many_valued(attribute):
            return f"{key}|{value_form(attribute, payload['value'])}"
        return key

    def apart_marks(self, payload: dict[str, Any]) -> str:
        # a key that holds the value: "C++" and "C#", ".NET" and "NET" are two languages; a closing full
        # stop is no mark of the value ("Spanish." is "Spanish")
        if payload.get("cardinality") != "many" and not many_valued(payload["attribute"]):
            return ""
        said = "".join(ch for ch in str(payload.get("value") or "") if not unseen(ch))  # drawn as nothing
        value = said.strip().rstrip(".").rstrip()
        marks = name_marks(value)
        # what else the key folds of a value that names: accents ("Zoë" / "Zoe"), a name's closing "s"
        # ("Queens" / "Queen") and its article ("The Band" / "bands"), and (`keyed_apart`) a word of
        # capitals ("CO" / "Co"): each value is its own memory, never the next version of another (issue
        # 33's twenty-second probe)
        named = "".join(f"{w} " for w in _named_words(value))
        more = accents_of(value) + ("/" + named if named else "")
        return f"{marks}/{more}" if more else marks

    def keyed_apart(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        # a word of capitals said with one capital in the other value ("CO welding" / "Co welding"); a
        # value typed in lower case or in capitals throughout is the value (`cased_apart`)
        if super().keyed_apart(old, new):
            return True
        many = old.get("cardinality") == "many" or many_valued(str(old.get("attribute") or ""))
        return many and cased_apart(str(old.get("value") or ""), str(new.get("value") or ""))

    def same_name(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        return super().same_name(old, new) and not self.keyed_apart(old, new)

    def held_forms(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        # "many" chosen by the caller for an attribute the labels hold single-valued
        if payload.get("cardinality") == "many" and not many_valued(payload["attribute"]):
            return [{**payload, "cardinality": "one"}]
        return []

    def same_content(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """The same value in its canonical form ("Vegetarian" / "a vegetarian diet", "3 March" / "March 3rd"),
        else by the shared rules (numbers, names and negations compared exactly); and the same qualifiers
        and `valid_from` where both give them (the text shows them: "500 (unit: kg)" is not "500 (unit:
        lb)")."""
        if not all(said_alike(old.get(f), new.get(f)) for f in ("qualifiers", "valid_from")):
            return False
        if value_form(old["attribute"], old["value"]) == value_form(new["attribute"], new["value"]) and (
            signs_and_money(str(old["value"])) == signs_and_money(str(new["value"]))
        ):
            return True  # the canonical form drops signs and currencies: compared here
        return same_value(str(old["value"]), str(new["value"]))

    def text(self, payload: dict[str, Any]) -> str:
        qualifiers = dict(payload.get("qualifiers") or {})
        alias = qualifiers.pop(SUBJECT_ALIAS, None) if _is_user(payload["subject"]) else None
        quals = "; ".join(f"{k}: {v}" for k, v in qualifiers.items())
        subject = alias or payload["subject"]  # the fact reads as it was said: "Ana allergy: peanuts"
        text = f"{subject} {payload['attribute']}: {payload['value']}"
        return f"{text} ({quals})" if quals else text

    def value(self, payload: dict[str, Any]) -> str:
        return str(payload["value"])


def _is_user(subject: str) -> bool:
    """The subject "user" as a reader takes it: "User", "the user", "us\u0435r" (Cyrillic IE) too."""
    return subject_form(as_read(subject)) == "user"


def _named_words(value: str) -> list[str]:
    """The words of a value whose spelling names something the key folds: a capitalised word with a
    closing "s" ("Queens", "Wales"), and a capitalised article before a name ("The" of "The Band")."""
    words = re.findall(r"[^\W\d_]+", value)
    out = [w.lower() for w in words if w[:1].isupper() and not w.isupper() and w.lower().endswith("s")]
    if len(words) > 1 and words[0] in ("The", "A", "An") and words[1][:1].isupper():
        out.append(words[0].lower())
    return out
