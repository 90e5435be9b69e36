"""Text handling shared by the offline rules: cleaning, sentence splitting, normalising, clipping."""

from __future__ import annotations

import re
import unicodedata

from mongomem.offline.rules.words import ABBREVIATIONS

_QUOTES = str.maketrans(
    {
        "\u2019": "'",
        "\u2018": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u00a0": " ",
        "\u2013": "-",
        "\u2014": " - ",
    }
)


def clean_text(text: str) -> str:
    """NFC, straight quotes, no markdown emphasis, no control characters (tabs/newlines kept)."""
    text = unicodedata.normalize("NFC", text).translate(_QUOTES)
    text = text.replace("**", "").replace("__", "")
    if text.replace("\n", "").replace("\t", "").isprintable():  # the common case: nothing to drop
        return text
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch)[0] != "C")


_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+")
_LIST_ITEM = re.compile(r"^(?:\d{1,2}[.)]|[-*\u2022])\s")


def split_sentences(text: str) -> list[str]:
    """Sentences (and lines), with abbreviation dots not treated as sentence ends."""
    out: list[str] = []
    for piece in _SENTENCE_END.split(text):
        piece = piece.strip()
        if not piece:
            continue
        if out and out[-1].rsplit(" ", 1)[-1].lower() in ABBREVIATIONS and not _LIST_ITEM.match(piece):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


_QUESTION_START = re.compile(
    r"^(?i:do|does|did|can|could|would|should|will|shall|is|are|am|was|were|have|has|what|where|"
    r"when|why|how|who|which|whose)\b"
)


def is_question(sentence: str) -> bool:
    s = sentence.strip()
    return s.endswith("?") or bool(_QUESTION_START.match(s))


def statements(text: str) -> list[str]:
    """The sentences of `text` that are not questions."""
    return [s for s in split_sentences(text) if not is_question(s)]


_HEDGES = re.compile(
    r"\b(?i:if|unless|whether|would|wish|hope|maybe|perhaps|might|suppose|supposing|imagine|pretend|"
    r"said|says|asked|told|think|thinks|thought|wonder|doubt|not sure|pretending|what if|"
    r"assume|assuming|hypothetically|example)\b"
)
_OWN_WORDS = re.compile(r"\b(?i:as|like)\s+I\s+(?i:said|told\s+you|mentioned|wrote)\b")


def hedged(prefix: str) -> bool:
    """Whether the words before a match make it hypothetical, reported or uncertain."""
    prefix = _OWN_WORDS.sub(" ", prefix)  # "as I said, ..." repeats the user's own statement
    return bool(_HEDGES.search(prefix))


def squash(text: str) -> str:
    """Runs of whitespace as one space."""
    return re.sub(r"\s+", " ", text)


def clip(text: str, limit: int) -> str:
    text = squash(text).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return (cut or text[: limit - 1]).rstrip() + "\u2026"


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def strip_punct(text: str) -> str:
    return text.strip().strip(" ,;:.!?-\"'`()[]").strip()
