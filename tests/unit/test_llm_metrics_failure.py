"""A metrics failure never fails an LLM call, and it is said: a WARNING, not silence."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mongomem import observability
from mongomem.ports import LLMResult
from mongomem.providers import record_llm_metrics


def test_a_metrics_failure_is_a_warning_and_the_call_goes_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(**_: Any) -> None:
        raise ValueError("metric namespace missing")

    monkeypatch.setattr(observability.metrics, "add_metric", broken)
    with caplog.at_level(logging.WARNING, logger="mongomem.providers"):
        record_llm_metrics(LLMResult(text="{}", model="m", input_tokens=3, output_tokens=2, latency_ms=5.0))
    assert [r.getMessage() for r in caplog.records] == ["LLM metrics not recorded: metric namespace missing"]
