"""The "offline" LLM setting: no model at all; extraction runs the offline rules instead.

It answers no free-form request (reconciliation then decides by rules); the services see `offline`
and use the rules proposer (mongomem.extraction.proposers.RulesProposer) for extraction.
"""

from __future__ import annotations

from mongomem.ports import LLMError, LLMRequest, LLMResult


class OfflineLLM:
    name = "offline"
    offline = True

    def complete_json(self, request: LLMRequest) -> LLMResult:
        raise LLMError(
            "the offline setting has no LLM: extraction uses the offline rules, reconciliation rules"
        )

    def ready(self) -> tuple[bool, str]:
        return True, ""
