"""An MCP server that gives agents their memory: `mongomem mcp` or `python -m mongomem.mcp_server`.

Every tool calls the memory HTTP API through MemoryClient, so the server holds no state and works
against `make dev` or a deployed stack alike. Transports: stdio (an MCP client launches it) and
streamable HTTP (`--transport http`, served at http://HOST:PORT/mcp).
"""

import argparse
import hmac
import json
import os
import secrets
import sys
from collections.abc import Callable, Mapping
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as installed
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from mongomem import tools
from mongomem.client import MemoryClient, MemoryClientError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

INSTRUCTIONS = (
    "Long-term memory for this conversation's user. Record every user and assistant turn with "
    "record_turn. Before answering, use build_context (or search_memories / recall_messages) to bring "
    "back what you know; keep durable notes about the user in working memory with update_working_memory. "
    "Before a multi-step task, discover_procedures finds how it was done before (get_procedure_skill "
    "gives its SKILL.md); afterwards, record_procedure_feedback says whether it worked."
)

# The tools' names follow the Atlas Agent Engine's memory tools (record_turn, build_context,
# search_memories, snake_case verb_noun); a name agents were taught before (Mastra's `updateWorkingMemory`)
# stays callable for one release as an alias of the tool it became, then goes. Aliases are not listed
# (tools/list offers each tool once); a renamed tool adds its old name here.
# Every name here is in mongomem.markers.OWN_TOOLS: results of mongomem's own tools are never learnt from.
ALIASES: dict[str, str] = {"updateWorkingMemory": "update_working_memory"}


def _out(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    return value


def _marked(name: str, out: Any) -> Any:
    """A tool's answer: the API's JSON as structured content (for programs) and, as the text a model
    reads, the same JSON inside mongomem's marker (docs/trust.md: every tool result that carries stored
    words comes marked; issue 33's twenty-fifth probe found search, lists and working memory unmarked)."""
    from mcp_types import CallToolResult, TextContent  # lazy: 0 ms (loaded with the server)

    from mongomem import markers  # lazy: 35 ms

    text = json.dumps(out, ensure_ascii=False, indent=2)
    return CallToolResult(
        content=[TextContent(type="text", text=markers.wrap(text, name))], structured_content=out
    )


def version() -> str:
    try:
        return installed("mongomem")
    except PackageNotFoundError:  # a source tree that was not installed
        return "0+unknown"


def _server_class() -> Any:
    from mcp.server.mcpserver import MCPServer  # lazy: 461 ms
    from mcp.server.mcpserver.exceptions import ToolError  # lazy: 438 ms

    class MemoryServer(MCPServer):
        """Lists each tool once (aliases are callable, not listed) and refuses a user_id the server's
        fixed user makes meaningless, instead of ignoring it."""

        fixed_user: str | None = None

        async def list_tools(self) -> Any:
            return [t for t in await super().list_tools() if t.name not in ALIASES]

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            given = (arguments or {}).get("user_id")
            if self.fixed_user is not None and given is not None and given != self.fixed_user:
                raise ToolError(
                    f"this server serves the memory of one user ({self.fixed_user}): leave user_id out"
                )
            if self.fixed_user is not None and "user_id" in (arguments or {}):
                arguments = {k: v for k, v in arguments.items() if k != "user_id"}
            return await super().call_tool(name, arguments, context)

    return MemoryServer


def tool_function(
    spec: tools.ToolSpec, client: MemoryClient, user_id: str | None = None
) -> Callable[..., Any]:
    """The MCP tool of `spec`: its signature made of the request model's fields (mongomem.tools), each
    call one SDK call whose API errors come back as tool errors. `user_id` fixes the memory user."""
    from mcp.server.mcpserver.exceptions import ToolError  # lazy: 442 ms

    params = spec.params(fixed_user=user_id is not None)

    def tool(**given: Any) -> Any:
        args = tools.arguments(given, params)
        if user_id is not None:
            args["user_id"] = user_id
        elif not args.get("user_id"):
            raise ToolError("user_id is required (or start the server with --user-id)")
        try:
            answer = tools.call(spec, client, args)
        except MemoryClientError as err:
            raise ToolError(str(err)) from err
        if spec.text:  # build_context answers with the block itself, not the API's JSON around it
            return str(answer.context or "") or "(nothing to add: no memory matches yet)"
        return _marked(spec.name, _out(answer))

    tool.__signature__ = tools.signature(params, str if spec.text else dict[str, Any])  # type: ignore[attr-defined]
    tool.__name__ = spec.name
    tool.__doc__ = spec.doc
    return tool


def build_server(client: MemoryClient, user_id: str | None = None) -> "MCPServer":
    """The MCP server: one tool per entry of mongomem.tools.TOOLS; `user_id` fixes the memory identity
    (the tools then have no user_id parameter)."""
    server = _server_class()("mongomem", instructions=INSTRUCTIONS, version=version())
    server.fixed_user = user_id
    for spec in tools.TOOLS:
        fn = tool_function(spec, client, user_id)
        server.add_tool(fn, name=spec.name, structured_output=False if spec.text else None)
    for alias, name in ALIASES.items():
        spec = tools.BY_NAME[name]
        server.add_tool(
            tool_function(spec, client, user_id),
            name=alias,
            description=f"Deprecated alias of `{name}`: {spec.doc}",
        )
    built: MCPServer[Any] = server
    return built


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from mongomem.cli.connection import add_api_options  # lazy: 18 ms

    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    # A server runs for hours: its key never goes on the command line (every user of the machine reads
    # it with ps), so --api-key is refused here and --api-key-file / MONGOMEM_API_KEY carry it.
    add_api_options(
        parser,
        key_help="refused: a command line is visible to every user of the machine; use MONGOMEM_API_KEY or "
        "--api-key-file",
    )
    parser.add_argument(
        "--user-id", default=None, help="serve one user's memory (the tools then have no user_id parameter)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="http transport: interface to listen on")
    parser.add_argument("--port", type=int, default=8000, help="http transport: port (path /mcp)")
    parser.add_argument(
        "--token-file",
        default=None,
        help="http transport: a file holding the bearer token MCP clients must send (default: "
        f"{TOKEN_ENV}; without either, a random token is made and printed at start)",
    )
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per API request")


TOKEN_ENV = "MONGOMEM_MCP_TOKEN"
# The API's header that narrows a request to one memory user (mongomem.api.identity.AS_USER_HEADER).
AS_USER_HEADER = "x-mongomem-as-user"
KEY_ENV = "MONGOMEM_API_KEY"


def _secret_file(path: str, what: str) -> str:
    text = Path(path).expanduser().read_text(encoding="utf-8").strip()
    if not text:
        raise ValueError(f"{path} holds no {what}")
    return text


def upstream_key(args: argparse.Namespace, env: Mapping[str, str]) -> str | None:
    """The memory API key: from --api-key-file or MONGOMEM_API_KEY, never from the command line."""
    if args.api_key:
        raise ValueError(
            "--api-key is refused: a command line is visible to every user of the machine (ps); "
            f"put the key in {KEY_ENV} or in a file named by --api-key-file"
        )
    if args.api_key_file:
        return _secret_file(args.api_key_file, "API key")
    return env.get(KEY_ENV) or None


def client_token(args: argparse.Namespace, env: Mapping[str, str]) -> tuple[str, bool]:
    """(the bearer token HTTP clients must send, whether it was made here)."""
    if args.token_file:
        return _secret_file(args.token_file, "token"), False
    if env.get(TOKEN_ENV):
        return env[TOKEN_ENV], False
    return secrets.token_urlsafe(32), True


class BearerAuth:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>` (401 otherwise).
    The streamable HTTP endpoint acts with the upstream key, so without this any local process - or any
    host, with --host 0.0.0.0 - could read and write the memory through it."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = json.dumps(
                    {"error": {"code": "unauthorized", "message": "send Authorization: Bearer <token>"}}
                ).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="mongomem-mcp"'),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def run(args: argparse.Namespace) -> int:
    """Serve until the client disconnects (stdio) or Ctrl-C (http)."""

    try:
        # lazy: 423 ms
        import mcp  # noqa: F401
    except ImportError:
        print("the MCP server needs the `mcp` package: pip install 'mcp>=2.3,<3'", file=sys.stderr)
        return 2
    from mongomem.cli.connection import connection  # lazy: 18 ms

    try:
        api_key = upstream_key(args, os.environ)
    except (OSError, ValueError) as exc:
        print(f"mongomem mcp: {exc}", file=sys.stderr)
        return 2
    conn = connection(args)
    # With --user-id the server acts as that one user whatever key it holds: a tenant-wide key's requests
    # are narrowed to the user (its org writes become proposals, org deletes are refused), so an agent
    # steered by a prompt injection gets one user's power, never the tenant's (docs/sdk.md).
    narrowed = {AS_USER_HEADER: args.user_id} if args.user_id else None
    client = MemoryClient(conn.base_url, timeout=args.timeout, headers=narrowed, api_key=api_key)
    server = build_server(client, user_id=args.user_id)
    if args.transport == "stdio":
        server.run("stdio")
        return 0
    try:
        token, made = client_token(args, os.environ)
    except (OSError, ValueError) as exc:
        print(f"mongomem mcp: {exc}", file=sys.stderr)
        return 2
    if made:
        print(
            f"mongomem mcp: clients must send 'Authorization: Bearer {token}' "
            f"(set {TOKEN_ENV} or --token-file to choose it)",
            file=sys.stderr,
            flush=True,
        )
    import uvicorn  # lazy: 11 ms

    app = BearerAuth(server.streamable_http_app(host=args.host), token)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mongomem mcp", description="serve mongomem memory to MCP clients")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
