"""Plan: the sources one request reads, each with its section, priority and limits.

Without `sources`: working memory (priority 0: first), then the session's recent turns, memories and
recalled turns, all at priority 1 (they compete by value), with the request's own limits (`recent_turns`,
`memories_top_k`, `recall_top_k`). With `sources`: the caller's list, each at its place in it (the last
source loses its items first) and with its own `top_k`, `mode`, `min_score` and `filter`. Either way the
same source objects gather, so the same filters apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mongomem.errors import UnknownKind
from mongomem.models.recall import ContextRequest, ContextSource
from mongomem.retrieval.block.sources import (
    AskedOn,
    Memories,
    Observed,
    Recalled,
    RecentTurns,
    Source,
    Use,
    WorkingMemory,
)

if TYPE_CHECKING:
    from mongomem.kinds import KindRegistry

WORKING, RECENT, RECALLED, MEMORIES, ASKED_ON, OBSERVED = (
    WorkingMemory(),
    RecentTurns(),
    Recalled(),
    Memories(),
    AskedOn(),
    Observed(),
)

TITLES = {
    "observations": "## Observations",
    "as_of": "## Asked on",
    "working_memory": "## Working memory",
    "recent_turns": "## Recent messages in this session",
    "turns": "## Recent messages in this session",
    "memories": "## What is known about the user",
    "recalled": "## Earlier messages that may be relevant",
}
# the default request's sources, in the block's reading order, and their priority
DEFAULT: tuple[tuple[str, Source, int], ...] = (
    ("working_memory", WORKING, 0),
    ("recent_turns", RECENT, 1),
    ("memories", MEMORIES, 1),
    ("recalled", RECALLED, 1),
)


def plan(request: ContextRequest, kinds: KindRegistry) -> list[Use]:
    """The request's sources; as of a date (`as_of`), the block opens with it."""
    uses = _named_or_default(request, kinds)
    if request.as_of is not None:
        uses = [Use(ASKED_ON, 0, "as_of", TITLES["as_of"], -1), *uses]
    # the observation log opens the block wherever it is named: the prefix a prompt cache keeps
    uses.sort(key=lambda u: u.source is not OBSERVED)
    for slot, use in enumerate(uses):
        use.slot, use.as_of = slot, request.as_of
    return uses


def _named_or_default(request: ContextRequest, kinds: KindRegistry) -> list[Use]:
    if not request.sources:
        return [Use(src, i, name, TITLES[name], prio) for i, (name, src, prio) in enumerate(DEFAULT)]
    allowed = ["turns", "working_memory", "memories", "observations", *kinds.names()]
    unknown = [s.source for s in request.sources if s.source not in allowed]
    if unknown:
        raise UnknownKind(
            f"unknown context source(s) {', '.join(repr(u) for u in unknown)}; allowed: {', '.join(allowed)}",
            {"path": "sources", "allowed": allowed},
        )
    return [_named(spec, i) for i, spec in enumerate(request.sources)]


def _named(spec: ContextSource, slot: int) -> Use:
    source: Source
    if spec.source == "working_memory":
        source, name = WORKING, "working_memory"
    elif spec.source == "turns":
        source, name = (RECENT, "turns") if spec.mode == "text" else (RECALLED, "recalled")
    elif spec.source == "memories":
        source, name = MEMORIES, "memories"
    elif spec.source == "observations":
        source, name = OBSERVED, "observations"
    else:
        source, name = Memories(spec.source), spec.source
    title = TITLES.get(name) or f"## {name.capitalize()} memories"
    return Use(
        source,
        slot,
        name,
        title,
        priority=-2 if source is OBSERVED else slot,
        top_k=spec.top_k,
        mode=spec.mode,
        filter=dict(spec.filter),
        min_score=spec.min_score,
        spec=spec,
    )
