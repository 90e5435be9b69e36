"""Preference rules: what the user likes or dislikes ("I prefer window seats", "I love sushi", "I hate
early flights") and how they want to be answered ("please answer in Portuguese", "keep answers short").

Only the user's own statements count (never a question, never a hedged or reported one); the category
comes from the words of the preference (travel, food, drink, music ...), else "general".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from mongomem.extraction.proposal import TurnView
from mongomem.kinds.meaning import norm
from mongomem.offline.rules.phrases import split_list, take_phrase
from mongomem.offline.rules.speaker import user_turns
from mongomem.offline.rules.text import hedged, statements, strip_punct
from mongomem.offline.rules.words import NP_STOP_FIRST

_I = r"\b(?:I|i)\b(?:\s+(?i:really|truly|absolutely|definitely|generally|usually|always|much|kind\s+of|do))*"
# verb -> (polarity, strength)
_VERBS: dict[str, tuple[str, str]] = {
    "like": ("positive", "mild"),
    "enjoy": ("positive", "mild"),
    "prefer": ("positive", "moderate"),
    "love": ("positive", "strong"),
    "adore": ("positive", "strong"),
    "dislike": ("negative", "moderate"),
    "don't like": ("negative", "moderate"),
    "do not like": ("negative", "moderate"),
    "dont like": ("negative", "moderate"),
    "hate": ("negative", "strong"),
    "detest": ("negative", "strong"),
    "can't stand": ("negative", "strong"),
    "cannot stand": ("negative", "strong"),
}
_VERB = "|".join(sorted((re.escape(v).replace(r"\ ", r"\s+") for v in _VERBS), key=len, reverse=True))
_LIKES = re.compile(rf"{_I}\s+(?P<verb>(?i:{_VERB}))\s+(?P<rest>[^\n]+)")
_LANGUAGE = re.compile(
    r"(?i:\b(?:please\s+)?(?:always\s+)?(?:answer|reply|respond|write|talk|speak)(?:\s+to\s+me)?"
    r"(?:\s+only)?\s+in\s+)(?P<lang>[A-Z][a-z]+)\b"
)
_STYLE = re.compile(
    r"(?i:\b(?:please\s+)?(?:keep|make)\s+(?:your\s+|the\s+)?(?:answers|replies|responses)\s+)"
    r"(?P<style>(?i:short|brief|concise|detailed|simple|formal|informal))\b"
)
# "I love sushi and I hate early flights": each clause says its own preference
_CLAUSE = re.compile(r"\s*(?:,|;)?\s+(?:and|but|while)\s+(?=I\b)|\s*;\s*")
_CATEGORIES: dict[str, tuple[str, ...]] = {
    "travel": (
        "seat",
        "window",
        "aisle",
        "flight",
        "flights",
        "fly",
        "flying",
        "hotel",
        "hotels",
        "train",
        "trains",
        "airline",
        "airlines",
        "layover",
        "layovers",
        "cabin",
        "economy",
        "business class",
    ),
    "food": (
        "food",
        "sushi",
        "pizza",
        "pasta",
        "ramen",
        "curry",
        "cheese",
        "chocolate",
        "spicy",
        "vegetarian",
        "vegan",
        "meat",
        "fish",
        "salad",
        "burgers",
        "steak",
        "noodles",
        "dessert",
        "breakfast",
    ),
    "drink": ("coffee", "tea", "wine", "beer", "espresso", "latte", "juice", "water", "cocktails"),
    "music": ("music", "jazz", "rock", "pop", "classical", "hip hop", "metal", "concerts"),
    "activities": ("hiking", "running", "cycling", "swimming", "reading", "chess", "yoga", "skiing"),
    "communication": ("email", "emails", "calls", "phone", "messages", "meetings", "texts"),
}


def category_of(preference: str) -> str:
    words = f" {norm(preference)} "
    for category, cues in _CATEGORIES.items():
        if any(f" {cue} " in words for cue in cues):
            return category
    return "general"


def _item(category: str, preference: str, polarity: str, strength: str, seq: int) -> dict[str, Any]:
    return {
        "subject": "user",
        "category": category,
        "preference": preference,
        "polarity": polarity,
        "strength": strength,
        "evidence_seqs": [seq],
    }


def _likes(sentence: str, seq: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for m in _LIKES.finditer(sentence):
        if hedged(sentence[: m.start()]):
            continue
        verb = re.sub(r"\s+", " ", m.group("verb").lower())
        polarity, strength = _VERBS[verb]
        rest = m.group("rest")
        if re.match(r"\s*to\s", rest) and verb != "prefer":
            continue  # "I like to think ...": an infinitive is rarely a liked thing
        rest = re.sub(r"^\s*to\s+", "", rest)
        rest = re.split(r"\s+(?:over|rather\s+than|instead\s+of|to)\s+", rest, maxsplit=1)[0]
        for part in split_list(take_phrase(rest) or "", split_and=False):
            if (
                part.lower() in NP_STOP_FIRST
                or len(part) < 2
                or part.split()[0].lower() in {"it", "that", "this"}
            ):
                continue
            found.append(_item(category_of(part), part, polarity, strength, seq))
    return found


def _answers(sentence: str, seq: int) -> list[dict[str, Any]]:
    found = []
    for m in _LANGUAGE.finditer(sentence):
        found.append(_item("answer language", f"answers in {m.group('lang')}", "positive", "strong", seq))
    for m in _STYLE.finditer(sentence):
        found.append(
            _item("answer style", f"{m.group('style').lower()} answers", "positive", "moderate", seq)
        )
    return found


def propose(turns: Sequence[TurnView]) -> list[dict[str, Any]]:
    """The user's stated preferences, one item per (category, preference): the latest statement wins."""
    by_key: dict[str, dict[str, Any]] = {}
    for turn in user_turns(turns):
        clauses = [c for s in statements(turn.content) for c in _CLAUSE.split(s) if c.strip()]
        for sentence in clauses:
            for item in [*_likes(sentence, turn.seq), *_answers(sentence, turn.seq)]:
                item["preference"] = strip_punct(item["preference"])
                key = f"{item['category']}|{norm(item['preference'])}"
                if key in by_key:
                    item["evidence_seqs"] = sorted({*by_key[key]["evidence_seqs"], turn.seq})
                by_key[key] = item
    return list(by_key.values())
