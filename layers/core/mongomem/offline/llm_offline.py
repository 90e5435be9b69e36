"""The "offline" LLM setting: no model at all; extraction runs the offline rules instead.

It answers no request and declares no capability: reconciliation then decides by rules, and the
factory's `proposer_for` gives extraction the rules proposer (mongomem.offline.rules.RulesProposer).
"""

from __future__ import annotations

from mongomem.ports import LLMCapability, LLMError, LLMRequest, LLMResult


class OfflineLLM:
    name = "offline"
    capabilities: frozenset[LLMCapability] = frozenset()

    def complete_json(self, request: LLMRequest) -> LLMResult:
        raise LLMError(
            "the offline setting has no LLM: extraction uses the offline rules, reconciliation rules"
        )

    def ready(self) -> tuple[bool, str]:
        return True, ""
