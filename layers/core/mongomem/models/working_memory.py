"""Working memory as the API accepts and returns it: updates, state, threads, the update tool."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from mongomem.models.common import USER_HELP, Identifier, SafeData, SafeMapping, Text, ValidText

WorkingMemoryScope = Literal["resource", "thread"]
WorkingMemoryMode = Literal["template", "schema"]
Delivery = Literal["system", "state"]

STATE_ID = "working-memory"


class WorkingMemoryKey(BaseModel):
    """Which working memory: a user's resource memory or one of the user's threads."""

    model_config = ConfigDict(frozen=True)

    scope: WorkingMemoryScope
    tenant: str
    user_id: str
    thread_id: str | None = None
    # resource scope: one agent's working memory of the user (None: the one the user's agents share)
    agent_id: str | None = None


class WorkingMemoryWrite(BaseModel):
    """`{"content": "..."}` (template mode) or `{"data": {...}}` (schema mode).

    `{"memory": ...}` is accepted too, so an agent's update-tool arguments can be forwarded verbatim.
    """

    model_config = ConfigDict(extra="forbid")

    # Bounded as a whole by memory.working_memory.max_bytes (checked before anything is written).
    content: Text | None = Field(None, description="the new notes as Markdown text (template mode)")
    data: SafeData | None = Field(None, description="the new notes as an object of fields (schema mode)")
    memory: Text | SafeData | None = Field(
        None,
        description="the new notes: Markdown text (template mode) or an object of fields (schema mode), "
        "as the update tool's argument",
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> WorkingMemoryWrite:
        given = [name for name in ("content", "data", "memory") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                'send exactly one of "content" (template mode), "data" (schema mode) or "memory"'
            )
        return self

    @property
    def value(self) -> str | dict[str, Any]:
        return next(v for v in (self.content, self.data, self.memory) if v is not None)


class WorkingMemoryState(BaseModel):
    """The stored working memory of one scope key; `content` in template mode, `data` in schema mode."""

    scope: WorkingMemoryScope
    mode: WorkingMemoryMode
    user_id: str
    thread_id: str | None = None
    content: str | None = None
    data: dict[str, Any] | None = None
    version: int = 0
    updated_at: datetime | None = None
    cache_key: str
    read_only: bool = False


class ToolSpec(BaseModel):
    """The update tool an agent is given: name, description and the JSON Schema of its input."""

    name: str
    description: str
    input_schema: dict[str, Any]


class StateSignal(BaseModel):
    """Working memory delivered as a state snapshot instead of system-prompt text."""

    stateId: str = STATE_ID
    mode: WorkingMemoryMode
    content: str | None = None
    data: dict[str, Any] | None = None
    cache_key: str


class WorkingMemoryContext(BaseModel):
    """What an agent needs for one turn: instructions, the update tool (unless read-only) and the memory."""

    delivery: Delivery
    scope: WorkingMemoryScope
    mode: WorkingMemoryMode
    read_only: bool
    instructions: str
    tool: ToolSpec | None
    state: StateSignal | None = None
    cache_key: str


class Unchanged(BaseModel):
    """The client already holds this snapshot (its if_none_match equals the current cache key)."""

    unchanged: Literal[True] = True
    cache_key: str


class ThreadCreate(BaseModel):
    """A conversation thread; `metadata.workingMemory` seeds its thread-scoped working memory."""

    model_config = ConfigDict(extra="forbid")

    thread_id: Identifier = Field(description="the thread's id (= the session id its turns are recorded in)")
    user_id: Identifier | None = Field(None, description=USER_HELP)
    title: Annotated[str, StringConstraints(strict=True, max_length=512), ValidText] | None = Field(
        None, description="a title for humans"
    )
    metadata: SafeMapping = Field(
        default_factory=dict, description="free-form; metadata.workingMemory seeds the working memory"
    )


class Thread(BaseModel):
    thread_id: str
    user_id: str
    title: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime


ThreadTitle = Annotated[str, StringConstraints(strict=True, max_length=512), ValidText]


class ThreadUpdate(BaseModel):
    """New title and/or metadata; `metadata.workingMemory` replaces the configured scope's working memory."""

    model_config = ConfigDict(extra="forbid")

    user_id: Identifier | None = Field(None, description=USER_HELP)
    title: ThreadTitle | None = Field(None, description="a title for humans")
    metadata: SafeMapping | None = Field(
        None, description="replaces the thread's metadata (its working memory is kept unless given)"
    )


class ThreadCloneRequest(BaseModel):
    """Copy a thread's turns and thread-scoped working memory to a new thread id."""

    model_config = ConfigDict(extra="forbid")

    user_id: Identifier | None = Field(None, description=USER_HELP)
    new_thread_id: Identifier | None = Field(None, description="default: a generated id")
    title: ThreadTitle | None = Field(None, description="default: the source thread's title")
    metadata: SafeMapping | None = Field(None, description="default: the source thread's metadata")


class ThreadClone(BaseModel):
    thread: Thread
    source_thread_id: str
    turns: int = Field(description="turns copied")


class ThreadPage(BaseModel):
    user_id: str
    threads: list[Thread] = Field(description="most recently updated first")
    next_cursor: str | None = None


class ThreadDeleted(BaseModel):
    thread_id: str
    deleted: dict[str, int] = Field(description="what went, per place (turns, snapshots, index entries ...)")
