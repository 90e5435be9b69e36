"""The offline rules' lexicon: the small English word lists the patterns consult.

The lists themselves are data (lexicon.toml beside this module); this module reads them once and
builds what the patterns use. Month, weekday and number words are the date rules' (mongomem.dates,
from python-dateutil's parser tables).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from mongomem.dates import MONTH_WORDS, NUMBER_WORDS, WEEKDAY_WORDS

__all__ = [
    "ABBREVIATIONS",
    "CAR_MAKES",
    "DEMONYMS",
    "DIETS",
    "EVENT_VERBS",
    "IMPERATIVES",
    "LANGUAGES",
    "MONTH_WORDS",
    "MULTI_VALUED",
    "NOT_NAMES",
    "NOT_OCCUPATION_MODIFIERS",
    "NOT_TERMS",
    "NO_THIRD_PERSON_S",
    "NP_STOP_FIRST",
    "NUMBER_WORDS",
    "OCCUPATIONS",
    "RELATIONS",
    "RELATION_ALT",
    "WEEKDAY_WORDS",
]

_LEXICON = tomllib.loads((Path(__file__).with_name("lexicon.toml")).read_text(encoding="utf-8"))


def _words(key: str) -> list[str]:
    """A list of the lexicon: its words, "_" read as a space."""
    return [word.replace("_", " ") for word in _LEXICON[key].split()]


DEMONYMS = frozenset(_words("demonyms"))
# Capitalised words that are never a person's name.
NOT_NAMES = frozenset(_words("not_names")) | WEEKDAY_WORDS | MONTH_WORDS | DEMONYMS
NP_STOP_FIRST = frozenset(_words("np_stop_first"))
OCCUPATIONS = frozenset(_words("occupations"))
NOT_OCCUPATION_MODIFIERS = frozenset(_words("not_occupation_modifiers"))
CAR_MAKES = frozenset(_words("car_makes"))
# What a user says -> the diet stored.
DIETS: dict[str, str] = {d: d for d in _words("diets")} | dict(_LEXICON["diet_synonyms"])
LANGUAGES = frozenset(_words("languages"))

# Relations: the word a user says -> (normalised relation, memory attribute). Spouse-like relations
# are single-valued "<relation> name" facts; children, pets and friends can be many at once, so they
# use the multi-valued attributes the memory keys know ("children", "pets", "friends").
RELATIONS: dict[str, tuple[str, str]] = {
    **{w: (w, f"{w} name") for w in _words("relations_named")},
    **{w: (w, "children") for w in _words("relations_children")},
    **{w: (w, "pets") for w in _words("relations_pets")},
    **{w: (w, "friends") for w in _words("relations_friends")},
}
RELATIONS |= {word: RELATIONS[same] for word, same in _LEXICON["relation_synonyms"].items()}
RELATION_ALT = "|".join(re.escape(w) for w in sorted(RELATIONS, key=len, reverse=True))

# Past-tense event verbs -> whether the verb alone is a clear event ("went") or needs a time phrase ("had").
EVENT_VERBS: dict[str, bool] = {
    **dict.fromkeys(_words("event_verbs_clear"), True),
    **dict.fromkeys(_words("event_verbs_timed"), False),
}
NO_THIRD_PERSON_S = frozenset(_words("no_third_person_s"))
IMPERATIVES = frozenset(_words("imperatives"))
NOT_TERMS = frozenset(_words("not_terms"))
ABBREVIATIONS = frozenset(_words("abbreviations"))
# Attributes that hold many values at once ("likes", "languages"): the semantic rules propose each value
# as a fact of cardinality "many" (its own memory, never an update of another).
MULTI_VALUED = frozenset(_words("multi_valued"))
