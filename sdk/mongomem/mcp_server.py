"""An MCP server that gives agents their memory: `mongomem mcp` or `python -m mongomem.mcp_server`.

Every tool calls the memory HTTP API through MemoryClient, so the server holds no state and works
against `make dev` or a deployed stack alike. Transports: stdio (an MCP client launches it) and
streamable HTTP (`--transport http`, served at http://HOST:PORT/mcp).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

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
# stays an alias of the tool it became for one release, then goes. A renamed tool adds its old name here.
# Every name here is in mongomem.markers.OWN_TOOLS: results of mongomem's own tools are never learnt from.
ALIASES: dict[str, str] = {"updateWorkingMemory": "update_working_memory"}


def _out(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    return value


def build_server(client: MemoryClient, user_id: str | None = None) -> MCPServer:
    """The MCP server; `user_id` fixes the memory identity (tools then need no user_id argument)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server: MCPServer = MCPServer("mongomem", instructions=INSTRUCTIONS)

    def who(given: str | None) -> str:
        chosen = user_id or given
        if not chosen:
            raise ToolError("user_id is required (or start the server with --user-id)")
        return chosen

    def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return _out(fn(*args, **kwargs))
        except MemoryClientError as err:
            detail = f" ({err.details})" if err.details else ""
            raise ToolError(f"{err.code}: {err.message}{detail}") from err

    @server.tool()
    def record_turn(
        session_id: str,
        role: Literal["user", "assistant", "system", "tool"],
        content: str,
        user_id: str | None = None,
        client_token: str | None = None,
    ) -> dict[str, Any]:
        """Record one conversation turn in the session's short-term memory (returns its seq)."""
        return dict(
            call(client.record_turn, session_id, who(user_id), role, content, client_token=client_token)
        )

    @server.tool()
    def search_memories(
        query: str,
        user_id: str | None = None,
        types: list[str] | None = None,
        top_k: int = 10,
        agent_id: str | None = None,
        visibility: Literal["private", "org"] | None = None,
        tags: list[str] | None = None,
        domain: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Search the user's long-term memories (facts, episodes, procedures, terms, preferences, the
        project's custom types: `types` names them) and the organisation's shared ones by meaning and words.
        Optional filters: agent_id (that agent's memories plus the shared ones), visibility (private|org),
        tags (any of), domain (taxonomic), metadata (the project's partition keys)."""
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

    @server.tool()
    def recall_messages(
        query: str,
        user_id: str | None = None,
        thread: str | None = None,
        scope: Literal["thread", "resource"] | None = None,
        top_k: int | None = None,
        message_range: int | None = None,
        order: Literal["thread", "time"] | None = None,
    ) -> dict[str, Any]:
        """Find earlier conversation messages similar to the query, with the turns around each
        (order "time": in time order across threads)."""
        return dict(
            call(
                client.recall,
                query,
                who(user_id),
                thread=thread,
                scope=scope,
                top_k=top_k,
                message_range=message_range,
                order=order,
            )
        )

    @server.tool()
    def get_working_memory(
        user_id: str | None = None,
        thread_id: str | None = None,
        scope: Literal["resource", "thread"] | None = None,
    ) -> dict[str, Any]:
        """Read the working memory: the notes kept about the user (or about one thread)."""
        return dict(call(client.get_working_memory, who(user_id), thread_id=thread_id, scope=scope))

    @server.tool()
    def update_working_memory(
        memory: str | dict[str, Any],
        user_id: str | None = None,
        thread_id: str | None = None,
        scope: Literal["resource", "thread"] | None = None,
        replace: bool = False,
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

    @server.tool()
    def create_thread(
        thread_id: str,
        user_id: str | None = None,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Start a conversation thread; metadata.workingMemory seeds the working memory."""
        return dict(call(client.create_thread, thread_id, who(user_id), title=title, metadata=metadata))

    @server.tool()
    def list_threads(
        user_id: str | None = None, limit: int = 20, cursor: str | None = None
    ) -> dict[str, Any]:
        """The user's conversation threads, most recently updated first."""
        return dict(call(client.list_threads, who(user_id), limit=limit, cursor=cursor))

    @server.tool()
    def update_thread(
        thread_id: str,
        user_id: str | None = None,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Rename a thread or replace its metadata (metadata.workingMemory replaces the working memory)."""
        return dict(call(client.update_thread, thread_id, who(user_id), title=title, metadata=metadata))

    @server.tool()
    def delete_thread(thread_id: str, user_id: str | None = None) -> dict[str, Any]:
        """Delete a thread with its messages and thread working memory."""
        return dict(call(client.delete_thread, thread_id, who(user_id)))

    @server.tool()
    def clone_thread(
        thread_id: str, user_id: str | None = None, new_thread_id: str | None = None, title: str | None = None
    ) -> dict[str, Any]:
        """Copy a thread (its messages and thread working memory) to a new thread id."""
        return dict(
            call(client.clone_thread, thread_id, who(user_id), new_thread_id=new_thread_id, title=title)
        )

    @server.tool()
    def build_context(
        user_id: str | None = None,
        session_id: str | None = None,
        thread: str | None = None,
        query: str | None = None,
        token_budget: int | None = None,
        sources: list[dict[str, Any]] | None = None,
        format: Literal["text", "markdown", "openai", "anthropic"] | None = None,
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """Assemble what the next answer needs: working memory, relevant memories and recent turns; or the
        `sources` you name ({"source": "turns" | "working_memory" | a memory kind, "mode": "text" |
        "semantic" | "hybrid", "top_k", "filter"}), rendered as `format`, within max_tokens."""
        return dict(
            call(
                client.build_context,
                who(user_id),
                session_id=session_id,
                thread=thread,
                query=query,
                token_budget=token_budget,
                sources=sources,
                format=format,
                max_tokens=max_tokens,
            )
        )

    @server.tool()
    def discover_procedures(query: str, user_id: str | None = None, top_k: int = 5) -> dict[str, Any]:
        """Find procedures (how a task was done before) that fit a task, ranked by relevance and success."""
        return dict(call(client.discover_procedures, who(user_id), query, top_k=top_k))

    @server.tool()
    def get_procedure_skill(memory_id: str, user_id: str | None = None) -> dict[str, Any]:
        """A procedure as an Agent Skill: its name and SKILL.md (front matter, steps, allowed tools)."""
        return dict(call(client.get_skill, memory_id, who(user_id)))

    @server.tool()
    def record_procedure_feedback(
        memory_id: str, outcome: Literal["success", "failure"], user_id: str | None = None
    ) -> dict[str, Any]:
        """Say whether following a procedure worked: successes rank it higher in discover_procedures."""
        return dict(call(client.procedure_feedback, memory_id, outcome, who(user_id)))

    tools: dict[str, Callable[..., Any]] = {
        "record_turn": record_turn,
        "search_memories": search_memories,
        "recall_messages": recall_messages,
        "get_working_memory": get_working_memory,
        "update_working_memory": update_working_memory,
        "build_context": build_context,
        "discover_procedures": discover_procedures,
        "get_procedure_skill": get_procedure_skill,
        "record_procedure_feedback": record_procedure_feedback,
    }
    for alias, name in ALIASES.items():
        server.add_tool(
            tools[name],
            name=alias,
            description=f"Deprecated alias of `{name}` (removed in the next release): {tools[name].__doc__}",
        )
    return server


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from mongomem.cli.connection import add_api_options

    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    add_api_options(parser)
    parser.add_argument("--user-id", default=None, help="serve one user's memory (tools drop user_id)")
    parser.add_argument("--host", default="127.0.0.1", help="http transport: interface to listen on")
    parser.add_argument("--port", type=int, default=8000, help="http transport: port (path /mcp)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per API request")


def run(args: argparse.Namespace) -> int:
    """Serve until the client disconnects (stdio) or Ctrl-C (http)."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        import sys

        print("the MCP server needs the `mcp` package: pip install 'mcp>=2.3,<3'", file=sys.stderr)
        return 2
    from mongomem.cli.connection import connection

    conn = connection(args)
    client = MemoryClient(conn.base_url, timeout=args.timeout, api_key=conn.api_key)
    server = build_server(client, user_id=args.user_id)
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=args.host, port=args.port)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mongomem mcp", description="serve mongomem memory to MCP clients")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
