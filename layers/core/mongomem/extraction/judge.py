"""An LLM's call on an ambiguous match by meaning: the prompt, the request, the answer's schema.

The writer (mongomem.longterm.write) asks a `Judge` only when its rules leave a match undecided; what
the answer may change is decided there (`decide`), never here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import ValidationError

from mongomem.errors import ExtractionFailed
from mongomem.extraction.answers import NoJSON, first_json
from mongomem.extraction.schemas import ReconcileAnswer, json_schema
from mongomem.longterm.write.decision import Judgement, NewMemory
from mongomem.models.memory import MemoryRecord
from mongomem.ports import LLMProvider, LLMRequest

SYSTEM = "You reconcile an agent's long-term memories. Answer with JSON only."


def prompt(new: NewMemory, candidates: Sequence[tuple[float, MemoryRecord]]) -> str:
    listing = [
        {"id": c.memory_id, "key": c.key, "text": c.text, "payload": c.payload, "score": round(s, 4)}
        for s, c in candidates
    ]
    return (
        "A new memory was extracted. Decide whether it is new (ADD) or the same thing as one candidate "
        "restated (REINFORCE). A candidate with another value (another number, date, name or time) is not "
        "the same thing.\n\n"
        f"New memory ({new.kind.name}): {json.dumps(new.payload, ensure_ascii=False)}\n\n"
        f"Candidates:\n{json.dumps(listing, ensure_ascii=False, indent=1)}"
    )


class LLMJudge:
    def __init__(self, llm: LLMProvider) -> None:
        self.llm = llm

    def judge(
        self, new: NewMemory, candidates: Sequence[tuple[float, MemoryRecord]], deadline: float | None
    ) -> Judgement:
        result = self.llm.complete_json(
            LLMRequest(
                task="reconcile",
                system=SYSTEM,
                prompt=prompt(new, candidates),
                schema=json_schema(ReconcileAnswer),
                schema_name="reconcile",
                max_tokens=512,
                deadline=deadline,
                example='{"decision": "ADD", "target_id": null, "reason": "<why>"}',
            )
        )
        try:
            answer = ReconcileAnswer.model_validate(first_json(result.text))
        except (ValidationError, NoJSON) as exc:
            raise ExtractionFailed(
                f"the reconciliation answer did not match its schema: {exc}", reason="not_json"
            ) from exc
        return Judgement(answer.decision, answer.target_id, answer.reason)
