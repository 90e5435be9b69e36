"""Custom memory types: the declaration is validated with clear errors; the kind built from it validates,
keys and compares payloads; an incompatible change of a created type is named change by change."""

from __future__ import annotations

from typing import Any

import pytest

from mongomem.config import ConfigError, parse_project_config, queue_name, settings_from_env
from mongomem.kinds import KindError, project_registry
from mongomem.kinds.declared import DeclaredType, digest, problems
from mongomem.kindschema import incompatible_changes

TICKET: dict[str, Any] = {
    "name": "ticket",
    "schema": {
        "type": "object",
        "properties": {
            "ticket_id": {"type": "string", "description": "the ticket's id, e.g. OPS-12"},
            "status": {"type": "string", "enum": ["open", "blocked", "done"]},
            "summary": {"type": "string", "minLength": 1},
            "hours": {"type": "number"},
        },
        "required": ["ticket_id", "status", "summary"],
    },
    "match_key": ["ticket_id"],
    "prompt": "Extract TICKETS only: work items the user mentions, with their id, status and a summary.",
    "visibility": "org",
}


DEEP: dict[str, Any] = {}
_node = DEEP
for _ in range(40):  # 40 levels of `items`: jsonschema's own schema check would recurse through them
    _node["items"] = {}
    _node = _node["items"]


def config(*types: dict[str, Any], **extraction: Any) -> Any:
    memory: dict[str, Any] = {"custom_types": list(types)}
    if extraction:
        memory["extraction"] = extraction
    return parse_project_config({"memory": memory})


def test_a_declared_type_is_enabled_and_registered_beside_the_built_in_kinds() -> None:
    cfg = config(TICKET)
    assert cfg.memory.enabled_kinds == [
        "semantic",
        "episodic",
        "procedural",
        "taxonomic",
        "preference",
        "ticket",
    ]
    kinds = project_registry(cfg.memory.custom_types)
    assert kinds.names()[-1] == "ticket" and kinds["ticket"].visibility == "org"
    # the deployed template's enabled list (no custom types in it) still extracts the declared ones
    settings = settings_from_env({"MONGOMEM_ENABLED_EXTRACTIONS": "semantic"}, project=cfg)
    assert settings.enabled_extractions == ["semantic", "ticket"] and settings.queue_kinds == [
        "semantic",
        "custom",
    ]
    assert queue_name("ticket") == "custom" and queue_name("semantic") == "semantic"
    # naming the list in the config decides
    assert config(TICKET, enabled=["ticket"]).memory.enabled_kinds == ["ticket"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": "semantic"}, "built-in memory type's name"),
        ({"name": "Ticket"}, "String should match pattern"),
        ({"match_key": ["owner"]}, "match_key field 'owner' is not a property of the schema"),
        ({"match_key": ["hours"]}, "match_key field 'hours' must be listed in schema.required"),
        (
            {"schema": {"type": "object", "properties": {"ticket_id": {"type": "strin"}}}},
            "not valid JSON Schema",
        ),
        ({"schema": {"type": "array", "items": {}}}, "schema.type must be 'object'"),
        ({"schema": {"type": "object", "properties": {"$x": {"type": "string"}}}}, "a field name is letters"),
        ({"prompt": "x" * 4097}, "at most 4096 characters"),
        ({"visibility": "public"}, "Input should be 'private' or 'org'"),
        (
            {"schema": {"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}},
            "local references",
        ),
        # schemas validation could never finish with, or that reach outside: named where they go wrong
        (
            {"schema": {**TICKET["schema"], "$defs": {"node": {"items": {"$ref": "#/$defs/node"}}}}},
            "schema.$defs.node.items.$ref: the reference is recursive",
        ),
        (
            {
                "schema": {
                    **TICKET["schema"],
                    "properties": {**TICKET["schema"]["properties"], "x": {"$ref": "#"}},
                }
            },
            "schema.properties.x.$ref: the reference is recursive",
        ),
        (
            {
                "schema": {
                    **TICKET["schema"],
                    "properties": {
                        **TICKET["schema"]["properties"],
                        "x": {"$dynamicRef": "https://example.com/s"},
                    },
                }
            },
            "schema.properties.x.$dynamicRef: $dynamicRef is not supported",
        ),
        (
            {
                "schema": {
                    **TICKET["schema"],
                    "properties": {**TICKET["schema"]["properties"], "x": {"$ref": "#/$defs/none"}},
                }
            },
            "does not resolve",
        ),
        (
            {"schema": {**TICKET["schema"], "properties": {**TICKET["schema"]["properties"], "x": DEEP}}},
            "the schema nests more than 16 levels deep",
        ),
        (
            {
                "schema": {
                    **TICKET["schema"],
                    "properties": {
                        **TICKET["schema"]["properties"],
                        "x": {"type": "string", "pattern": "(a)\\1"},
                    },
                }
            },
            "schema.properties.x.pattern: '(a)\\\\1' cannot run in linear time",
        ),
        (
            {"schema": {**TICKET["schema"], "patternProperties": {"^x": {}}}},
            "patternProperties is not supported",
        ),
    ],
)
def test_a_bad_declaration_is_refused_naming_its_path(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        config({**TICKET, **change})
    assert "memory.custom_types.0" in str(err.value) and message in str(err.value)


def test_at_most_five_types_each_named_once_and_enabled_names_must_exist() -> None:
    six = [{**TICKET, "name": f"type_{i}"} for i in range(6)]
    with pytest.raises(ConfigError, match="at most 5"):
        config(*six)
    with pytest.raises(ConfigError, match="declared twice: ticket"):
        config(TICKET, TICKET)
    with pytest.raises(ConfigError) as err:
        parse_project_config(
            {
                "memory": {
                    "custom_types": [TICKET],
                    "extraction": {"enabled": ["ticket", "tickets"]},
                    "snapshot": {"max_messages": 0},
                }
            }
        )
    text = str(err.value)
    # reported together with every other bad field, naming what is allowed
    assert (
        "memory.extraction.enabled" in text and "'tickets'" in text and "ticket" in text.split("allowed:")[1]
    )
    assert "memory.snapshot.max_messages" in text


def test_the_kind_validates_by_the_schema_keys_by_the_match_key_and_refuses_junk() -> None:
    kind = project_registry(config(TICKET).memory.custom_types)["ticket"]
    payload, seqs = kind.validate(
        {
            "ticket_id": "OPS-12",
            "status": "open",
            "summary": "Rotate the TLS certs",
            "extra": "dropped",
            "evidence_seqs": [2],
        }
    )
    assert payload == {
        "ticket_id": "OPS-12",
        "status": "open",
        "summary": "Rotate the TLS certs",
    } and seqs == [2]
    assert kind.key(payload) == kind.key({**payload, "ticket_id": "ops 12"}) == "ops 12"
    assert "ticket_id: OPS-12" in kind.text(payload)
    assert kind.same_content(payload, {**payload, "summary": "rotate the TLS certs."})
    assert not kind.same_content(payload, {**payload, "status": "done"})
    with pytest.raises(KindError) as bad:
        kind.validate({"ticket_id": "OPS-12", "status": "closed", "summary": "x", "hours": "two"})
    assert {d["path"] for d in bad.value.details} == {"status", "hours"} and bad.value.reason == "invalid"
    with pytest.raises(KindError) as junk:
        kind.validate({"ticket_id": "OPS-13", "status": "open", "summary": "N/A"})
    assert junk.value.reason == "junk" and junk.value.details[0]["path"] == "summary"
    # the LLM is told the declared fields and the evidence field
    assert set(kind.item_schema()["properties"]) == {
        "ticket_id",
        "status",
        "summary",
        "hours",
        "evidence_seqs",
    }


def test_compatible_and_incompatible_changes_of_a_created_type() -> None:
    old = TICKET["schema"]
    grown = {**old, "properties": {**old["properties"], "owner": {"type": "string"}}}
    assert incompatible_changes(old, ["ticket_id"], grown, ["ticket_id"]) == []
    relaxed = {**old, "required": ["ticket_id", "summary"]}
    assert incompatible_changes(old, ["ticket_id"], relaxed, ["ticket_id"]) == []
    retyped = {**old, "properties": {**old["properties"], "hours": {"type": "string"}}}
    changes = incompatible_changes(old, ["ticket_id"], retyped, ["ticket_id"])
    assert changes == ["field 'hours' changes type from ['number'] to ['string']"]
    dropped = {**old, "properties": {k: v for k, v in old["properties"].items() if k != "hours"}}
    assert incompatible_changes(old, ["ticket_id"], dropped, ["ticket_id"]) == ["field 'hours' is removed"]
    narrowed = {
        **old,
        "properties": {**old["properties"], "status": {"type": "string", "enum": ["open", "done"]}},
    }
    assert incompatible_changes(old, ["ticket_id"], narrowed, ["ticket_id"]) == [
        "field 'status' no longer allows ['blocked']"
    ]
    assert incompatible_changes(old, ["ticket_id"], old, ["ticket_id", "status"])[0].startswith(
        "match_key changes"
    )
    stricter = {**old, "required": [*old["required"], "hours"]}
    assert (
        "field 'hours' becomes required"
        in incompatible_changes(old, ["ticket_id"], stricter, ["ticket_id"])[0]
    )


def test_problems_compare_each_declaration_with_its_stored_one() -> None:
    from datetime import UTC, datetime

    when = datetime(2026, 11, 1, tzinfo=UTC)
    stored = {
        "ticket": DeclaredType(
            name="ticket",
            json_schema=TICKET["schema"],
            match_key=["ticket_id"],
            sha256=digest(TICKET["schema"], ["ticket_id"]),
            created_at=when,
            updated_at=when,
        )
    }
    same = config(TICKET).memory.custom_types
    assert problems(stored, same) == []
    retyped = {
        **TICKET,
        "schema": {
            **TICKET["schema"],
            "properties": {**TICKET["schema"]["properties"], "hours": {"type": "string"}},
        },
    }
    found = problems(stored, config(retyped).memory.custom_types)
    assert (
        len(found) == 1 and "custom type 'ticket' (created 2026-11-01) cannot change incompatibly" in found[0]
    )
    assert "declare a type of another name" in found[0]
