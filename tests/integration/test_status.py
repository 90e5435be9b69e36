"""GET /v1/status: ready only when an LLM and an embedding provider are usable, and says why not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mongomem.config import parse_project_config
from mongomem.local.queue import local_queue_factory
from mongomem.runtime import Services, configure
from tests.conftest import load_event, load_function


@pytest.fixture(scope="module")
def api() -> Any:
    return load_function("memory_api")


def status_of(api: Any, ctx: Any, svc: Services) -> dict[str, Any]:
    configure(svc)
    try:
        event = load_event("memory_list.json")
        event["rawPath"] = event["requestContext"]["http"]["path"] = "/v1/status"
        event.pop("queryStringParameters", None)
        response = api.lambda_handler(event, ctx)
    finally:
        configure(None)
    assert response["statusCode"] == 200
    return json.loads(response["body"])


def test_offline_llm_and_hashing_embedder_are_ready_and_say_so(
    make_settings: Any, api: Any, ctx: Any
) -> None:
    cfg = parse_project_config(
        {"memory": {"providers": {"llm": {"kind": "offline"}, "embeddings": {"kind": "hashing", "dim": 64}}}}
    )
    body = status_of(api, ctx, Services(make_settings(project=cfg), queue_factory=local_queue_factory))
    assert body["ready"] is True and body["reasons"] == []
    assert body["llm"]["offline"] is True and body["llm"]["kind"] == "offline"
    assert body["embeddings"] == {"model": "hashing-v1", "dim": 64, "ready": True, "reason": ""}
    assert body["extraction"]["enabled"] == ["semantic", "episodic", "procedural", "taxonomic"]


def test_llm_without_its_key_is_not_ready_and_names_the_variable(
    make_settings: Any, api: Any, ctx: Any
) -> None:
    cfg = parse_project_config(
        {
            "memory": {
                "providers": {
                    "llm": {"kind": "openai-compatible", "model": "gpt-4o-mini", "api_key_env": "MY_LLM_KEY"},
                    "embeddings": {"kind": "hashing"},
                }
            }
        }
    )
    body = status_of(api, ctx, Services(make_settings(project=cfg), queue_factory=local_queue_factory))
    assert body["ready"] is False
    assert body["llm"]["ready"] is False and "MY_LLM_KEY" in body["llm"]["reason"]
    assert any(r.startswith("llm:") for r in body["reasons"])
