"""Canonical forms of a fact's labels: one attribute however it is worded, one value however it is cased.

Extraction (an LLM, the offline rules, a caller of the API) names the same attribute many ways:
"favorite color", "Favourite Colour", "the user's preferred colour", "city of residence" for "home city".
A semantic memory's match key is built from these canonical forms, so a restatement in other words finds
its memory by key (and is a REINFORCE), and a changed value is an UPDATE of exactly that memory.

The forms are deliberately small and readable (docs/adr/0022-canonical-attribute-keys-a-paraphrase-is-the-same.md):
- case, accents and punctuation folded (`norm`), a leading article, "user's" / "my" / "your" / "our" dropped ("his" / "her" / "their" name someone);
- a possessive "X's Y" read as "X Y" and "name of X" as "X name";
- British spellings of common words read as American ("favourite colour" -> "favorite color");
- a short table of synonyms, each mapping a few labels onto one the offline rules already use; nothing
  maps two attributes that may hold different values at once onto one ("home city" and "hometown" stay
  apart, and so do "birthday" and "birth date");
- an attribute of several values at once (likes, languages, allergies, pets ...) is always many-valued,
  whatever the proposer said: each value is its own memory, never an update of another.
Values are compared in a canonical form as well (value_form): a leading article, the attribute's own
word ("the colour green" for a favourite colour), a company's legal suffix, a date's spelling ("3 March",
"March 3rd") and a plural ("peanuts" / "peanut", never in a name) do not make another value. Numbers,
names and negations are never folded.

Changing these forms changes stored keys: `mongomem migrate` recomputes them (mongomem.longterm.write.rekey).
"""

from __future__ import annotations

import re

from mongomem.kinds.meaning import norm

_ARTICLES = frozenset({"the", "a", "an"})
# The user's own (said by the user, or to them): "his" / "her" / "their" name someone, and two people's
# facts under one subject ("my parents": his phone number, her phone number) are two (issue 33's
# sixteenth probe).
_OWNERS = frozenset({"my", "your", "our"})
# "the user's ...", "user's ..." (not "user name": that is an attribute of its own)
_USERS = re.compile(r"^\s*(?:the\s+)?users?(?:['\u2019]s|s['\u2019]|['\u2019])\s+", re.IGNORECASE)

# British -> American spelling of words that appear in attribute labels and short values.
SPELLING = {
    "favourite": "favorite",
    "favourites": "favorites",
    "colour": "color",
    "colours": "colors",
    "flavour": "flavor",
    "flavours": "flavors",
    "neighbour": "neighbor",
    "neighbourhood": "neighborhood",
    "honour": "honor",
    "humour": "humor",
    "behaviour": "behavior",
    "centre": "center",
    "theatre": "theater",
    "metre": "meter",
    "metres": "meters",
    "litre": "liter",
    "programme": "program",
    "organisation": "organization",
    "organisations": "organizations",
    "travelling": "traveling",
    "traveller": "traveler",
    "jewellery": "jewelry",
    "grey": "gray",
    "catalogue": "catalog",
    "licence": "license",
    "defence": "defense",
    "cheque": "check",
    "mould": "mold",
    "moustache": "mustache",
    "pyjamas": "pajamas",
    "aeroplane": "airplane",
    "tyre": "tire",
    "tyres": "tires",
    "aluminium": "aluminum",
    "yoghurt": "yogurt",
    "mum": "mom",
}

# Relations whose name is a one-value fact ("wife name"): the offline rules' spelling of them.
_NAMED_RELATIONS = (
    "wife husband partner spouse boyfriend girlfriend fiance fiancee mother father boss manager brother "
    "sister best friend"
)
_PET_WORDS = "pet pets dog cat rabbit parrot hamster puppy kitten"

# label (after the steps above) -> canonical label. Kept small: each entry is a label LLMs use for an
# attribute the rules know, and none merges two attributes that can hold different values at once.
SYNONYMS: dict[str, str] = {
    **dict.fromkeys(
        [
            "city of residence",
            "current city",
            "current city of residence",
            "residence city",
            "city",
            # not "residence", "home", "lives in": they may hold an address beside the city (issue 33's
            # seventeenth probe: "residence: 12 Elm Street, flat 4" is no home city)
            "current home city",
        ],
        "home city",
    ),
    **dict.fromkeys(
        [
            "home town",
            "city of origin",
            "origin city",
            "place of origin",
            "origin",
            "grew up in",
            "comes from",
            "is from",
            "from",
            "original home town",
            "original hometown",
        ],
        "hometown",
    ),
    **dict.fromkeys(
        [
            "company",
            "workplace",
            "work place",
            "place of work",
            "current employer",
            "employer name",
            "company name",
            "works at",
            "works for",
            "employed by",
            "employed at",
        ],
        "employer",
    ),
    **dict.fromkeys(
        [
            "job title",
            "job",
            "profession",
            "current job",
            "current occupation",
            "current job title",
            "works as",
            "career",
        ],
        "occupation",
    ),
    **dict.fromkeys(
        ["dietary preference", "dietary preferences", "diet type", "dietary choice", "dietary habit"], "diet"
    ),
    **dict.fromkeys(["birth day", "birthday date"], "birthday"),
    **dict.fromkeys(
        ["usual airport", "local airport", "nearest airport", "main airport", "airport", "home airport code"],
        "home airport",
    ),
    **dict.fromkeys(["vehicle", "car model", "drives", "current car"], "car"),
    **dict.fromkeys(
        [
            "language",
            "languages spoken",
            "spoken languages",
            "spoken language",
            "language spoken",
            "speaks",
            "speaks languages",
        ],
        "languages",
    ),
    **dict.fromkeys(
        ["allergies", "allergic to", "allergens", "allergen", "food allergy", "food allergies"], "allergy"
    ),
    **dict.fromkeys(
        [*(f"{w} name" for w in _PET_WORDS.split()), *(f"{w} names" for w in _PET_WORDS.split()), "pet"],
        "pets",
    ),
    **dict.fromkeys(
        ["like", "enjoys", "loves", "interests", "interest", "hobbies", "hobby", "passions"], "likes"
    ),
    **dict.fromkeys(["dislike", "hates"], "dislikes"),
    **dict.fromkeys(["child", "kids", "kid", "child name", "children names", "kids names"], "children"),
    **dict.fromkeys(["friend", "friend names"], "friends"),
    **{r: f"{r} name" for r in _NAMED_RELATIONS.split() if r not in {"best", "friend"}},
    "best friend": "best friend name",
    "fiance name": "fiance name",
    "skill": "skills",
    "goal": "goals",
    "plan": "plans",
    "notes": "note",
    "timezone": "time zone",
}

# Attributes that hold several values at once: each value is its own memory (the value is in the key).
MANY_VALUED = frozenset(
    "likes dislikes skills languages allergy pets friends children visited goals plans note".split()
)
# Attributes whose values are names: never folded for plurals ("Lucas" is not "Luca").
_NAME_VALUED = frozenset({"pets", "friends", "children"})

_LEGAL_SUFFIXES = frozenset(
    "corp corporation inc incorporated ltd limited llc plc gmbh co company sa ag bv nv srl".split()
)
_MONTHS = "january february march april may june july august september october november december".split()
_MONTH_OF = {m: i for i, m in enumerate(_MONTHS, 1)} | {m[:3]: i for i, m in enumerate(_MONTHS, 1)}
_MONTH_OF["sept"] = 9
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_DATE_FORMS = (
    re.compile(rf"^(?:on )?(?:the )?{_DAY} (?:of )?(?P<month>[a-z]+)(?: (?P<year>\d{{4}}))?$"),
    re.compile(rf"^(?:on )?(?P<month>[a-z]+) (?:the )?{_DAY}(?: (?P<year>\d{{4}}))?$"),
)


def _possessives(text: str) -> str:
    """ "the user's wife's name" -> "the user wife name" (before `norm` turns "'s" into " s")."""
    return re.sub(r"(?<=\w)['\u2019]s\b|(?<=s)['\u2019](?=\s|$)", "", text)


def _spelled(words: list[str]) -> list[str]:
    return [SPELLING.get(w, w) for w in words]


def attribute_form(attribute: str) -> str:
    """The canonical form of an attribute label (see the module's docstring)."""
    words = _spelled(norm(_possessives(_USERS.sub("", attribute))).split())
    while len(words) > 1 and (words[0] in _ARTICLES or words[0] in _OWNERS):
        words = words[1:]
    label = " ".join(words)
    of = re.fullmatch(r"name of (?:the |a |an )?(?:user )?(?P<who>.+)", label)
    if of:
        label = f"{of.group('who')} name"
    if label.startswith(("preferred ", "fave ", "favorite ")) and label.split(" ", 1)[1] not in {
        "name",
        "pronouns",
    }:
        label = "favorite " + label.split(" ", 1)[1]
    return SYNONYMS.get(label, label)


def subject_form(subject: str) -> str:
    """ "the user", "User", "user's", "me" -> "user"; any other subject case- and punctuation-folded.
    "users" are others (a product's users), and "ME" in capitals is an abbreviation (Maine), not "me"
    (issue 33's eighteenth probe)."""
    words = norm(_possessives(subject)).split()
    while len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    label = " ".join(words)
    if label == "me" and subject.strip() == "ME":
        return label
    return "user" if label in {"user", "me", "myself", "i", "the user"} else label


def names_user(subject: str, names: set[str], user_id: str) -> bool:
    """Whether a subject names the user: "user", "me", the user's id or one of `names` (normalised)."""
    return subject_form(subject) == "user" or norm(subject) in names or norm(subject) == norm(user_id)


def many_valued(attribute: str) -> bool:
    return attribute_form(attribute) in MANY_VALUED


def _date_form(text: str) -> str | None:
    """ "3 March", "March 3rd", "the 3rd of March" -> "03-03" (with the year when stated)."""
    for pattern in _DATE_FORMS:
        m = pattern.match(text)
        if m and m.group("month") in _MONTH_OF and 1 <= int(m.group("day")) <= 31:
            md = f"{_MONTH_OF[m.group('month')]:02d}-{int(m.group('day')):02d}"
            return f"{m.group('year')}-{md}" if m.group("year") else md
    return None


def _singular(word: str) -> str:
    if len(word) <= 3 or word.endswith(("ss", "us", "is")) or not word.endswith("s") or not word.isalpha():
        return word  # "1980s" is a decade, no plural of "1980" (issue 33's twenty-second probe)
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    return word[:-1]


def value_form(attribute: str, value: str) -> str:
    """The canonical form two values of one attribute are compared in (see the module's docstring)."""
    canon = attribute_form(attribute)
    words = _spelled(norm(value).split())
    if not words:
        return ""
    date = _date_form(" ".join(words))
    if date:
        return date
    while len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    # the attribute's own word in the value ("the colour green", "a vegan diet", "Spanish language"),
    # unless it is part of a name ("Mexico City")
    own = {w for c in canon.split() for w in (c, _singular(c))}
    named = {norm(w) for w in re.findall(r"\b[A-Z][\w'-]*", value)[1:]}
    if len(words) > 1:
        words = [w for w in words if w not in own or w in named] or words
    if canon == "employer" and len(words) > 1 and words[-1] in _LEGAL_SUFFIXES:
        words = words[:-1]
    if canon not in _NAME_VALUED and not canon.endswith(" name"):
        words = [_singular(w) for w in words]
    return " ".join(words)
