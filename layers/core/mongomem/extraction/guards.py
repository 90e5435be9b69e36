"""Checks on a model's items before they are committed: copies of the prompt's own examples, and org
memories that would name the user.

A weak model fills a field with the example its description gives ("e.g. 'aviation', 'billing'") or the
placeholder of the example answer ("<term>"): an item whose key or value is such an example the
conversation never said, or that holds a placeholder, is refused (`example_copy`). A kind whose memories every user of the tenant sees (org) must not publish one
user's name: an item naming the user is kept in the user's private scope instead, and only a term or
procedure of the organisation is published (extraction.orgscreen: a feeling or an opinion is refused, the
user's own phrase kept private; each counted by reason).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mongomem.extraction import grounding
from mongomem.extraction.orgscreen import org_verdict
from mongomem.extraction.proposal import TurnView
from mongomem.kinds import MemoryKind, norm
from mongomem.kinds.base import about_the_user, texts_of

_QUOTED = re.compile(r"'([^']{2,60})'|\"([^\"]{2,60})\"")
_PLACEHOLDER = re.compile(r"^\s*<[\w ,.-]{1,60}>\s*$")
# The word the instructions tell the model to use for the user: prescribed, so never a copy.
SELF = frozenset({"user", "the user"})
_SELF_NAME = re.compile(  # the phrase in any case ("My name is Ana", "I'm Zed"), the name capitalised
    r"\b(?i:my name is|i am called|i'm called|i\u2019m called|call me|i'm|i\u2019m|i am)"
    r"\s+([A-Z][\w'-]{1,40}(?:\s+[A-Z][\w'-]{1,40})?)"
)
# The attributes a fact about the user gives their name in ("user name: Zed").
_NAME_ATTRIBUTES = frozenset({"name", "first name", "full name", "given name", "preferred name", "nickname"})


def prompt_examples(kind: MemoryKind, instructions: str | None = None) -> frozenset[str]:
    """The quoted examples the kind's prompt shows (its field descriptions and instructions), normalised
    ('user' among them: prescribed as a subject, never a value)."""
    texts = [instructions or kind.instructions]
    texts.extend(_descriptions(kind.item_schema()))
    found = {norm(a or b) for text in texts for a, b in _QUOTED.findall(text)}
    return frozenset(f for f in found if f)


def _descriptions(schema: Any) -> Iterable[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "description" and isinstance(value, str):
                yield value
            else:
                yield from _descriptions(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _descriptions(value)


def _contains(haystack: str, needle: str) -> bool:
    return bool(needle) and f" {needle} " in f" {haystack} "


def copies_example(kind: MemoryKind, item: Any, examples: frozenset[str], transcript: str) -> str | None:
    """The example or placeholder an item repeats without the conversation saying it, or None: a
    placeholder of the example answer anywhere, or an example as the item's key or value (what it is
    about and what it says; a label such as 'home airport' is meant to be reused)."""
    for text in texts_of(item if isinstance(item, dict) else {}):
        if _PLACEHOLDER.match(text):
            return text
    try:
        payload, _ = kind.validate(item)
        value, key = kind.value(payload), kind.key(payload)
    except Exception:
        return None  # malformed: the commit refuses and counts it
    for text, allowed in ((value, frozenset()), (key, SELF)):
        plain = norm(text)
        if plain in examples and plain not in allowed and not _contains(transcript, plain):
            return text
    # any other field (a fact's attribute, a term's domain) that is an example the conversation never says
    fixed = grounding.enum_values(kind)  # a schema's own choices ('one', 'many') are never copies
    # nor are the labels the instructions offer to pick from ("a category such as travel, food ...")
    offered = norm(_QUOTED.sub(" ", kind.instructions))
    for text in texts_of(payload):
        plain = norm(text)
        if text in fixed or _contains(offered, plain):
            continue
        if plain in examples and plain not in SELF and not _contains(transcript, plain):
            return text
    return None


def user_names(user_id: str, turns: Sequence[TurnView]) -> frozenset[str]:
    """How the conversation names its user: the user id, the user turns' speaker name and a name the user
    gives for themselves ("my name is Ana")."""
    names = {norm(user_id)}
    for t in turns:
        if t.role != "user":
            continue
        if t.name:
            names.add(norm(t.name))
        names.update(norm(m) for m in _SELF_NAME.findall(t.content))
    return frozenset(n for n in names if len(n) >= 3 and n not in SELF)


def _names_stated(items: list[Any], user_id: str) -> frozenset[str]:
    """The names the batch's own facts give the user ("user name: Zed"): a fact about "Zed" from the same
    conversation is about the user (issue 33's twenty-sixth probe: "I am Zed. My favourite band is
    Qwerty." published "Zed favourite band: Qwerty")."""
    found = set()
    for item in items:
        if (
            isinstance(item, dict)
            and about_the_user(item, user_id)
            and norm(str(item.get("attribute") or "")) in _NAME_ATTRIBUTES
            and isinstance(item.get("value"), str)
        ):
            found.add(norm(item["value"]))
    return frozenset(n for n in found if len(n) >= 3 and n not in SELF)


def names_user(item: Any, names: frozenset[str]) -> bool:
    text = norm(" ".join(texts_of(item if isinstance(item, dict) else {})))
    return any(_contains(text, n) for n in names)


@dataclass
class Screened:
    items: list[Any] = field(default_factory=list)  # kept, in order
    personal: list[Any] = field(default_factory=list)  # kept, in the user's private scope (org kinds only)
    refused: Counter[str] = field(default_factory=Counter)
    kept_private: Counter[str] = field(default_factory=Counter)  # why items of `personal` are there


def screen(
    kind: MemoryKind,
    items: list[Any],
    turns: Sequence[TurnView],
    user_id: str,
    *,
    org: bool,
    instructions: str | None = None,
) -> Screened:
    """Refuse example copies and items the turns they cite do not state (mongomem.extraction.grounding);
    for an org kind, set apart the items that name the user."""
    from mongomem.observability import logger  # lazy: 16 ms

    examples = prompt_examples(kind, instructions)
    transcript = norm(" ".join(t.content for t in turns))
    names = (user_names(user_id, turns) | _names_stated(items, user_id)) if org else frozenset()
    conversation = grounding.Conversation(turns, user_names(user_id, turns))
    out = Screened()
    for item in items:
        copied = copies_example(kind, item, examples, transcript)
        if copied is not None:
            out.refused["example_copy"] += 1
            logger.info(
                "proposed item refused: it repeats the prompt's example",
                extra={"memory_type": kind.name, "reason": "example_copy"},  # no value: logs hold none
            )
            continue
        why = grounding.check(kind, item, conversation)
        if why is not None:
            out.refused[why] += 1
            logger.info(
                "proposed item refused: the turns it cites do not state it",
                # the item's fields, not what they say: logs never hold what users said
                extra={
                    "memory_type": kind.name,
                    "reason": why,
                    "fields": sorted(map(str, item)) if isinstance(item, dict) else [],
                },
            )
            continue
        verdict = org_verdict(item, turns) if org else None
        if verdict == "not_a_term":
            out.refused[verdict] += 1  # an opinion or a feeling, not a term; a fragment, not a procedure
            continue
        if verdict is not None:
            out.personal.append(item)  # the user's own phrase: theirs, not the organisation's
            out.kept_private[verdict] += 1
            continue
        if org and (
            about_the_user(item, user_id)
            or (
                kind.visibility == "private" and isinstance(item, dict) and kind.names_its_user(item, user_id)
            )
        ):
            # "user home city", a fact whose value says "the user's sister": the user's own, never the
            # organisation's (a kind about users that the project shares)
            out.personal.append(item)
            out.kept_private["about_user"] += 1
            continue
        if org and names_user(item, names):
            out.personal.append(item)
            out.kept_private["names_user"] += 1
            continue
        out.items.append(item)
    return out
