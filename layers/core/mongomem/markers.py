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
_NAME = re.compile(r"mongomem[\W_]{0,8}memory", re.IGNORECASE)
_NEUTRAL = "mongo-mem memory"
_JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


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


def reader_forms(text: str) -> str:
    """What a reader may turn the text into: entities and JSON escapes decoded (up to three levels),
    compatibility forms folded (full-width letters), invisible format characters removed."""
    out = text
    for _ in range(3):
        decoded = html.unescape(out)
        if decoded == out:
            break
        out = decoded
    out = _JSON_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), out)
    out = unicodedata.normalize("NFKC", out)
    return "".join(c for c in out if unicodedata.category(c) != "Cf")


def neutralise(text: str) -> str:
    """`text` unable to open, close or forge a marker, however it is later escaped, unescaped, stripped
    of tags or re-spaced: every form of the marker's name in it becomes `mongo-mem memory`. Text that
    hides the name behind entities or look-alike characters is shown decoded, with the name rewritten."""
    if "mongomem" not in text.lower() and text.isascii() and "&" not in text and "\\u" not in text:
        return text
    if not _NAME.search(reader_forms(text)):
        return text
    out = _NAME.sub(_NEUTRAL, text)
    if _NAME.search(reader_forms(out)):
        out = _NAME.sub(_NEUTRAL, reader_forms(out))
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
