"""The observer: a snapshot's user turns into dated observations, by the configured LLM or by the offline
rules (one line per user turn that states something about the user, dated with the turn's timestamp)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Protocol

from mongomem import markers
from mongomem.extraction.answers import first_json
from mongomem.models.common import as_utc
from mongomem.models.observations import Observation
from mongomem.models.turns import Turn
from mongomem.ports import LLMProvider, LLMRequest
from mongomem.retrieval.when import resolve_relative, stamp

# A statement in the speaker's own words about themselves: "I moved", "my sister", "we adopted".
FIRST_PERSON = re.compile(
    r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|myself|we|we're|we've|our|us)\b", re.IGNORECASE
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
MAX_CHARS = 300  # an observation's text at most
MIN_WORDS = 3
MAX_TURN_CHARS = 2000  # of each turn shown to the model


class ObserveFailed(Exception):
    """The observer's model gave no usable answer."""


class Observer(Protocol):
    def observe(self, turns: Sequence[Turn], deadline: float | None = None) -> list[Observation]: ...


def said_by_user(turns: Sequence[Turn]) -> list[tuple[Turn, str]]:
    """The user turns and their text without any span mongomem handed the agent (never learnt again)."""
    out = []
    for t in turns:
        if t.role != "user":
            continue
        text, _ = markers.strip(t.content or "")
        if text.strip():
            out.append((t, " ".join(text.split())))
    return out


def observation(turn: Turn, text: str, speaker: bool = True) -> Observation:
    """`text` as one line of the log (`speaker`: after who said it), relative dates resolved against the
    turn's day."""
    said = as_utc(turn.timestamp)
    text = resolve_relative(text.strip(), said.date())
    if len(text) > MAX_CHARS:
        text = text[: MAX_CHARS - 1].rstrip() + "…"
    return Observation(
        at=said,
        session_id=turn.session_id,
        seq=turn.seq,
        text=f"{turn.name or 'User'}: {text}" if speaker else text,
    )


class RulesObserver:
    """Offline: each user turn's sentences in the first person that are not questions, one line a turn."""

    def observe(self, turns: Sequence[Turn], deadline: float | None = None) -> list[Observation]:
        out = []
        for turn, text in said_by_user(turns):
            kept = [
                s
                for s in _SENTENCE.split(text)
                if FIRST_PERSON.search(s) and not s.rstrip().endswith("?") and len(s.split()) >= MIN_WORDS
            ]
            if kept:
                out.append(observation(turn, " ".join(kept[:3])))
        return out


SYSTEM = (
    "You keep an agent's observation log of a user. From the user's messages below, write what each one "
    "tells about the user (facts, events, plans, preferences, people in their life), as short third-person "
    "notes that keep names, numbers and dates. Skip greetings, questions and small talk. Cite the number "
    "in brackets of the message each note comes from. Answer with JSON only."
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "observations": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "seq": {"type": "integer"},
                    "text": {"type": "string", "maxLength": MAX_CHARS},
                },
                "required": ["seq", "text"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["observations"],
    "additionalProperties": False,
}


class LLMObserver:
    """The configured LLM's notes, each dated by the turn it cites (a note citing no user turn is dropped)."""

    def __init__(self, llm: LLMProvider) -> None:
        self.llm = llm

    def observe(self, turns: Sequence[Turn], deadline: float | None = None) -> list[Observation]:
        said = said_by_user(turns)
        if not said:
            return []
        by_seq = {t.seq: t for t, _ in said}
        prompt = "\n".join(
            f"[{t.seq}] {stamp(t.timestamp)} {t.name or 'User'}: {text[:MAX_TURN_CHARS]}" for t, text in said
        )
        request = LLMRequest(
            task="observe",
            system=SYSTEM,
            prompt=prompt,
            schema=SCHEMA,
            schema_name="observations",
            max_tokens=1024,
            deadline=deadline,
        )
        answer = self.llm.complete_json(request).text
        try:
            value = first_json(answer)
        except ValueError as exc:
            raise ObserveFailed(f"no JSON in the observer's answer: {answer[:80]!r}") from exc
        notes = value.get("observations") if isinstance(value, dict) else value
        if not isinstance(notes, list):
            raise ObserveFailed(f"no observations list in the answer: {json.dumps(value)[:80]}")
        out = []
        for note in notes:
            if not isinstance(note, dict):
                continue
            seq, text = note.get("seq"), note.get("text")
            if isinstance(seq, int) and seq in by_seq and isinstance(text, str) and text.strip():
                out.append(observation(by_seq[seq], text, speaker=False))
        return out
