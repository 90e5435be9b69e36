"""An MCP server that gives agents their memory: `mongomem mcp` or `python -m mongomem.mcp_server`.

Every tool calls the memory HTTP API through MemoryClient, so the server holds no state and works
against `make dev` or a deployed stack alike. Transports: stdio (an MCP client launches it) and
streamable HTTP (`--transport http`, served at http://HOST:PORT/mcp).
"""

# No `from __future__ import annotations`: the tools' annotations name local aliases (User, MemoryId)
# that MCPServer must see evaluated.
import argparse
import functools
import hmac
import inspect
import json
import os
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field

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


def about(model: type[BaseModel], field: str, default: Any = ...) -> Any:
    """A tool parameter described as the API request model describes the field (one text for the API,
    the SDK and the tools)."""
    from pydantic import Field

    description = model.model_fields[field].description
    assert description, f"{model.__name__}.{field} needs a description"
    return Field(default, description=description)


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("mongomem")
    except PackageNotFoundError:  # a source tree that was not installed
        return "0+unknown"


def _server_class() -> Any:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

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


def _without_user(fn: Callable[..., Any], user_id: str) -> Callable[..., Any]:
    """`fn` with its user_id parameter fixed: the tool's schema no longer has one."""
    sig = inspect.signature(fn, eval_str=True)

    @functools.wraps(fn)
    def fixed(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, user_id=user_id, **kwargs)

    fixed.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[p for p in sig.parameters.values() if p.name != "user_id"]
    )
    del fixed.__wrapped__  # inspect.signature must read __signature__, not the original
    return fixed


def build_server(client: MemoryClient, user_id: str | None = None) -> "MCPServer":
    """The MCP server; `user_id` fixes the memory identity (the tools then have no user_id parameter)."""
    from mcp.server.mcpserver.exceptions import ToolError

    from mongomem.models.memory import CreateMemoryRequest
    from mongomem.models.procedures import DiscoverRequest, FeedbackRequest
    from mongomem.models.recall import ContextRequest, RecallRequest
    from mongomem.models.search import SearchRequest
    from mongomem.models.turns import TurnIn
    from mongomem.models.working_memory import ThreadCloneRequest, ThreadCreate, ThreadUpdate

    server = _server_class()("mongomem", instructions=INSTRUCTIONS, version=version())
    server.fixed_user = user_id
    User = Annotated[str | None, about(SearchRequest, "user_id", None)]
    MemoryId = Annotated[str, Field(description="the memory's id (memory_id in search and list results)")]
    ThreadId = Annotated[str, about(ThreadCreate, "thread_id")]

    def who(given: str | None) -> str:
        if not given:
            raise ToolError("user_id is required (or start the server with --user-id)")
        return given

    def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return _out(fn(*args, **kwargs))
        except MemoryClientError as err:
            raise ToolError(str(err)) from err

    def record_turn(
        session_id: Annotated[str, about(ContextRequest, "session_id")],
        role: Annotated[Literal["user", "assistant", "system", "tool"], about(TurnIn, "role")],
        content: Annotated[str, about(TurnIn, "content")],
        user_id: User = None,
        client_token: Annotated[
            str | None, Field(None, description="the same token on a retry records nothing twice")
        ] = None,
    ) -> dict[str, Any]:
        """Record one conversation turn in the session's short-term memory (returns its seq)."""
        return dict(
            call(client.record_turn, session_id, who(user_id), role, content, client_token=client_token)
        )

    def search_memories(
        query: Annotated[str, about(SearchRequest, "query")],
        user_id: User = None,
        types: Annotated[list[str] | None, about(SearchRequest, "types", None)] = None,
        top_k: Annotated[int, about(SearchRequest, "top_k", 10)] = 10,
        agent_id: Annotated[str | None, about(SearchRequest, "agent_id", None)] = None,
        visibility: Annotated[
            Literal["private", "org"] | None, about(SearchRequest, "visibility", None)
        ] = None,
        tags: Annotated[list[str] | None, about(SearchRequest, "tags", None)] = None,
        domain: Annotated[str | None, about(SearchRequest, "domain", None)] = None,
        metadata: Annotated[dict[str, Any] | None, about(SearchRequest, "metadata", None)] = None,
    ) -> dict[str, Any]:
        """Search the user's long-term memories (facts, episodes, procedures, terms, preferences, the
        project's custom types) and the organisation's shared ones by meaning and words."""
        return dict(
            call(
                client.search,
                who(user_id),
                query,
                types=types,
                top_k=top_k,
                agent_id=agent_id,
                visibility=visibility,
                tags=tags,
                domain=domain,
                metadata=metadata,
            )
        )

    def recall_messages(
        query: Annotated[str, about(RecallRequest, "query")],
        user_id: User = None,
        thread: Annotated[str | None, about(RecallRequest, "thread", None)] = None,
        scope: Annotated[Literal["thread", "resource"] | None, about(RecallRequest, "scope", None)] = None,
        top_k: Annotated[int | None, about(RecallRequest, "top_k", None)] = None,
        message_range: Annotated[int | None, about(RecallRequest, "message_range", None)] = None,
        order: Annotated[Literal["thread", "time"] | None, about(RecallRequest, "order", None)] = None,
    ) -> dict[str, Any]:
        """Find earlier conversation messages similar to the query, with the turns around each."""
        return dict(
            call(
                client.recall,
                who(user_id),
                query,
                thread=thread,
                scope=scope,
                top_k=top_k,
                message_range=message_range,
                order=order,
            )
        )

    WmThread = Annotated[
        str | None,
        Field(None, description="a thread's own working memory (scope thread) instead of the user's"),
    ]
    WmScope = Annotated[
        Literal["resource", "thread"] | None,
        Field(None, description="resource: the user's notes across threads; thread: one thread's"),
    ]

    def get_working_memory(
        user_id: User = None, thread_id: WmThread = None, scope: WmScope = None
    ) -> dict[str, Any]:
        """Read the working memory: the notes kept about the user (or about one thread)."""
        return dict(call(client.get_working_memory, who(user_id), thread_id=thread_id, scope=scope))

    def update_working_memory(
        memory: Annotated[
            str | dict[str, Any],
            Field(
                description="the new notes: Markdown text (template mode) or an object of fields (schema mode)"
            ),
        ],
        user_id: User = None,
        thread_id: WmThread = None,
        scope: WmScope = None,
        replace: Annotated[
            bool, Field(False, description="replace the whole memory instead of merging (schema mode)")
        ] = False,
    ) -> dict[str, Any]:
        """Update the working memory: text (template mode) or an object of fields (schema mode, merged)."""
        if replace:
            return dict(
                call(
                    client.update_working_memory,
                    who(user_id),
                    memory=memory,
                    thread_id=thread_id,
                    scope=scope,
                    replace=True,
                )
            )
        # the tool-call route: `memory` may itself still carry the {"memory": ...} wrapper
        return dict(
            call(client.apply_working_memory_tool, who(user_id), memory, thread_id=thread_id, scope=scope)
        )

    def create_memory(
        type: Annotated[str, about(CreateMemoryRequest, "type")],
        payload: Annotated[dict[str, Any], about(CreateMemoryRequest, "payload")],
        user_id: User = None,
        visibility: Annotated[
            Literal["private", "org"] | None, about(CreateMemoryRequest, "visibility", None)
        ] = None,
        agent_id: Annotated[str | None, about(CreateMemoryRequest, "agent_id", None)] = None,
        metadata: Annotated[dict[str, Any] | None, about(CreateMemoryRequest, "metadata", None)] = None,
    ) -> dict[str, Any]:
        """Remember something now: write a long-term memory of a kind (reconciled with what is known:
        ADD, UPDATE as a new version, or REINFORCE when it was known already)."""
        return dict(
            call(
                client.create_memory,
                who(user_id),
                type,
                payload,
                visibility=visibility,
                agent_id=agent_id,
                metadata=metadata,
            )
        )

    def list_memories(
        user_id: User = None,
        type: Annotated[str | None, Field(None, description="only memories of this kind")] = None,
        status: Annotated[
            Literal["active", "superseded", "deleted"] | None,
            Field(None, description="active: current versions only (default: current and superseded)"),
        ] = None,
        limit: Annotated[int, Field(20, ge=1, le=200, description="memories per page")] = 20,
        cursor: Annotated[str | None, Field(None, description="next_cursor of the previous page")] = None,
    ) -> dict[str, Any]:
        """List the user's (and the organisation's) long-term memories, newest first, a page at a time."""
        return dict(
            call(client.list_memories, who(user_id), type=type, status=status, limit=limit, cursor=cursor)
        )

    def delete_memory(memory_id: MemoryId, user_id: User = None) -> dict[str, Any]:
        """Forget a memory: delete it with all its versions (search, recall and context stop returning it)."""
        return dict(call(client.delete_memory, memory_id, who(user_id)))

    def create_thread(
        thread_id: ThreadId,
        user_id: User = None,
        title: Annotated[str | None, about(ThreadCreate, "title", None)] = None,
        metadata: Annotated[dict[str, Any] | None, about(ThreadCreate, "metadata", None)] = None,
    ) -> dict[str, Any]:
        """Start a conversation thread; metadata.workingMemory seeds the working memory."""
        return dict(call(client.create_thread, thread_id, who(user_id), title=title, metadata=metadata))

    def list_threads(
        user_id: User = None,
        limit: Annotated[int, Field(20, ge=1, le=200, description="threads per page")] = 20,
        cursor: Annotated[str | None, Field(None, description="next_cursor of the previous page")] = None,
    ) -> dict[str, Any]:
        """The user's conversation threads (sessions), most recently updated first."""
        return dict(call(client.list_threads, who(user_id), limit=limit, cursor=cursor))

    def update_thread(
        thread_id: ThreadId,
        user_id: User = None,
        title: Annotated[str | None, about(ThreadCreate, "title", None)] = None,
        metadata: Annotated[dict[str, Any] | None, about(ThreadUpdate, "metadata", None)] = None,
    ) -> dict[str, Any]:
        """Rename a thread or replace its metadata (metadata.workingMemory replaces the working memory)."""
        return dict(call(client.update_thread, thread_id, who(user_id), title=title, metadata=metadata))

    def delete_thread(thread_id: ThreadId, user_id: User = None) -> dict[str, Any]:
        """Delete a thread with its messages and thread working memory."""
        return dict(call(client.delete_thread, thread_id, who(user_id)))

    def clone_thread(
        thread_id: ThreadId,
        user_id: User = None,
        new_thread_id: Annotated[str | None, about(ThreadCloneRequest, "new_thread_id", None)] = None,
        title: Annotated[str | None, about(ThreadCloneRequest, "title", None)] = None,
    ) -> dict[str, Any]:
        """Copy a thread (its messages and thread working memory) to a new thread id."""
        return dict(
            call(client.clone_thread, thread_id, who(user_id), new_thread_id=new_thread_id, title=title)
        )

    def build_context(
        session_id: Annotated[str, about(ContextRequest, "session_id")],
        user_id: User = None,
        query: Annotated[str | None, about(ContextRequest, "query", None)] = None,
        token_budget: Annotated[int | None, about(ContextRequest, "token_budget", None)] = None,
        sources: Annotated[list[dict[str, Any]] | None, about(ContextRequest, "sources", None)] = None,
        format: Annotated[
            Literal["text", "markdown", "openai", "anthropic"] | None, about(ContextRequest, "format", None)
        ] = None,
        max_tokens: Annotated[int | None, about(ContextRequest, "max_tokens", None)] = None,
    ) -> str:
        """The block to read before answering: the working memory, relevant memories, recent turns and
        recalled messages of the session, within a token budget (or the `sources` you name:
        {"source": "turns" | "working_memory" | a memory kind, "mode": "text" | "semantic" | "hybrid",
        "top_k", "filter"})."""
        answer = call(
            client.build_context,
            who(user_id),
            session_id,
            query=query,
            token_budget=token_budget,
            sources=sources,
            format=format,
            max_tokens=max_tokens,
        )
        return str(answer.get("context") or "") or "(nothing to add: no memory matches yet)"

    def discover_procedures(
        query: Annotated[str, about(DiscoverRequest, "query")],
        user_id: User = None,
        top_k: Annotated[int, about(DiscoverRequest, "top_k", 5)] = 5,
    ) -> dict[str, Any]:
        """Find procedures (how a task was done before) that fit a task, ranked by relevance and success."""
        return dict(call(client.discover_procedures, who(user_id), query, top_k=top_k))

    def get_procedure_skill(memory_id: MemoryId, user_id: User = None) -> dict[str, Any]:
        """A procedure as an Agent Skill: its name and SKILL.md (front matter, steps, allowed tools)."""
        return dict(call(client.get_skill, memory_id, who(user_id)))

    def record_procedure_feedback(
        memory_id: MemoryId,
        outcome: Annotated[Literal["success", "failure"], about(FeedbackRequest, "outcome")],
        user_id: User = None,
    ) -> dict[str, Any]:
        """Say whether following a procedure worked: successes rank it higher in discover_procedures."""
        return dict(call(client.procedure_feedback, memory_id, who(user_id), outcome))

    tools: dict[str, Callable[..., Any]] = {
        fn.__name__: fn
        for fn in (
            record_turn,
            search_memories,
            recall_messages,
            get_working_memory,
            update_working_memory,
            build_context,
            create_memory,
            list_memories,
            delete_memory,
            discover_procedures,
            get_procedure_skill,
            record_procedure_feedback,
            create_thread,
            list_threads,
            update_thread,
            delete_thread,
            clone_thread,
        )
    }
    for name, fn in tools.items():
        served = _without_user(fn, user_id) if user_id else fn
        # build_context answers with the block itself (text), not the API's JSON around it
        server.add_tool(served, name=name, structured_output=False if name == "build_context" else None)
    for alias, name in ALIASES.items():
        served = _without_user(tools[name], user_id) if user_id else tools[name]
        server.add_tool(
            served, name=alias, description=f"Deprecated alias of `{name}`: {tools[name].__doc__}"
        )
    built: MCPServer[Any] = server
    return built


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from mongomem.cli.connection import add_api_options

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
    import sys

    try:
        import mcp  # noqa: F401
    except ImportError:
        print("the MCP server needs the `mcp` package: pip install 'mcp>=2.3,<3'", file=sys.stderr)
        return 2
    from mongomem.cli.connection import connection

    try:
        api_key = upstream_key(args, os.environ)
    except (OSError, ValueError) as exc:
        print(f"mongomem mcp: {exc}", file=sys.stderr)
        return 2
    conn = connection(args)
    client = MemoryClient(conn.base_url, timeout=args.timeout, api_key=api_key)
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
    import uvicorn

    app = BearerAuth(server.streamable_http_app(host=args.host), token)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mongomem mcp", description="serve mongomem memory to MCP clients")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
