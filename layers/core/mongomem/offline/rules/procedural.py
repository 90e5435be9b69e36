"""Procedural rules: numbered and bulleted lists of steps, and "first ..., then ..., finally ..."
prose, in user and assistant turns, named by the nearest "how to X" phrase."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mongomem.extraction.proposal import TurnView
from mongomem.kinds.meaning import norm
from mongomem.offline.rules.text import capitalise, clip, squash, strip_punct
from mongomem.offline.rules.words import IMPERATIVES

_STEP_PREFIX = re.compile(
    r"^(?i:(?:step\s*\d+\s*[:.)-]\s*)?(?:(?:first(?:ly)?|then|next|after\s+that|afterwards|finally|lastly|now|"
    r"and|also|carefully|gently|slowly|quickly|simply|just|you|we)\b[,:]?\s*)*)"
)
_NUM_LINE = re.compile(r"^(?P<indent>\s*)(?i:step\s*)?(?P<n>\d{1,2})\s*[.):]\s+(?P<text>.*\S)")
_BULLET_LINE = re.compile(r"^(?P<indent>\s*)(?P<mark>[-*\u2022\u2023\u25e6])\s+(?P<text>.*\S)")
_INLINE_NUM = re.compile(r"(?:^|(?<=[\s:]))(?P<n>\d{1,2})[.)]\s+")
_HEADER_WORDS = re.compile(
    r"\b(?i:steps?|instructions?|process|procedure|recipe|method|here's\s+how|here\s+is\s+how|how\s+to|how\s+do|"
    r"how\s+can|how\s+should|directions|checklist|routine)\b"
)
# (pattern, "verb" | "noun"): "how to X" names a procedure "X", "the recipe for X" one "Recipe for X"
_NAME_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            r"\b(?i:how\s+(?:to|do\s+(?:I|you|we|i)|can\s+(?:I|you|we|i)|should\s+(?:I|we|i)|would\s+(?:I|you|i)))"
            r"\s+(?P<x>[^.?!:\n]+)"
        ),
        "verb",
    ),
    (re.compile(r"\b(?i:steps?\s+(?:to|for))\s+(?P<x>[^.?!:\n]+)"), "verb"),
    (
        re.compile(
            r"\b(?i:the\s+)?(?P<kind>(?i:process|procedure|recipe|instructions|method|routine|checklist))"
            r"\s+(?i:for|to)\s+(?P<x>[^.?!:\n]+)"
        ),
        "noun",
    ),
    (re.compile(r"(?:^|(?<=[.!?\n]))\s*(?i:to)\s+(?P<x>[a-z][^,.:\n]{2,80})\s*[:,]"), "verb"),
]
_NOT_AN_ORDINAL = r"(?!\s+(?:time|thing|one|place|step|few|day|week)\b)"
_FIRST = re.compile(rf"(?<![Aa]t )(?<![Tt]he )\b(?i:first(?:ly)?)\b{_NOT_AN_ORDINAL}")
_PROSE_MARKER = re.compile(
    r"(?<![Aa]t )(?<![Tt]he )(?<![Mm]y )(?<![Bb]ack )(?<![Ss]ince )(?<![Uu]ntil )(?<![Bb]y )\b"
    r"(?P<mk>(?i:first(?:ly)?(?:\s+of\s+all)?|then|next|after\s+that|afterwards|finally|lastly))\b"
    rf"{_NOT_AN_ORDINAL}[,:]?\s*"
)


@dataclass
class _Block:
    steps: list[str]
    start: int  # character offset of the list in the turn text


def _list_blocks(text: str) -> list[_Block]:
    """Numbered (1..n in order) and bulleted runs of lines; indented lines continue the last step."""
    blocks: list[_Block] = []
    cur: list[str] = []
    kind: str | None = None
    expect, start, blanks, offset = 1, 0, 0, 0

    def flush() -> None:
        nonlocal cur, kind, expect
        if len(cur) >= 2:
            blocks.append(_Block(cur, start))
        cur, kind, expect = [], None, 1

    for line in text.split("\n"):
        at, offset = offset, offset + len(line) + 1
        if not line.strip():
            blanks += 1
            if blanks > 1:
                flush()
            continue
        blanks = 0
        num = _NUM_LINE.match(line)
        bullet = _BULLET_LINE.match(line)
        if num and not (kind == "num" and num.group("indent") and cur):
            n = int(num.group("n"))
            if kind == "num" and n == expect:
                cur.append(num.group("text"))
                expect += 1
                continue
            flush()
            if n == 1:
                kind, cur, expect, start = "num", [num.group("text")], 2, at
            continue
        if bullet and kind in {None, "bullet"} and not bullet.group("indent"):
            if kind is None:
                kind, cur, start = "bullet", [], at
            cur.append(bullet.group("text"))
            continue
        if cur and (line[:1].isspace() or bullet):
            cur[-1] = f"{cur[-1]}; {(bullet.group('text') if bullet else line).strip()}"
            continue
        flush()
        inline = list(_INLINE_NUM.finditer(line))
        if len(inline) >= 2 and [int(x.group("n")) for x in inline] == list(range(1, len(inline) + 1)):
            parts = [line[a.end() : b.start()] for a, b in itertools.pairwise(inline)]
            parts.append(line[inline[-1].end() :])
            blocks.append(_Block([p.strip() for p in parts], at + inline[0].start()))
    flush()
    return blocks


def _prose_block(text: str) -> list[_Block]:
    """ "First ..., then ..., and finally ..." written as prose (one per turn)."""
    flat = re.sub(r"\s*\n\s*", " ", text)
    for first in _FIRST.finditer(flat):
        segment = flat[first.start() :]
        markers = list(_PROSE_MARKER.finditer(segment))
        if len(markers) < 2 or not re.match(r"(?i:first)", markers[0].group("mk")):
            continue
        steps: list[str] = []
        for a, b in zip(markers, [*markers[1:], None], strict=False):
            piece = segment[a.end() : b.start() if b is not None else len(segment)]
            stop = bool(re.match(r"(?i:finally|lastly)", a.group("mk")))
            sentence_end = re.search(r"[.!?](?:\s|$)", piece)
            if sentence_end:  # a sentence ends the list unless the next marker follows right after it
                stop = stop or b is None or bool(segment[a.end() + sentence_end.end() : b.start()].strip())
                piece = piece[: sentence_end.start()]
            piece = re.sub(r"[\s,;]*(?:\b(?i:and))?\s*$", "", piece).strip(" ,;")
            if piece:
                steps.append(piece)
            if stop:
                break
        return [_Block(steps, first.start())] if len(steps) >= 2 else []
    return []


def _clean_step(step: str) -> str:
    step = _STEP_PREFIX.sub("", step.strip())
    return capitalise(clip(strip_punct(step) if step.endswith((".", ";", ",")) else step.strip(), 1000))


def _imperative(step: str) -> bool:
    first = re.match(r"[A-Za-z']+", _STEP_PREFIX.sub("", step.strip()))
    return first is not None and first.group(0).lower() in IMPERATIVES


def _named(text: str) -> tuple[str, str] | None:
    """(name, when_to_use) from the last "how to X" / "To X:" / "the process for X" phrase in `text`."""
    best: tuple[int, str, str] | None = None
    for pattern, kind in _NAME_PATTERNS:
        for m in pattern.finditer(text):
            x = strip_punct(re.split(r"\s+(?i:is|are|as\s+follows|below|goes)\b", m.group("x"))[0])
            x = re.sub(r"\b(?:I|i)\b", "you", re.sub(r"\b(?:my)\b", "your", x))
            words = x.split()
            if not words or len(words) > 10:
                continue
            x = " ".join(words)
            if kind == "noun":
                name, when = (
                    f"{m.group('kind').capitalize()} for {x}",
                    f"When you need the {m.group('kind').lower()} for {x}",
                )
            else:
                name, when = capitalise(x), f"When you need to {x}"
            if best is None or m.start() >= best[0]:
                best = (m.start(), name, when)
    return (best[1], best[2]) if best else None


def propose(turns: Sequence[TurnView]) -> list[dict[str, Any]]:
    """Procedures told in user and assistant turns; a list counts when it is headed ("how to",
    "steps", "recipe", ...) and has an imperative step, or when most of its steps are imperative."""
    procedures: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
    previous: TurnView | None = None
    for turn in turns:
        if turn.role not in {"user", "assistant"}:
            continue
        text = turn.content
        for block in _list_blocks(text) or _prose_block(text):
            preamble = text[: block.start]
            named = _named(preamble[-600:])
            evidence = [turn.seq]
            if named is None and previous is not None and previous.role != turn.role:
                named = _named(previous.content[-600:])  # "How do I ...?" asked by the other speaker
                evidence = [previous.seq, turn.seq] if named is not None else evidence
            headed = named is not None or bool(_HEADER_WORDS.search(preamble[-300:]))
            steps = [s for s in (_clean_step(s) for s in block.steps) if s]
            if len(steps) < 2 or sum(s.endswith("?") for s in steps) * 2 >= len(steps):
                continue  # a list of questions is not a procedure
            imperative = sum(_imperative(s) for s in block.steps)
            if not (headed and imperative >= 1) and imperative * 5 < len(steps) * 3:
                continue
            if named is None:
                lead = strip_punct(squash(_STEP_PREFIX.sub("", preamble.strip() or steps[0])))
                name = capitalise(" ".join(lead.split()[:6])) or steps[0][:60]
                named = (name, f'When a task like "{name}" comes up')
            key = (norm(named[0]), tuple(norm(s) for s in steps))
            if key in procedures:
                if turn.seq not in procedures[key]["evidence_seqs"]:
                    procedures[key]["evidence_seqs"].append(turn.seq)
                continue
            procedures[key] = {
                "name": clip(named[0], 200),
                "when_to_use": clip(named[1], 1000),
                "steps": steps,
                "evidence_seqs": evidence,
            }
        previous = turn
    return list(procedures.values())
