"""What tests/integration/test_contributing_recipes.py checks of a recipe, run in a child interpreter
whose `mongomem` is the copy the recipe was applied to (RECIPE_ROOT); prints its findings as JSON."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(os.environ.get("RECIPE_ROOT", "."))


def main(recipe: str) -> None:
    import mongomem.kinds

    # the copy, not the checkout, is what runs
    assert str(mongomem.kinds.__file__).startswith(str(ROOT)), mongomem.kinds.__file__
    checks: dict[str, Callable[[], dict[str, Any]]] = {
        "kind": kind,
        "store": store,
        "provider": provider,
        "endpoint": endpoint,
    }
    findings = checks[recipe]()
    # and the code the recipe added keeps the house rules a unit test checks
    from tests.unit.test_lazy_imports import unmeasured

    findings["unmeasured"] = unmeasured()
    print(json.dumps(findings))


def settings(**overrides: Any) -> Any:
    from mongomem.config import settings_from_env
    from mongomem.kindnames import BuiltinKind

    env = {
        "MONGOMEM_MONGODB_URI": os.environ["RECIPE_MONGO_URI"],
        "MONGOMEM_DB_NAME": f"r_{uuid.uuid4().hex[:12]}",
    }
    for t in BuiltinKind:
        env[f"MONGOMEM_QUEUE_URL_{t.value.upper()}"] = f"local:extract-{t.value}"
    return settings_from_env(env, **overrides)


def function(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"fn_{name}", ROOT / "functions" / name / "app.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def record(svc: Any, user: str, session: str, turns: list[tuple[str, str]]) -> Any:
    from mongomem.models.common import Scope
    from mongomem.models.turns import RecordTurnsRequest

    scope = Scope(tenant="default", user_id=user)
    req = RecordTurnsRequest.model_validate({"turns": [{"role": r, "content": c} for r, c in turns]})
    svc.recorder.record(scope, session, req)
    return scope


def kind() -> dict[str, Any]:
    """The new kind is registered like the built-in ones and its extraction stores its memories."""
    from mongomem.config import parse_project_config
    from mongomem.kindnames import builtin_names
    from mongomem.kinds.registry import BUILTIN
    from mongomem.local.queue import local_queue_factory
    from mongomem.offline.embed_hashing import HashingEmbedder
    from mongomem.offline.llm_scripted import ScriptedLLM
    from mongomem.runtime import Services, configure
    from mongomem.vectors.embedded import EmbeddedIndex
    from tests.conftest import Ctx
    from tests.helpers import load_event

    answer = {"items": [{"goal": "run a marathon", "by_when": "next spring", "evidence_seqs": [1]}]}
    cfg = parse_project_config({"memory": {"extraction": {"enabled": ["goal"]}}})
    svc = Services(
        settings(project=cfg, enabled_extractions=["goal"]),
        llm=ScriptedLLM({"goal": [json.dumps(answer)]}),
        embedder=HashingEmbedder(dim=64),
        vector_index=EmbeddedIndex(ROOT / "vectors", use_numpy=False),
        queue_factory=local_queue_factory,
    )
    configure(svc)
    try:
        scope = record(svc, "ana", "s1", [("user", "I want to run a marathon by next spring.")])
        cut = svc.promoter.flush(scope, "s1")[0]
        message = load_event("extract_sqs.json")["Records"][0]
        body = json.dumps({"snapshot_id": cut.snapshot_id, "type": "goal"})
        result = function("extract").lambda_handler({"Records": [dict(message, body=body)]}, Ctx())
        assert result == {"batchItemFailures": []}, result
        found = [{"key": d["key"], "text": d["text"]} for d in svc.memory_store.coll.find({"type": "goal"})]
    finally:
        configure(None)
        svc.database.drop()
    registered = [k.name for k in BUILTIN] == builtin_names()
    return {"registered": registered, "memories": found}


def store() -> dict[str, Any]:
    """The new store passes the contract suite of what it implements, and the root builds it."""
    from mongomem.models.common import utcnow
    from mongomem.models.keys import ApiKey
    from mongomem.runtime import Services

    contract = run_suite("tests/contract/test_api_key_repository.py", "cached")
    svc = Services(settings())
    try:
        keys = svc.api_keys
        key = ApiKey(
            key_id="0123456789abcdef", tenant="acme", kind="memory_service", hash="h", created_at=utcnow()
        )
        keys.insert(key)
        first = keys.get(key.key_id)
        assert first is not None and first.revoked_at is None
        getattr(keys, "inner", keys).revoke(key.key_id, utcnow())  # behind the cache's back
        again = keys.get(key.key_id)
        cached = again is not None and again.revoked_at is None
    finally:
        svc.database.drop()
    return {"contract": contract, "built": type(keys).__name__, "cached": cached}


def run_suite(path: str, implementation: str) -> str:
    """Run a contract suite for one implementation in this process, on the parent's database server."""
    import pytest

    import mongomem.local.mongod as mongod

    class Running:
        """Stands for the suite's own server: the parent's is running already."""

        uri = os.environ["RECIPE_MONGO_URI"]

        def __init__(self, *_: Any) -> None: ...

        def start(self) -> Running:
            return self

        def stop(self) -> None: ...

    class Count:
        def __init__(self) -> None:
            self.passed = self.failed = 0

        def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
            self.passed += report.when == "call" and report.passed
            self.failed += report.failed

    mongod.EmbeddedMongo = Running  # type: ignore[misc, assignment]
    count = Count()
    args = [path, "-k", implementation, "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
    pytest.main(args, plugins=[count])
    return f"{count.passed} passed" + (f", {count.failed} failed" if count.failed else "")


def provider() -> dict[str, Any]:
    """The new provider is the one the project config names."""
    from mongomem.config import parse_project_config
    from mongomem.providers.factory import embedder_from_config

    cfg = parse_project_config({"memory": {"providers": {"embeddings": {"kind": "letters"}}}})
    embedder = embedder_from_config(cfg.memory.providers.embeddings, {})
    vector = embedder.embed(["aaa bbbb"])[0]
    return {
        "built": type(embedder).__name__,
        "model": embedder.model,
        "vector": [round(v, 6) for v in vector[:2]],
        "ready": embedder.ready()[0],
    }


def endpoint() -> dict[str, Any]:
    """The memory API function answers the new route, the OpenAPI document has it, the template too."""
    sys.path.insert(0, str(ROOT / "tools"))
    from mongomem.api.docs import openapi_document
    from mongomem.local.queue import local_queue_factory
    from mongomem.runtime import Services
    from tests.conftest import Ctx
    from tests.helpers import http_event, installed, invoke
    from tests.unit.test_template_routes import test_every_documented_route_is_declared_in_the_template

    with installed(Services(settings(), queue_factory=local_queue_factory)) as svc:
        record(svc, "ana", "s1", [("user", "Hello")])
        record(svc, "ana", "s2", [("user", "Hello again")])
        event = http_event("GET", "/v1/users/ana/session-count", tenant="default")
        status, body = invoke(function("memory_api"), Ctx(), event)
    documented = "/v1/users/{user_id}/session-count" in openapi_document()["paths"]
    try:
        test_every_documented_route_is_declared_in_the_template()
        undeclared = []
    except AssertionError as e:
        undeclared = [str(e).splitlines()[0]]
    return {"status": status, "body": body, "documented": documented, "undeclared": undeclared}
