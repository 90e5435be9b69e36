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

import re

TAG = "mongomem-memory"
OPEN = f"<{TAG}"
CLOSE = f"</{TAG}>"

# Opening tags (attributes optional, quotes possibly escaped) and closing tags, also HTML-escaped (a block
# shown in a web page or Markdown, then pasted back).
_TAGS = re.compile(
    r"(?:<|&lt;)\s*(?P<close>/\s*)?mongomem-memory\b(?:[^>&]|&(?!gt;))*(?:>|&gt;)",
    re.IGNORECASE,
)


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


def wrap(text: str, source: str) -> str:
    """`text` inside the marker; `source` says what it is (context, recall, working_memory, search ...)."""
    if not text:
        return text
    return f'<{TAG} source="{source}">\n{text}\n{CLOSE}'


def strip(text: str) -> tuple[str, int]:
    """(`text` without any marked span, how many outermost spans were removed). Blocks may nest (a
    context block holds the working-memory block); an opening tag without its closing one runs to the
    end of the text (a truncated echo is still an echo); a stray closing tag is dropped."""
    if "mongomem-memory" not in text.lower():
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
    return "mongomem-memory" in text.lower() and bool(_TAGS.search(text))
