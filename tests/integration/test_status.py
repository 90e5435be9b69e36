"""GET /v1/status: ready only when an LLM and an embedding provider are usable, and says why not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mongomem.config import BUILTIN_KINDS, parse_project_config
from mongomem.local.queue import local_queue_factory
from mongomem.models.common import Scope
from mongomem.models.turns import RecordTurnsRequest
from mongomem.runtime import Services, configure
from tests.conftest import load_event, load_function

ALL = [t.value for t in BUILTIN_KINDS]


@pytest.fixture(scope="module")
def api() -> Any:
    return load_function("memory_api")


def status_event(tenant: str | None = None, path: str = "/v1/status") -> dict[str, Any]:
    event = load_event("memory_list.json")
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event.pop("queryStringParameters", None)
    if tenant is not None:
        event["requestContext"]["authorizer"] = {"lambda": {"tenant": tenant, "kind": "memory_service"}}
    return event


def status_of(api: Any, ctx: Any, svc: Services, tenant: str | None = None) -> dict[str, Any]:
    configure(svc)
    try:
        response = api.lambda_handler(status_event(tenant), ctx)
    finally:
        configure(None)
    assert response["statusCode"] == 200
    result: dict[str, Any] = json.loads(response["body"])
    return result


HASHING = {"memory": {"providers": {"embeddings": {"kind": "hashing", "dim": 64}}}}


def record(svc: Services, tenant: str, session: str) -> None:
    request = RecordTurnsRequest.model_validate({"turns": [{"role": "user", "content": f"hi from {tenant}"}]})
    svc.recorder.record(Scope(tenant=tenant, user_id="u"), session, request)


def test_status_shows_only_the_callers_tenants_backlog(make_settings: Any, api: Any, ctx: Any) -> None:
    svc = Services(make_settings(project=parse_project_config(HASHING)), queue_factory=local_queue_factory)
    # Given one unpromoted session in tenant A, and in tenant B three sessions, one of them promoted
    record(svc, "t-a", "a0")
    for i in range(3):
        record(svc, "t-b", f"b{i}")
    svc.promoter.flush(Scope(tenant="t-b", user_id="u"), "b0")
    # When each tenant asks for the status
    a, b = status_of(api, ctx, svc, "t-a"), status_of(api, ctx, svc, "t-b")
    # Then each sees its own figures only
    assert (a["sessions_pending_promotion"], a["recall"]["pending_turns"]) == (1, 1)
    assert a["snapshots_pending_extraction"] == {} and a["backlog_scope"] == "tenant t-a"
    assert (b["sessions_pending_promotion"], b["recall"]["pending_turns"]) == (2, 3)
    assert b["snapshots_pending_extraction"] == {t: {"queued": 1} for t in ALL}
    # and a tenant with nothing sees nothing
    c = status_of(api, ctx, svc, "t-c")
    assert (
        c["sessions_pending_promotion"],
        c["recall"]["pending_turns"],
        c["snapshots_pending_extraction"],
    ) == (0, 0, {})
    svc.database.drop()


def test_in_lambda_a_request_without_an_authorizer_context_is_refused(
    make_settings: Any, api: Any, ctx: Any
) -> None:
    record_fn = load_function("record_turns")
    svc = Services(
        make_settings(project=parse_project_config(HASHING), in_lambda=True),
        queue_factory=local_queue_factory,
    )
    configure(svc)
    try:
        # a record call that reached the function without the authorizer's context
        response = record_fn.lambda_handler(load_event("record_turns_post.json"), ctx)
        assert response["statusCode"] == 401
        assert json.loads(response["body"])["error"]["code"] == "unauthorized"
        assert svc.db["turns"].count_documents({}) == 0 and svc.db["sessions"].count_documents({}) == 0
        assert api.lambda_handler(status_event(), ctx)["statusCode"] == 401
        # the public API document needs no caller; a request with the authorizer's context is served
        assert api.lambda_handler(status_event(path="/v1/openapi.json"), ctx)["statusCode"] == 200
        assert api.lambda_handler(status_event("acme"), ctx)["statusCode"] == 200
        event = load_event("record_turns_post.json")
        event["requestContext"]["authorizer"] = {"lambda": {"tenant": "acme", "kind": "memory_service"}}
        assert record_fn.lambda_handler(event, ctx)["statusCode"] == 201
        assert svc.db["turns"].find_one({})["tenant"] == "acme"
    finally:
        configure(None)
        svc.database.drop()


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
    assert body["extraction"]["enabled"] == ["semantic", "episodic", "procedural", "taxonomic", "preference"]


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


def test_status_shows_each_kinds_failures_refusals_and_last_error_of_the_last_hour(
    make_settings: Any, api: Any, ctx: Any
) -> None:
    from mongomem.offline.llm_scripted import ScriptedLLM

    # Given a model whose semantic answer is unusable twice (final) and whose episodic items are all invalid
    answers = {
        "semantic": ["not json", "still not json"],
        "episodic": [json.dumps({"items": [{"when": 3, "evidence_seqs": [1]}]})],
    }
    cfg = parse_project_config(
        {"memory": {"extraction": {"enabled": ["semantic", "episodic"]}, **HASHING["memory"]}}
    )
    svc = Services(
        make_settings(project=cfg, enabled_extractions=["semantic", "episodic"]),
        llm=ScriptedLLM(answers),
        queue_factory=local_queue_factory,
    )
    scope = Scope(tenant="t-h", user_id="u")
    svc.recorder.record(
        scope,
        "s1",
        RecordTurnsRequest.model_validate({"turns": [{"role": "user", "content": "I flew to Oslo"}]}),
    )
    (snap,) = svc.promoter.flush(scope, "s1")
    extract = load_function("extract")
    record = load_event("extract_sqs.json")["Records"][0]
    configure(svc)
    try:
        for kind in ("semantic", "episodic"):
            body = json.dumps({"snapshot_id": snap.snapshot_id, "type": kind})
            assert extract.lambda_handler({"Records": [dict(record, body=body)]}, ctx) == {
                "batchItemFailures": []
            }
    finally:
        configure(None)
    # When the tenant asks for the status
    report = status_of(api, ctx, svc, "t-h")
    last_hour = report["extraction"]["last_hour"]
    # Then each kind says what went wrong: the final failure with its reason, the refused items by reason
    semantic = last_hour["semantic"]
    assert semantic["failures"] == 1 and semantic["last_error"]["reason"] == "not_json"
    assert (
        semantic["last_error"]["final"] is True and semantic["last_error"]["snapshot_id"] == snap.snapshot_id
    )
    assert last_hour["episodic"] == {
        "done": 1,
        "failures": 0,
        "refused": {"invalid": 1},
        "outcomes": {"refused": 1},  # an answer whose every item was refused, not an empty one
        "suspect_empty": 0,
        "kept_private": {},
    }
    # and another tenant sees none of it
    assert status_of(api, ctx, svc, "t-other")["extraction"]["last_hour"] == {}
