"""Markers around everything mongomem hands an agent, so that it never learns from its own output.

An agent puts what mongomem gave it (a context block, recalled messages, working-memory instructions,
a tool result) into its prompt, and its turns may then repeat or paraphrase it. Recorded again, those
turns would make memories of memories (a feedback loop) and reinforce them with their own echo. Every
block mongomem hands out is wrapped as

    <mongomem-memory source="context"> ... </mongomem-memory>

and extraction drops the marked spans of every turn, in any role, before any proposer sees it. The
markers are plain text: they survive being pasted into a system prompt, a tool result or a JSON string.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache

TAG = "mongomem-memory"
CLOSE = f"</{TAG}>"
# A second, tag-free pair of markers inside the block: an agent that drops tags (an HTML sanitiser, a
# Markdown renderer) keeps these, and HTML escaping does not change them.
SENTINEL_OPEN = f"[{TAG} source=%s]"
SENTINEL_CLOSE = f"[/{TAG}]"

# How a marker's brackets look after what agents do to text: raw, HTML-escaped once or more (`&lt;`,
# `&amp;lt;`, numeric), JSON-escaped (`\u003c`), or the sentinels' square brackets; whitespace anywhere.
_LT = r"(?:<|&(?:amp;)*(?:lt|\#0*60|\#x0*3c);|\\u003c|\[)"
_GT = r"(?:>|&(?:amp;)*(?:gt|\#0*62|\#x0*3e);|\\u003e|\])"
_TAGS = re.compile(
    rf"{_LT}\s*(?P<close>/\s*)?mongomem\s*-\s*memory\b(?:(?!{_GT}).){{0,240}}?(?:{_GT}|$)",
    re.IGNORECASE | re.DOTALL,
)
# The marker's name as a reader might still see it in content (any case, any separators, full-width
# letters, zero-width characters, entities): `neutralise` rewrites every such occurrence.
_NAME = re.compile(r"mongomem[\W_]*memory", re.IGNORECASE)
_NEUTRAL = "mongo-mem memory"

# Look-alikes of the name's letters (Unicode TR39 confusables, confusables.txt): a reader sees
# `</m?ngomem-memory>` with a Cyrillic o (U+043E) at the ? as the marker. The table holds, per letter of the name, every
# single character the Unicode confusables data lists as confusable with it that NFKD + dropping marks +
# casefolding does not already turn into that letter (those, full-width, mathematical and accented forms,
# are folded by `skeleton` itself). `tests/unit/test_markers_confusables.py` checks the table against the
# confusables data (the confusable-homoglyphs package, a dev dependency): no code point is missing.
_LOOKALIKES = {
    "m": (
        "\u039c\u03fa\u041c\u13b7\u15f0\u16d6\u2c98\ua4df"
        "\U000102b0\U00010311\U0001d6b3\U0001d6ed\U0001d727\U0001d761\U0001d79b"
    ),
    "o": (
        "0\u039f\u03bf\u03c3\u041e\u043e\u0555\u0585"
        "\u06f5\u0966\u09e6\u0a66\u0ae6\u0b20\u0b66\u0be6"
        "\u0c02\u0c66\u0c82\u0ce6\u0d02\u0d20\u0d66\u0d82"
        "\u0e50\u0ed0\u101d\u1040\u10ff\u12d0\u1d0f\u1d11"
        "\u2c9e\u2c9f\u2d54\u3007\ua4f3\uab3d\U00010292\U000102ab"
        "\U00010404\U0001042c\U000104c2\U000104ea\U00010516\U000114d0\U000118b5\U000118c8"
        "\U000118d7\U000118e0\U0001d6b6\U0001d6d0\U0001d6d4\U0001d6f0\U0001d70a\U0001d70e"
        "\U0001d72a\U0001d744\U0001d748\U0001d764\U0001d77e\U0001d782\U0001d79e\U0001d7b8"
        "\U0001d7bc\U0001d7ce\U0001d7d8\U0001d7e2\U0001d7ec\U0001d7f6\U0001fbf0"
        # right-to-left look-alikes (the confusables data wraps them in direction marks)
        "\u05e1\u0647\u0665\u06be\u06c1\u06d5\u07c0\ufba6\ufba7\ufba8\ufba9\ufbaa\ufbab\ufbac"
        "\ufbad\ufee9\ufeea\ufeeb\ufeec\U0001ee24\U0001ee64\U0001ee84"
    ),
    "n": ("\u039d\u0578\u057c\u2c9a\ua4e0\U00010513\U0001d6b4\U0001d6ee\U0001d728\U0001d762\U0001d79c"),
    "g": ("\u018d\u0261\u050c\u0581\u13c0\u13f3\u1d83\ua4d6"),
    "e": (
        "\u0395\u0415\u0435\u04bd\u13ac\u212e\u22ff\u2d39"
        "\ua4f0\uab32\U00010286\U000118a6\U000118ae\U0001d6ac\U0001d6e6\U0001d720"
        "\U0001d75a\U0001d794"
    ),
    "r": ("\u01a6\u0433\u13a1\u13d2\u1587\u1d26\u2c85\ua4e3\uab47\uab48\uab81\U000104b4\U00016f35\U0001d216"),
    "y": (
        "\u0263\u028f\u03a5\u03b3\u03d2\u0423\u0443\u04ae"
        "\u04af\u10e7\u13a9\u13bd\u1d8c\u1eff\u213d\u2ca8"
        "\ua4ec\uab5a\U000102b2\U000118a4\U000118dc\U00016f43\U0001d6bc\U0001d6c4"
        "\U0001d6f6\U0001d6fe\U0001d730\U0001d738\U0001d76a\U0001d772\U0001d7a4\U0001d7ac"
    ),
    # the separator: a letter that reads as a hyphen (Coptic dialect-p ni), which `\W` would not match
    "-": "\u2cba",
}
_FOLD = {c: letter for letter, chars in _LOOKALIKES.items() for c in chars}
# The name in a skeleton: `rn` reads as `m` (TR39 lists it), separators as in _NAME.
_SKELETON_NAME = re.compile(r"(?:m|rn)ongo(?:m|rn)e(?:m|rn)[\W_]*(?:m|rn)e(?:m|rn)ory")
# ASCII text that may spell the name (a cheap first look: `0` and `rn` are ASCII look-alikes).
_ASCII_HINT = re.compile(r"(?:m|rn)[o0]ng[o0]", re.IGNORECASE)
# A JSON string escape: a surrogate pair as one character (what `json.dumps` writes for a character outside
# the BMP), or one code unit that is no lone surrogate (a reader cannot decode one).
_JSON_ESCAPE = re.compile(
    r"\\u(?P<high>[dD][89abAB][0-9a-fA-F]{2})\\u(?P<low>[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|\\u(?P<unit>(?![dD][89a-fA-F])[0-9a-fA-F]{4})"
)
# A letter a reader sees as a plain Latin one although Unicode gives it no decomposition: the letter with
# a stroke, a bar, a hook or a middle tilde drawn through it (U+00F8 o with stroke, U+0275 barred o,
# U+1D6F m with middle tilde ...). TR39 does not list them; their names do.
_OVERLAID = re.compile(r"LATIN (?:SMALL|CAPITAL) LETTER (?:BARRED )?(?P<letter>[A-Z])(?: WITH .+)?")


# The tools mongomem gives agents (MCP server, framework integrations): their results are mongomem's own
# output, so a recorded tool turn answering one of them is never extracted, marked or not.
OWN_TOOLS = frozenset(
    {
        "search_memories",
        "recall_messages",
        "build_context",
        "get_working_memory",
        "update_working_memory",
        "updateWorkingMemory",
        "record_turn",
        "discover_procedures",
        "get_procedure_skill",
        "record_procedure_feedback",
        "create_thread",
        "list_threads",
        "update_thread",
        "delete_thread",
        "clone_thread",
        "create_memory",
        "list_memories",
        "delete_memory",
    }
)


# Characters a reader does not see that are no format (Cf) characters: the Hangul fillers and the braille
# blank are letters or symbols drawn as nothing (variation selectors and the combining grapheme joiner are
# marks, dropped as marks whatever their combining class).
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def _unseen(char: str) -> bool:
    """Whether a reader sees nothing of `char`: a format character or one of `_INVISIBLE`."""
    return unicodedata.category(char) == "Cf" or char in _INVISIBLE


def _json_unescape(found: re.Match[str]) -> str:
    if found["unit"] is not None:
        return chr(int(found["unit"], 16))
    high, low = int(found["high"], 16), int(found["low"], 16)
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))


def reader_forms(text: str) -> str:
    """What a reader may turn the text into: entities and JSON escapes decoded, in any order and up to
    three levels of each (an entity behind a JSON escape, a surrogate pair as its one character),
    compatibility forms folded (full-width letters), invisible format characters removed."""
    out = text
    for _ in range(6):
        decoded = _JSON_ESCAPE.sub(_json_unescape, html.unescape(out))
        if decoded == out:
            break
        out = decoded
    out = unicodedata.normalize("NFKC", out)
    return "".join(c for c in out if not _unseen(c))


@lru_cache(maxsize=4096)
def _fold(char: str) -> str:
    """What a reader takes one non-ASCII character for (see `skeleton`)."""
    if char in _FOLD:
        return _FOLD[char]
    folded = "".join(
        _FOLD.get(c, c)
        for c in unicodedata.normalize("NFKD", char)
        if unicodedata.category(c)[0] != "M" and not _unseen(c)
    ).casefold()
    if len(folded) == 1 and not folded.isascii():
        overlaid = _OVERLAID.fullmatch(unicodedata.name(folded, ""))
        if overlaid:
            return _FOLD.get(overlaid["letter"].lower(), overlaid["letter"].lower())
    return folded


def _skeleton_map(text: str) -> tuple[str, list[int]]:
    """`skeleton(text)` and, for each of its characters, the index of the character of `text` it comes
    from (so a match in the skeleton names a span of the text)."""
    out: list[str] = []
    origin: list[int] = []
    for i, char in enumerate(text):
        folded = _FOLD.get(char, char.lower()) if char.isascii() else _fold(char)
        out.append(folded)
        origin.extend([i] * len(folded))
    return "".join(out), origin


def skeleton(text: str) -> str:
    """What a reader may take `text` for, in the spirit of Unicode TR39's skeleton: compatibility forms
    decomposed (NFKD), combining marks and invisible format characters dropped, the look-alikes of the
    marker name's letters (Cyrillic o U+043E, Greek omicron, digit 0 ...) replaced by those letters, a
    Latin letter with a stroke, bar or hook through it (U+00F8) read as the letter, case folded."""
    return _skeleton_map(text)[0]


def _hides_name(text: str) -> bool:
    return bool(_SKELETON_NAME.search(skeleton(reader_forms(text))))


def _rewrite_lookalikes(text: str) -> str:
    """Every span of `text` whose skeleton spells the name, rewritten `mongo-mem memory` (with the
    combining marks that follow it: a mark left behind would decorate the rewritten name's last letter)."""
    folded, origin = _skeleton_map(text)
    spans = [(origin[m.start()], origin[m.end() - 1] + 1) for m in _SKELETON_NAME.finditer(folded)]
    for start, end in reversed(spans):
        while end < len(text) and (unicodedata.category(text[end])[0] == "M" or _unseen(text[end])):
            end += 1
        text = text[:start] + _NEUTRAL + text[end:]
    return text


def neutralise(text: str) -> str:
    """`text` unable to open, close or forge a marker, however it is later escaped, unescaped, stripped
    of tags or re-spaced: every form of the marker's name in it becomes `mongo-mem memory`. Text that
    hides the name behind entities is shown decoded, with the name rewritten; look-alike letters
    (confusables), combining marks and compatibility forms are folded as a reader would (`skeleton`)."""
    if text.isascii() and "&" not in text and "\\u" not in text and not _ASCII_HINT.search(text):
        return text
    if not _hides_name(text):
        return text
    out = _rewrite_lookalikes(_NAME.sub(_NEUTRAL, text))
    if _hides_name(out):
        out = _rewrite_lookalikes(reader_forms(out))
    return out


def wrap(text: str, source: str) -> str:
    """`text` inside the marker; `source` says what it is (context, recall, working_memory, search ...).

    The text is content (memories, messages, working memory: anyone's words), so it is neutralised:
    nothing in it can end the block early or open another one."""
    if not text:
        return text
    source = re.sub(r"[^a-z_]", "", source.lower()) or "memory"
    body = neutralise(text)
    return f'<{TAG} source="{source}">\n{SENTINEL_OPEN % source}\n{body}\n{SENTINEL_CLOSE}\n{CLOSE}'


def strip(text: str) -> tuple[str, int]:
    """(`text` without any marked span, how many outermost spans were removed). Blocks may nest (a
    context block holds the working-memory block); an opening tag without its closing one runs to the
    end of the text (a truncated echo is still an echo); a stray closing tag is dropped."""
    if "mongomem" not in text.lower():
        return text, 0
    kept: list[str] = []
    depth, spans, at = 0, 0, 0
    for tag in _TAGS.finditer(text):
        if tag.group("close") is None:
            if depth == 0:
                kept.append(text[at : tag.start()])
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                spans += 1
                at = tag.end()
        else:
            kept.append(text[at : tag.start()])  # a closing tag without its opening one
            at = tag.end()
    if depth > 0:
        spans += 1
    else:
        kept.append(text[at:])
    cleaned = " ".join(part.strip() for part in kept if part.strip())
    return cleaned, spans


def marked(text: str) -> bool:
    return bool(_TAGS.search(text)) if "mongomem" in text.lower() else False
