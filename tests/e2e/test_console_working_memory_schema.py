"""The console's working-memory editor in schema mode (its own stack: the mode is project configuration):
merge and replace follow the API's rules, and the API's validation errors are shown field by field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from mongomem.identity.service import create_key
from mongomem.local.stack import LocalStack
from tests.e2e.browser import Tab, api, sign_in

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string"},
        "city": {"type": "string"},
        "trip": {
            "type": "object",
            "properties": {"dest": {"type": "string"}, "nights": {"type": "integer", "minimum": 1}},
        },
    },
}


@pytest.fixture(scope="module")
def schema_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalStack, str]]:
    root = tmp_path_factory.mktemp("console-schema")
    config = root / "project-config.yaml"
    config.write_text(
        "memory:\n  extraction: {enabled: []}\n  providers: {embeddings: {kind: hashing, dim: 64}}\n"
        f"  working_memory: {{schema: {json.dumps(SCHEMA)}}}\n"
    )
    stack = LocalStack(data_dir=root / "data", port=0, scan_seconds=3600, config_file=config).start()
    try:
        key = create_key(stack.keys, "acme", "memory_service")[0]
        yield stack, key
    finally:
        stack.stop()


def editor_json(tab: Tab) -> Any:
    return json.loads(tab.page.input_value("[data-testid=wm-editor]"))


def test_schema_mode_merges_replaces_and_shows_each_validation_error(
    schema_stack: tuple[LocalStack, str], tab: Tab
) -> None:
    stack, key = schema_stack
    page = tab.page
    data = {"name": "Ana", "city": "Lisbon", "trip": {"dest": "Porto", "nights": 2}}
    assert api(stack, key, "PUT", "/v1/working-memory?user_id=ana", {"data": data})[0] == 200
    sign_in(tab, stack.url, key)
    page.goto(f"{stack.url}/console#/users/ana/working-memory")
    page.wait_for_selector("[data-testid=wm-merge]")
    assert "schema mode · version 1" in page.inner_text("[data-testid=wm-meta]")
    assert editor_json(tab) == data
    # Merge: objects merge key by key, null removes a field, the rest is kept
    page.fill("[data-testid=wm-editor]", json.dumps({"city": "Porto", "trip": {"nights": 3}, "name": None}))
    page.click("[data-testid=wm-merge]")
    page.wait_for_selector("[data-testid=wm-saved]")
    merged = {"city": "Porto", "trip": {"dest": "Porto", "nights": 3}}
    assert editor_json(tab) == merged
    assert api(stack, key, "GET", "/v1/working-memory?user_id=ana")[1]["data"] == merged
    tab.shot("schema-merged")
    # A merge the schema refuses: every broken field is listed, nothing is stored
    page.fill("[data-testid=wm-editor]", json.dumps({"trip": {"nights": 0}, "shoe_size": 38}))
    page.click("[data-testid=wm-merge]")
    page.wait_for_selector("[data-testid=wm-feedback] [data-testid=error]")
    error = page.inner_text("[data-testid=wm-feedback] [data-testid=error]")
    assert "trip.nights" in error and "shoe_size" in error
    stored = api(stack, key, "GET", "/v1/working-memory?user_id=ana")[1]
    assert stored["data"] == merged and stored["version"] == 2
    tab.shot("schema-invalid")
    # Text that is not JSON never leaves the page
    sent = len([r for r in tab.requests if r.method == "PATCH"])
    page.fill("[data-testid=wm-editor]", "{city: Porto")
    page.click("[data-testid=wm-merge]")
    page.wait_for_selector("[data-testid=wm-feedback] [data-testid=error]")
    assert "not hold valid JSON" in page.inner_text("[data-testid=wm-feedback]")
    assert len([r for r in tab.requests if r.method == "PATCH"]) == sent
    # Replace: the JSON becomes the whole memory
    page.fill("[data-testid=wm-editor]", json.dumps({"name": "Ana"}))
    page.click("[data-testid=wm-replace]")
    page.wait_for_selector("[data-testid=wm-saved]")
    assert api(stack, key, "GET", "/v1/working-memory?user_id=ana")[1]["data"] == {"name": "Ana"}
    assert "version 3" in page.inner_text("[data-testid=wm-meta]")
    assert tab.errors == [] and tab.violations() == []
