"""Every route of the OpenAPI document is a route of the deployed HTTP API (template.yaml).

API Gateway routes by method and path before any function runs: a route the functions serve but the
template does not declare answers API Gateway's own 404 when deployed, while the local stack (which
routes by path prefix) serves it.
"""

from __future__ import annotations

import re
from pathlib import Path

from twin.cfn import load_template

from mongomem.api.docs import openapi_document

ROOT = Path(__file__).resolve().parents[2]


def declared_routes() -> set[tuple[str, str]]:
    resources = load_template(ROOT / "template.yaml")["Resources"]
    routes = set()
    for resource in resources.values():
        for event in (resource.get("Properties") or {}).get("Events", {}).values():
            if event.get("Type") == "HttpApi":
                props = event["Properties"]
                routes.add((str(props["Method"]).upper(), str(props["Path"])))
    return routes


def served(routes: set[tuple[str, str]], method: str, path: str) -> bool:
    for declared_method, declared in routes:
        if declared_method not in (method, "ANY"):
            continue
        pattern = re.sub(r"\{[^}+]+\+\}", ".+", declared)
        pattern = re.sub(r"\{[^}]+\}", "[^/]+", pattern)
        if re.fullmatch(pattern, path):
            return True
    return False


def test_every_documented_route_is_declared_in_the_template() -> None:
    routes = declared_routes()
    missing = [
        f"{method.upper()} {path}"
        for path, operations in openapi_document()["paths"].items()
        for method in operations
        if not served(routes, method.upper(), re.sub(r"\{[^}]+\}", "x", path))
    ]
    assert not missing, f"add these routes to template.yaml: {missing}"
