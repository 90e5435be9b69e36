"""Render: the packed sections as the block in the request's format, and the response that explains it.

`text` (default): labelled `##` sections; `markdown`: a `# Context` document, every line a bullet;
`openai`: also a system message; `anthropic`: also one system block per section. Every block is inside
mongomem's marker (an agent echoing it is never learnt from again). Turns read in time order, recalled
ones under their thread (a neighbour indented under its match), memories best first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mongomem import markers
from mongomem.models.pending import PendingWork
from mongomem.models.recall import (
    ContextFormat,
    ContextItem,
    ContextResponse,
    ContextSection,
    SourceReport,
)
from mongomem.retrieval.block.items import Candidate, estimate_tokens
from mongomem.retrieval.block.pack import Packed, Section
from mongomem.retrieval.block.sources import Gathered, Use


def bullet(fmt: ContextFormat) -> int:
    """Characters the format adds to a line (markdown's "- ")."""
    return 2 if fmt == "markdown" else 0


def section_text(section: Section, fmt: ContextFormat) -> str:
    dash = "- " if fmt == "markdown" and section.layout != "pinned" else ""
    lines: list[str] = []
    thread: str | None = None
    for c in section.ordered():
        if section.layout == "threads" and (c.thread or "") != thread:
            thread = c.thread or ""
            lines.append(f"### thread {thread}")
        text = c.text[2:] if dash and c.text.startswith("- ") else c.text
        lines.append(("  " if c.indent else "") + dash + text)
    return "\n".join(lines)


def block(sections: Sequence[Section], fmt: ContextFormat) -> str:
    text = "\n\n".join(f"{s.title}\n{section_text(s, fmt)}" for s in sections if s.items)
    return f"# Context\n\n{text}" if fmt == "markdown" and text else text


def measure(fmt: ContextFormat) -> Callable[[Sequence[Section]], int]:
    def tokens(sections: Sequence[Section]) -> int:
        return estimate_tokens(block(sections, fmt))

    return tokens


def respond(
    uses: Sequence[Use],
    gathered: Sequence[Gathered],
    packed: Packed,
    *,
    fmt: ContextFormat,
    token_budget: int,
    query: str | None,
    pending: PendingWork | None,
    named: bool,
    reader: str | None = None,
) -> ContextResponse:
    """The response; `reader` (who the block is for) keys the block's token (`markers.enclose`), so the
    block's first bytes stay the same while its head does."""
    body = block(packed.sections, fmt)
    shown = markers.neutralise(body)
    context = markers.enclose(shown, "context", reader) if body else ""
    texts = [section_text(s, fmt) for s in packed.sections]
    if shown != body:
        # content that forges a marker: no text of the answer holds it as written (a caller may show the
        # sections' texts to a model too; issue 33's twentieth probe)
        texts = [markers.neutralise(t) for t in texts]
    tokens = [estimate_tokens(t) if s.items else 0 for s, t in zip(packed.sections, texts, strict=True)]
    response = ContextResponse(
        context=context,
        sections=[
            ContextSection(
                name=s.name,
                title=s.title,
                text=text,
                tokens=n,
                ids=s.ids(),
                dropped=s.dropped,
                truncated=s.truncated,
                note=g.note,
                version=g.version,
            )
            for s, g, text, n in zip(packed.sections, gathered, texts, tokens, strict=True)
        ],
        ids={},
        items=[_item(c) for c in packed.chosen],
        left_out={**packed.left_out, "below_floor": sum(g.below_floor for g in gathered)},
        token_budget=token_budget,
        tokens=estimate_tokens(context) if context else 0,
        query=markers.neutralise(query) if query else query,  # echoed: no marker either
        pending=pending,
        format=fmt,
        sources=[
            _report(u, g, s, n)
            for u, g, s, n in zip(uses, gathered, packed.sections, tokens, strict=True)
            if u.spec is not None  # the "Asked on" line (as_of) is no source of the caller's
        ]
        if named
        else None,
    )
    for section in response.sections:
        response.ids[section.name] = [*response.ids.get(section.name, []), *section.ids]
    if context and fmt == "openai":
        response.messages = [{"role": "system", "content": context}]
    elif context and fmt == "anthropic":
        response.system = [
            {
                "type": "text",
                "text": markers.enclose(markers.neutralise(f"{s.title}\n{text}"), "context", reader),
            }
            for s, text in zip(packed.sections, texts, strict=True)
            if s.items
        ]
    return response


def _report(use: Use, g: Gathered, s: Section, tokens: int) -> SourceReport:
    assert use.spec is not None
    return SourceReport(
        source=use.spec.source,
        mode=use.spec.mode,
        top_k=use.spec.top_k,
        found=g.found,
        chosen=len(s.items),
        dropped={**g.dropped, "budget": s.dropped, "below_floor": g.below_floor},
        tokens=tokens,
        ids=s.ids(),
        ms=round(g.ms, 2),
        note=g.note,
        version=g.version,
    )


def _item(c: Candidate) -> ContextItem:
    return ContextItem(
        id=c.ids[0], ids=c.ids, section=c.section, reason=c.reason, value=round(c.value, 4), tokens=c.tokens
    )
