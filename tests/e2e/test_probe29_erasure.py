"""Issue 33's twenty-ninth probe, finding 6 (tests/e2e/test_probe29_findings.py lists it): an erased user's
words carried by a surviving org version. In a module of its own: it starts and stops a stack of its own, and
two local stacks in one process share the functions' configuration (`local.stack.configure`), so stopping
one beside the findings module's stack would leave that one without its database."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.e2e.probe_stack import answering_stack, call, config, unique, write

USERS = ("alice", "bob", "eve", "frank", "ivan")
CONFIG = config(org=("semantic",))


# -- 6. an erased user's words carried by a surviving org version stay in the data dir's files (MED) -------
def test_erasure_leaves_no_copy_of_words_an_org_version_carried(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """MED (erasure leaving copies). Ivan's one-user new org term {"term": "IVT<OWN>", "definition": "the
    ramp where trailers are sealed at night", "aliases": ["ZQXALIAS<OWN>"]} -> 201 ADD, org; the tenant key
    corrects it {"term": "IVT<OWN>", "definition": "... at dawn"} -> 201 UPDATE, which carries ivan's alias
    (`TaxonomicKind.updated`). DELETE /v1/users/ivan -> 200 {"org_memories_deleted": 1,
    "org_memories_updated": 1, ...}: the surviving version loses the alias (eve's search shows "IVT<OWN>: the
    ramp ... at dawn"). But 10 s later the data dir still holds "ZQXALIAS<OWN>" outside WiredTiger's table
    files (the vector index's vectors.sqlite3, and the database's journal), and after the stack stopped
    (its stop rebuilds the table files) the vector index's file still holds it."""
    from tests.e2e.test_erasure_copies import files_holding, outside_tables

    own = unique().upper()
    alias = f"ZQXALIAS{own}"
    root = tmp_path_factory.mktemp("probe29-erase")
    stacks = answering_stack(root, USERS, CONFIG)
    stack = next(stacks)
    try:
        term: dict[str, Any] = {
            "term": f"IVT{own}",
            "definition": "the ramp where trailers are sealed at night",
            "aliases": [alias],
        }
        status, written = write(stack, stack.users["ivan"], "taxonomic", term)
        assert (status, written["decision"], written["memory"]["visibility"]) == (201, "ADD", "org"), written
        fixed: dict[str, Any] = {
            "user_id": "alice",
            "type": "taxonomic",
            "payload": {**term, "definition": term["definition"].replace("night", "dawn")},
        }
        fixed["payload"].pop("aliases")
        status, written = call(stack, stack.tenant, "POST", "/v1/memories", fixed)
        assert (status, written["decision"], written["memory"]["payload"]["aliases"]) == (
            201,
            "UPDATE",
            [alias],
        )
        status, erased = call(stack, stack.tenant, "DELETE", "/v1/users/ivan")
        assert status == 200 and erased["erased"]["org_memories_updated"] == 1, erased
        status, found = call(
            stack, stack.users["eve"], "POST", "/v1/memories/search", {"query": f"IVT{own} ramp"}
        )
        assert status == 200 and alias not in json.dumps(found), found
        data = root / "data"
        deadline = time.monotonic() + 10
        while (held := outside_tables(files_holding(data, alias))) and time.monotonic() < deadline:
            time.sleep(0.5)
        running = held
    finally:
        next(stacks, None)  # stops the stack
    stopped = files_holding(data, alias)
    assert (running, stopped) == ([], []), (running, stopped)
