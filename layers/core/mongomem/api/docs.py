"""The API's OpenAPI document, generated from the routes' pydantic models, and Swagger UI.

The HTTP API is served by two functions (record_turns for /v1/sessions, memory_api for the rest), so
one resolver knows only half of the routes. The document here covers every router in mongomem.api;
`enable_docs` serves it at /v1/openapi.json and Swagger UI at /v1/docs from the memory_api function.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import json
import pkgutil
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

if TYPE_CHECKING:
    from mongomem.api.app import MemoryApi

OPENAPI_PATH = "/v1/openapi.json"
DOCS_PATH = "/v1/docs"
TITLE = "mongomem memory API"
DESCRIPTION = (
    "Long-term memory for AI agents: record conversation turns, read and write long-term memories, "
    "search and recall them, keep a working memory. Errors are "
    '`{"error": {"code", "message", "details"}}`.'
)

_cache: dict[str, str] = {}
_pages: dict[str, tuple[str, dict[str, str]]] = {}
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)
_lock = threading.Lock()


def api_routers() -> list[APIGatewayHttpRouter]:
    """The routers of every `routes` builder in the mongomem.api package (new route modules are found
    too), built for their documentation only: no services behind them."""
    import mongomem.api as package  # lazy: 0.03 ms
    from mongomem.api.app import NO_SERVICES  # lazy: 72.3 ms
    from mongomem.api.identity import Caller  # lazy: 67.0 ms

    routers = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        build = getattr(module, "routes", None)
        if callable(build):
            router = build(NO_SERVICES, Caller(NO_SERVICES.settings))
            if isinstance(router, APIGatewayHttpRouter):
                routers.append(router)
    return routers


def openapi_document(version: str = "1", server_url: str | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 document of every route, with request and response schemas from the models."""
    return dict(json.loads(openapi_json(version, server_url)))


def openapi_json(version: str = "1", server_url: str | None = None) -> str:
    key = f"{version}|{server_url}"
    with _lock:
        if key not in _cache:
            _cache[key] = _build(version, server_url)
        return _cache[key]


def _build(version: str, server_url: str | None) -> str:
    from aws_lambda_powertools.event_handler.openapi.models import Server  # lazy: 105.0 ms

    resolver = APIGatewayHttpResolver(enable_validation=True)
    for router in api_routers():
        # What include_router does, minus re-pointing the router at this resolver: the router's
        # live resolver (the function serving its routes) must keep reading its own current event.
        for route_key, func in router._routes.items():
            resolver.route(*route_key)(func)
    servers = [Server(url=server_url)] if server_url else None
    document = resolver.get_openapi_json_schema(
        title=TITLE, version=version, description=DESCRIPTION, servers=servers
    )
    # Document the error body every route really answers with (not Powertools' default 422 shape)
    # and the x-api-key header the authorizer requires.
    from mongomem.api.openapi import with_error_responses  # lazy: 1.1 ms

    return json.dumps(with_error_responses(json.loads(document)), indent=2)


def swagger_page(spec_url: str = OPENAPI_PATH) -> tuple[str, dict[str, str]]:
    """(Swagger UI's page, its security headers), built once per process."""
    if spec_url not in _pages:
        html = _swagger_html(spec_url)  # built outside the lock: it takes it for the document
        _pages.setdefault(spec_url, (html, docs_headers(html)))
    return _pages[spec_url]


def docs_headers(html: str) -> dict[str, str]:
    """The page's Content-Security-Policy and frame protection, like the console's.

    Swagger UI's scripts are inline (Powertools ships them so the page works offline): each is allowed
    by its SHA-256 and nothing else may run - an injected <script> or event handler is blocked. Styles
    stay inline-capable (Swagger UI sets style attributes); images and fonts may be data: URLs."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode() + "'"
        for body in _INLINE_SCRIPT.findall(html)
    )
    csp = (
        f"default-src 'none'; script-src {hashes}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'; object-src 'none'"
    )
    from mongomem.api.console import SECURITY_HEADERS  # lazy: 1.5 ms

    return {**SECURITY_HEADERS, "Content-Security-Policy": csp, "Cache-Control": "no-store"}


def _swagger_html(spec_url: str) -> str:
    from aws_lambda_powertools.event_handler.openapi import swagger_ui  # lazy: 109.4 ms

    # lazy: 106.6 ms
    from aws_lambda_powertools.event_handler.openapi.swagger_ui.html import generate_swagger_html

    assets = Path(swagger_ui.__file__).parent
    js = (assets / "swagger-ui-bundle.min.js").read_text(encoding="utf-8")
    css = (assets / "swagger-ui.min.css").read_text(encoding="utf-8")
    spec = openapi_json().replace("</", "<\\/")
    return generate_swagger_html(spec, js, css, "", None, False).replace(
        "</title>", f"</title><!-- spec: {spec_url} -->", 1
    )


def enable_docs(memory_api: MemoryApi[Any]) -> None:
    """Serve GET /v1/openapi.json and GET /v1/docs (Swagger UI) from this function."""
    memory_api.add(docs_routes)


def docs_routes(svc: object, caller: object) -> APIGatewayHttpRouter:
    """The document and Swagger UI: they need no services."""
    app = APIGatewayHttpRouter()

    # No return annotations: Powertools would try to build a response schema from `Response`.
    @app.get(OPENAPI_PATH, include_in_schema=False)
    def openapi():
        return Response(status_code=200, content_type="application/json", body=openapi_json())

    @app.get(DOCS_PATH, include_in_schema=False)
    def docs():
        html, headers = swagger_page()
        return Response(status_code=200, content_type="text/html; charset=utf-8", body=html, headers=headers)

    return app
