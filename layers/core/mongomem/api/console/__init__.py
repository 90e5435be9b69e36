"""The memory console: a no-build web app (HTML, ES modules, CSS) served by the memory API at /console.

The page holds no user data and is served without a key (template.yaml: `Authorizer: NONE`, like
/v1/docs). It signs in with an API key kept in the tab's sessionStorage and sends it only as the
x-api-key header of its own API calls, so the console can do nothing the key could not do with curl.
Only files shipped in `static/` are served (no path is ever joined from the request).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

if TYPE_CHECKING:
    from mongomem.api.app import MemoryApi

CONSOLE_PATH = "/console"
STATIC = Path(__file__).parent / "static"
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
# Everything the page loads comes from this origin; nothing inline, no eval, no framing.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
}


@dataclass(frozen=True)
class Asset:
    body: str
    content_type: str
    etag: str


def _load() -> dict[str, Asset]:
    assets = {}
    for path in sorted(STATIC.iterdir()):
        if path.is_file() and path.suffix in TYPES:
            body = path.read_text(encoding="utf-8")
            etag = '"' + hashlib.sha256(body.encode("utf-8")).hexdigest()[:32] + '"'
            assets[path.name] = Asset(body, TYPES[path.suffix], etag)
    return assets


_assets: dict[str, Asset] | None = None


def assets() -> dict[str, Asset]:
    """The shipped files by name, read once per process."""
    global _assets
    if _assets is None:
        _assets = _load()
    return _assets


def asset_response(name: str, if_none_match: str | None = None) -> Response[Any]:
    asset = assets().get(name)
    if asset is None:
        from mongomem.api.errors import error_response  # lazy: 52.3 ms

        response = error_response(404, "not_found", "no such console file")
        response.headers.update(SECURITY_HEADERS)
        return response
    headers = {**SECURITY_HEADERS, "Cache-Control": "no-cache", "ETag": asset.etag}
    if if_none_match and asset.etag in {tag.strip() for tag in if_none_match.split(",")}:
        return Response(status_code=304, headers=headers, body="")
    return Response(status_code=200, content_type=asset.content_type, body=asset.body, headers=headers)


def enable_console(memory_api: MemoryApi[Any]) -> None:
    """Serve GET /console (the page) and GET /console/<file> (its scripts, styles and icon)."""
    memory_api.add(console_routes)


def console_routes(svc: object, caller: object) -> APIGatewayHttpRouter:
    """The console's static files: they need no services."""
    app = APIGatewayHttpRouter()

    # No return annotations: Powertools would try to build a response schema from `Response`.
    @app.get(CONSOLE_PATH, include_in_schema=False)
    def console_page():
        return asset_response("index.html", app.current_event.headers.get("if-none-match"))

    @app.get(f"{CONSOLE_PATH}/<name>", include_in_schema=False)
    def console_asset(name: str):
        return asset_response(name, app.current_event.headers.get("if-none-match"))

    return app
