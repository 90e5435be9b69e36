"""`x-mongomem-as-user` narrows any caller to one memory user and never widens one (docs/security.md
"The tenant's trust model"); the MCP server sends the API's own header name."""

from __future__ import annotations

from typing import Any

import pytest

from mongomem import mcp_server
from mongomem.api.identity import AS_USER_HEADER, principal_from_event
from mongomem.errors import Forbidden, InvalidInput
from mongomem.identity.principals import is_operator


class Open:
    in_lambda = False


def event(kind: str, fixed: str | None, header: str | None, name: str = AS_USER_HEADER) -> dict[str, Any]:
    context = {"tenant": "acme", "kind": kind, "key_id": "k1", **({"fixed_user_id": fixed} if fixed else {})}
    return {
        "requestContext": {"authorizer": {"lambda": context}},
        "headers": {name: header} if header is not None else {},
    }


def test_a_tenant_wide_key_is_narrowed_to_the_named_user() -> None:
    principal = principal_from_event(
        event("memory_service", None, "mcpuser", "X-Mongomem-As-User"), "default"
    )
    assert (principal.tenant, principal.fixed_user_id) == ("acme", "mcpuser")
    assert principal_from_event(event("memory_service", None, None), "default").fixed_user_id is None


def test_a_one_user_key_is_never_widened_nor_moved() -> None:
    assert principal_from_event(event("service_account", "bob", "bob"), "default").fixed_user_id == "bob"
    with pytest.raises(Forbidden):
        principal_from_event(event("service_account", "bob", "eve"), "default")
    for bad in ("#org", "", "a/b", "x" * 129):
        with pytest.raises(InvalidInput):
            principal_from_event(event("memory_service", None, bad), "default")


def test_a_narrowed_open_stack_caller_is_no_operator() -> None:
    open_caller = principal_from_event({"headers": {}}, "default")
    narrowed = principal_from_event({"headers": {AS_USER_HEADER: "ana"}}, "default")
    assert is_operator(open_caller, Open()) and not is_operator(narrowed, Open())


def test_the_mcp_server_sends_the_apis_header() -> None:
    assert mcp_server.AS_USER_HEADER == AS_USER_HEADER
