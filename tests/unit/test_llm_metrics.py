"""An LLM call's usage metrics: one that cannot be recorded never fails the call, and is a WARNING naming
what failed (it was silently dropped)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mongomem import observability
from mongomem.ports import LLMResult
from mongomem.providers import record_llm_metrics


def test_a_metric_that_cannot_be_recorded_is_a_warning_not_a_failure(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refuse(**metric: Any) -> None:
        raise ValueError(f"{metric['name']} is not a number")

    monkeypatch.setattr(observability.metrics, "add_metric", refuse)
    with caplog.at_level(logging.WARNING, logger="mongomem.providers"):
        record_llm_metrics(LLMResult(text="{}", model="m", input_tokens=3, output_tokens=1))
    warned = [r for r in caplog.records if r.levelno == logging.WARNING and r.name == "mongomem.providers"]
    assert [r.getMessage() for r in warned] == [
        "LLM usage metrics not recorded (ValueError: LLMInputTokens is not a number)"
    ]
