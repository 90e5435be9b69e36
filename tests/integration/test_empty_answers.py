"""An extractor that answers nothing is told, never a quiet "done" (issue 31, point 4): through the real
extraction handler on a real MongoDB-compatible server, an empty answer where the offline rules find facts
is recorded as `empty_answer`, three of them with no answer holding an item make a WARNING (once) and the
`/v1/status` figure; small talk is `nothing_found`; a model that answers is never suspect."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mongomem.cli.memory import render_status
from mongomem.config import parse_project_config
from mongomem.extraction.watch import suspect_empty
from mongomem.local.queue import local_queue_factory
from mongomem.models.common import Scope
from mongomem.models.turns import RecordTurnsRequest
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.offline.llm_scripted import ScriptedLLM
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex
from tests.conftest import load_event, load_function

ANA = Scope(tenant="default", user_id="user-7")  # the user of the API events
KINDS = ["semantic", "episodic"]
EMPTY = '{"items": []}'
WARNING = "the extractor answers nothing where the offline rules find facts"

FACTS = [
    [
        ("user", "I moved to Lisbon, my home airport is LIS now."),
        ("assistant", "Noted: LIS from now on."),
    ],
    [
        ("user", "Yesterday I started a new job at Acme Corp as a product designer."),
        ("assistant", "Good to know."),
    ],
    [
        ("user", "Last Saturday I ran the Porto half marathon with my brother Rui."),
        ("assistant", "Congratulations!"),
    ],
    [
        ("user", "Last week I adopted a dog named Rex, and I live in Porto now."),
        ("assistant", "Congratulations on Rex!"),
    ],
]
SMALL_TALK = [
    ("user", "Hi! How are you today?"),
    ("assistant", "Good, thanks! And you?"),
    ("user", "Fine, thanks. Nice weather, right?"),
    ("assistant", "Lovely indeed."),
]
REAL = {
    "semantic": {
        "items": [{"subject": "user", "attribute": "home airport", "value": "LIS", "evidence_seqs": [1]}]
    },
    "episodic": {
        "items": [{"title": "Moved to Lisbon", "summary": "The user moved to Lisbon.", "evidence_seqs": [1]}]
    },
}


@pytest.fixture
def stack(make_settings: Any, tmp_path: Path) -> Iterator[Any]:
    made: list[Services] = []

    def build(answers: dict[str, Any], with_rules: bool = False) -> Services:
        cfg = parse_project_config({"memory": {"extraction": {"enabled": KINDS, "with_rules": with_rules}}})
        svc = Services(
            make_settings(project=cfg, enabled_extractions=KINDS),
            llm=ScriptedLLM(
                {k: [json.dumps(v) if not isinstance(v, str) else v] for k, v in answers.items()}, loop=True
            ),
            embedder=HashingEmbedder(dim=64),
            vector_index=EmbeddedIndex(tmp_path / f"vectors-{len(made)}", use_numpy=False),
            queue_factory=local_queue_factory,
        )
        configure(svc)
        made.append(svc)
        return svc

    yield build
    configure(None)
    for svc in made:
        svc.database.drop()


@pytest.fixture(scope="module")
def extract_fn() -> Any:
    return load_function("extract")


@pytest.fixture(scope="module")
def api() -> Any:
    return load_function("memory_api")


def extract(svc: Services, extract_fn: Any, ctx: Any, session: str, turns: list[tuple[str, str]]) -> str:
    """Record and promote one session, then run every kind's message through the extraction function."""
    req = RecordTurnsRequest.model_validate({"turns": [{"role": r, "content": c} for r, c in turns]})
    svc.recorder.record(ANA, session, req)
    snapshot_id: str = svc.promoter.flush(ANA, session)[0].snapshot_id
    template = load_event("extract_sqs.json")["Records"][0]
    for kind in KINDS:
        record = dict(
            template,
            messageId=f"{session}-{kind}",
            body=json.dumps({"snapshot_id": snapshot_id, "type": kind}),
        )
        assert extract_fn.lambda_handler({"Records": [record]}, ctx) == {"batchItemFailures": []}
    return snapshot_id


def status(api: Any, ctx: Any) -> dict[str, Any]:
    event = load_event("memory_list.json")
    event["rawPath"] = event["requestContext"]["http"]["path"] = "/v1/status"
    event.pop("queryStringParameters", None)
    response = api.lambda_handler(event, ctx)
    assert response["statusCode"] == 200, response["body"]
    body: dict[str, Any] = json.loads(response["body"])
    return body


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelname == "WARNING" and WARNING in r.getMessage()]


def test_a_provider_answering_no_item_to_everything_is_a_warning_and_a_status_figure(
    stack: Any, extract_fn: Any, api: Any, ctx: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a provider that answers {"items": []} to every kind
    svc = stack({kind: EMPTY for kind in KINDS})
    # When two snapshots the offline rules find facts in are extracted
    first = extract(svc, extract_fn, ctx, "s1", FACTS[0])
    extract(svc, extract_fn, ctx, "s2", FACTS[1])
    # Then each kind's status says the model answered nothing while the rules found items
    semantic = svc.db["snapshots"].find_one(first)["extraction"]["semantic"]
    assert (
        semantic["status"] == "done"
        and semantic["outcome"] == "empty_answer"
        and semantic["rules_found"] >= 1
    )
    # ... and two are not yet a pattern: no warning, status not suspect
    assert warnings(caplog) == []
    assert status(api, ctx)["extraction"]["suspect_empty"]["suspect"] is False
    # When a third and a fourth are
    extract(svc, extract_fn, ctx, "s3", FACTS[2])
    extract(svc, extract_fn, ctx, "s4", FACTS[3])
    # Then one WARNING per kind, not one per message
    said = warnings(caplog)
    assert len(said) == len(KINDS), said
    # ... and /v1/status shows the figure, per kind and overall, with what to check
    figure = status(api, ctx)["extraction"]["suspect_empty"]
    assert figure["suspect"] is True
    assert figure["kinds"]["semantic"] == {"empty_answers": 4, "answered": 0, "suspect": True}
    assert "prompt override" in figure["hint"] and "structured_output" in figure["hint"]
    last_hour = status(api, ctx)["extraction"]["last_hour"]["semantic"]
    assert last_hour["outcomes"] == {"empty_answer": 4} and last_hour["suspect_empty"] == 4
    # ... and `mongomem memory status` says it, with what to check
    text = render_status({"target": "local stack", "service": status(api, ctx)})
    assert (
        "suspect: the model answers nothing in the last hour: episodic (4 empty), semantic (4 empty)" in text
    )
    assert "prompt override" in text and "structured_output" in text


def test_the_status_command_is_quiet_about_a_model_that_answers() -> None:
    service = {"ready": True, "extraction": {"enabled": ["semantic"], "suspect_empty": suspect_empty({})}}
    assert "suspect" not in render_status({"target": "local stack", "service": service})


def test_small_talk_is_nothing_found_not_suspect(
    stack: Any, extract_fn: Any, api: Any, ctx: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # Given the same provider answering nothing, and sessions of small talk the rules find nothing in
    svc = stack({kind: EMPTY for kind in KINDS})
    snapshot_ids = [extract(svc, extract_fn, ctx, f"talk-{i}", SMALL_TALK) for i in range(4)]
    # Then each is "nothing to remember", which is not an empty answer the rules contradict
    for kind in KINDS:
        row = svc.db["snapshots"].find_one(snapshot_ids[0])["extraction"][kind]
        assert row["outcome"] == "nothing_found" and row["rules_found"] == 0
    assert warnings(caplog) == []
    figure = status(api, ctx)["extraction"]["suspect_empty"]
    assert figure["suspect"] is False and "hint" not in figure
    assert figure["kinds"]["semantic"] == {"empty_answers": 0, "answered": 0, "suspect": False}


def test_a_model_that_answers_is_never_suspect(
    stack: Any, extract_fn: Any, api: Any, ctx: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a provider with real answers
    svc = stack(REAL)
    first = extract(svc, extract_fn, ctx, "s1", FACTS[0])
    for i, turns in enumerate(FACTS[1:], 2):
        extract(svc, extract_fn, ctx, f"s{i}", turns)
    # Then its answers are stored, nothing is said, and status is not suspect
    assert svc.db["snapshots"].find_one(first)["extraction"]["semantic"]["outcome"] == "stored"
    assert warnings(caplog) == []
    figure = status(api, ctx)["extraction"]["suspect_empty"]
    assert figure["suspect"] is False
    assert figure["kinds"]["semantic"]["answered"] == 4


def test_with_rules_the_users_statements_are_kept_and_an_empty_model_is_still_told(
    stack: Any, extract_fn: Any, api: Any, ctx: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # Given memory.extraction.with_rules and a model that answers nothing for every kind
    svc = stack({kind: EMPTY for kind in KINDS}, with_rules=True)
    ids = [extract(svc, extract_fn, ctx, f"s{i}", turns) for i, turns in enumerate(FACTS, 1)]
    # Then the offline rules' items for the user's own statements are stored beside the empty answer
    stored = [m["payload"] for m in svc.db["memories"].find({"type": "semantic", "status": "active"})]
    assert any(p.get("value") == "LIS" for p in stored), stored
    # ... and the model's silence is still an empty answer: the status, the warning and the figure
    row = svc.db["snapshots"].find_one(ids[0])["extraction"]["semantic"]
    assert row["outcome"] == "empty_answer" and row["rules_found"] >= 1 and row["memories"] >= 1
    assert len(warnings(caplog)) >= 1
    assert status(api, ctx)["extraction"]["suspect_empty"]["kinds"]["semantic"]["suspect"] is True


def test_with_rules_a_model_that_answers_keeps_its_items_and_the_rules_add_theirs(
    stack: Any, extract_fn: Any, ctx: Any
) -> None:
    # Given with_rules and a model that answers a fact of the first session
    svc = stack(
        {
            "semantic": {
                "items": [
                    {"subject": "user", "attribute": "lives in", "value": "Lisbon", "evidence_seqs": [1]}
                ]
            },
            "episodic": EMPTY,
        },
        with_rules=True,
    )
    first = extract(svc, extract_fn, ctx, "s1", FACTS[0])
    # Then the model's item and the rules' are both kept, and the kind answered
    values = {m["payload"].get("value") for m in svc.db["memories"].find({"type": "semantic"})}
    assert {"Lisbon", "LIS"} <= values, values
    assert svc.db["snapshots"].find_one(first)["extraction"]["semantic"]["outcome"] == "stored"
