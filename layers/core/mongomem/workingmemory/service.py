"""Working memory logic: resolve the scope key, read, replace, merge and clear with compare-and-set."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter, ValidationError

from mongomem.errors import InvalidInput, NotFound, PayloadTooLarge, Unprocessable
from mongomem.models.common import Principal, SafeMapping, Scope, as_utc
from mongomem.models.working_memory import (
    Delivery,
    StateSignal,
    Thread,
    ThreadCreate,
    Unchanged,
    WorkingMemoryContext,
    WorkingMemoryKey,
    WorkingMemoryScope,
    WorkingMemoryState,
    WorkingMemoryWrite,
)
from mongomem.workingmemory import tool
from mongomem.workingmemory.config import WorkingMemoryConfig
from mongomem.workingmemory.errors import (
    ConcurrentUpdate,
    EmptyTemplateRefused,
    ModeMismatch,
    ReadOnly,
    SchemaMismatch,
)
from mongomem.workingmemory.merge import deep_merge, encoded_size, has_content, is_template, schema_errors
from mongomem.workingmemory.ports import Stored, WorkingMemoryPort

SEED_KEY = "workingMemory"
# Template mode: the one field of a tool call without the wrapper that is taken as the Markdown text.
TEXT_FIELDS = frozenset({"content", "markdown", "text", "working_memory", "workingMemory"})
_SAFE: TypeAdapter[dict[str, Any]] = TypeAdapter(SafeMapping)


def resolve_key(
    principal: Principal,
    scope: WorkingMemoryScope,
    user_id: str | None,
    thread_id: str | None,
    agent_id: str | None = None,
) -> WorkingMemoryKey:
    """The scope key of a request; a service account is its own user, as everywhere else."""
    user = principal.fixed_user_id or user_id
    if not user:
        if scope == "resource":
            raise InvalidInput(
                "resource-scoped working memory needs a user: pass user_id (or call as a service account)",
                {"path": "user_id", "scope": scope},
            )
        raise InvalidInput(
            "thread-scoped working memory needs the thread's user_id", {"path": "user_id", "scope": scope}
        )
    if scope == "thread" and not thread_id:
        raise InvalidInput(
            "thread-scoped working memory needs thread_id", {"path": "thread_id", "scope": scope}
        )
    return WorkingMemoryKey(
        scope=scope,
        tenant=principal.tenant,
        user_id=user,
        thread_id=thread_id if scope == "thread" else None,
        agent_id=agent_id if scope == "resource" else None,
    )


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _as_object(value: Any) -> Any:
    # Memory stored as a JSON string (Mastra does this, as does a project that switched modes) still merges.
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


class WorkingMemoryService:
    """Template mode replaces the whole text; schema mode deep-merges and validates; writes are serialised."""

    def __init__(self, store: WorkingMemoryPort, config: WorkingMemoryConfig, max_attempts: int = 50) -> None:
        self.store = store
        self.config = config
        self.max_attempts = max_attempts

    # -- reading -------------------------------------------------------------------------------
    def get(self, key: WorkingMemoryKey, read_only: bool = False) -> WorkingMemoryState:
        self._check_enabled()
        return self._state(key, self.store.load(key), read_only)

    def context(
        self,
        key: WorkingMemoryKey,
        delivery: Delivery | None = None,
        read_only: bool = False,
        if_none_match: str | None = None,
    ) -> WorkingMemoryContext | Unchanged:
        """Instructions, the update tool and the memory for one agent turn (or `unchanged`)."""
        state = self.get(key, read_only)
        if if_none_match and if_none_match == state.cache_key:
            return Unchanged(cache_key=state.cache_key)
        delivery = delivery or self.config.delivery
        value = state.data if state.data is not None else state.content
        signal = None
        if delivery == "state":
            signal = StateSignal(
                mode=state.mode, content=state.content, data=state.data, cache_key=state.cache_key
            )
        return WorkingMemoryContext(
            delivery=delivery,
            scope=key.scope,
            mode=self.config.mode,
            read_only=read_only,
            instructions=tool.instructions(self.config, value, delivery, read_only),
            tool=None if read_only else tool.tool_spec(self.config, delivery),
            state=signal,
            cache_key=state.cache_key,
        )

    # -- writing -------------------------------------------------------------------------------
    def replace(
        self, key: WorkingMemoryKey, write: WorkingMemoryWrite, read_only: bool = False
    ) -> WorkingMemoryState:
        """PUT: the new document replaces the stored one (after the template or schema checks)."""
        self._guard(key, read_only)
        new = self._incoming(write)
        if self.config.json_schema is None:
            return self._apply(key, lambda current: self._template_update(current, new))
        return self._apply(key, lambda _current: self._validated(new, "the working memory"))

    def merge(
        self, key: WorkingMemoryKey, write: WorkingMemoryWrite, read_only: bool = False
    ) -> WorkingMemoryState:
        """PATCH: schema mode deep-merges the fields sent; template mode replaces (Markdown cannot merge)."""
        if self.config.json_schema is None:
            return self.replace(key, write, read_only)
        self._guard(key, read_only)
        patch = self._incoming(write)
        return self._apply(
            key,
            lambda current: self._validated(
                deep_merge(_as_object(current), patch), "the merged working memory"
            ),
        )

    def apply_tool_call(
        self, key: WorkingMemoryKey, arguments: str | dict[str, Any], read_only: bool = False
    ) -> WorkingMemoryState:
        """What the update tool does with a model's arguments, `{"memory": ...}` or the memory itself.

        Models often drop the wrapper: schema mode then takes the object as the fields to merge,
        template mode a lone string value as the Markdown. Arguments sent as a JSON string are parsed.
        """
        return self.merge(key, WorkingMemoryWrite(memory=self.tool_memory(arguments)), read_only)

    def tool_memory(self, arguments: str | dict[str, Any]) -> str | dict[str, Any]:
        """The memory inside tool-call arguments, with or without the `memory` wrapper.

        Template mode takes a text: `{"memory": "..."}`, a bare string, or one field that names the text
        (`TEXT_FIELDS`: `{"markdown": "..."}`); any other object (`{"seat": "aisle"}`) is refused, never
        taken as the whole document. Schema mode takes an object, wrapped or not. A wrapped value of
        another type (null, a number, a boolean, a list) is a 422, as it is for PUT and PATCH."""
        schema_mode = self.config.json_schema is not None
        value: Any = _as_object(arguments) if isinstance(arguments, str) else arguments
        if isinstance(value, str):
            return value  # a bare Markdown text (or a JSON string that was not an object)
        if not isinstance(value, dict):
            raise Unprocessable(
                f"the tool call's arguments must be an object; got {_json_type(value)}", {"path": "(body)"}
            )
        properties = (self.config.json_schema or {}).get("properties") or {}
        if set(value) == {"memory"} and "memory" not in properties:
            inner = _as_object(value["memory"]) if schema_mode else value["memory"]
            if not isinstance(inner, str | dict):
                wanted = "an object of fields" if schema_mode else "the Markdown text"
                raise Unprocessable(
                    f"memory must be {wanted}; got {_json_type(inner)}",
                    {"path": "memory", "mode": self.config.mode},
                )
            return inner
        if schema_mode:
            return value
        if len(value) == 1:
            ((name, text),) = value.items()
            if name in TEXT_FIELDS and isinstance(text, str):
                return text  # {"markdown": "..."}: the model named the text field itself
        raise ModeMismatch(
            'working memory is in template mode: call the tool with {"memory": "<Markdown>"} '
            f"(the whole document); an object of fields such as {{{', '.join(map(repr, list(value)[:3]))}}} "
            "cannot be merged into Markdown",
            {"path": "memory", "mode": "template", "fields": list(value)[:20]},
        )

    def clear(self, key: WorkingMemoryKey, read_only: bool = False) -> WorkingMemoryState:
        """DELETE: forget this scope key's working memory (the explicit way to empty it)."""
        self._guard(key, read_only)
        return self._apply(key, lambda _current: None)

    # -- threads -------------------------------------------------------------------------------
    def create_thread(self, scope: Scope, request: ThreadCreate) -> Thread:
        """Create a thread; `metadata.workingMemory` seeds its working memory after the usual checks."""
        metadata = dict(request.metadata)
        if SEED_KEY in metadata and metadata[SEED_KEY] is not None:
            self._check_enabled()
            seed = metadata[SEED_KEY]
            if self.config.json_schema is not None:
                seed = self._validated(self._object(_as_object(seed)), "metadata.workingMemory")
            elif not isinstance(seed, str):
                raise ModeMismatch(
                    "working memory is in template mode: metadata.workingMemory must be Markdown text",
                    {"path": "metadata.workingMemory", "mode": "template"},
                )
            self._check_size(seed)
            metadata[SEED_KEY] = seed
        return self.store.create_thread(scope, request.thread_id, request.title, metadata)

    def get_thread(self, scope: Scope, thread_id: str) -> Thread:
        thread = self.store.get_thread(scope, thread_id)
        if thread is None:
            raise NotFound(f"thread {thread_id!r} not found for this user", {"thread_id": thread_id})
        return thread

    # -- internals -----------------------------------------------------------------------------
    def check_enabled(self) -> None:
        self._check_enabled()

    def _check_enabled(self) -> None:
        if not self.config.enabled:
            raise NotFound(
                "working memory is not enabled for this project", {"setting": "memory.working_memory"}
            )

    def _guard(self, key: WorkingMemoryKey, read_only: bool) -> None:
        self._check_enabled()
        if read_only:
            raise ReadOnly(
                "this request is read-only: working memory can be read but not changed; nothing changed",
                {"scope": key.scope, "readOnly": True},
            )

    def _apply(self, key: WorkingMemoryKey, compute: Callable[[Any], Any]) -> WorkingMemoryState:
        """Read, compute, compare-and-set; retry when another writer moved the version in between."""
        for attempt in range(self.max_attempts):
            stored = self.store.load(key)
            current = stored.value if stored else None
            new = compute(current)
            if new == current:
                return self._state(key, stored)
            if new is not None:
                self._check_size(new)
            saved = self.store.save(key, new, stored.version if stored else 0)
            if saved is not None:
                return self._state(key, saved)
            # Jittered backoff so two writers that collided do not collide again in lockstep.
            time.sleep(random.uniform(0, min(0.05, 0.001 * 2**attempt)))
        raise ConcurrentUpdate(
            "working memory is being updated by others right now; retry the request",
            {"scope": key.scope, "attempts": self.max_attempts},
        )

    def _incoming(self, write: WorkingMemoryWrite) -> Any:
        value = write.value
        if self.config.json_schema is None:
            if not isinstance(value, str):
                raise ModeMismatch(
                    'working memory is in template mode: send {"content": "<Markdown>"}', {"mode": "template"}
                )
            return value
        if write.memory is not None:
            # Models sometimes pass the tool's object argument as a JSON string.
            value = _as_object(value)
        return self._object(value)

    def _object(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise ModeMismatch('working memory is in schema mode: send {"data": {...}}', {"mode": "schema"})
        try:
            # A JSON string parsed here skipped the body model's key checks ('$' prefixes, dots).
            return _SAFE.validate_python(value)
        except ValidationError as exc:
            raise InvalidInput(
                "working memory data has a key the store cannot hold", {"reason": exc.errors()[0]["msg"]}
            ) from exc

    def _template_update(self, current: Any, new: str) -> str:
        template = self.config.effective_template
        if (is_template(new, template) or not new.strip()) and has_content(current, template):
            raise EmptyTemplateRefused(
                "the update is the empty template and would erase the stored working memory; nothing changed",
                {"hint": "send the full Markdown with its content, or DELETE to clear it on purpose"},
            )
        return new

    def _validated(self, data: dict[str, Any], what: str) -> dict[str, Any]:
        assert self.config.json_schema is not None
        errors = schema_errors(self.config.json_schema, data)
        if errors:
            first = errors[0]
            raise SchemaMismatch(
                f"{what} does not match the schema at {first['path']}: {first['message']}; nothing changed",
                {"path": first["path"], "errors": errors},
            )
        return data

    def _check_size(self, value: Any) -> None:
        size = encoded_size(value)
        if size > self.config.max_bytes:
            raise PayloadTooLarge(
                f"working memory would be {size} bytes; the limit is {self.config.max_bytes}",
                {"max_bytes": self.config.max_bytes, "size": size},
            )

    def _state(
        self, key: WorkingMemoryKey, stored: Stored | None, read_only: bool = False
    ) -> WorkingMemoryState:
        value = stored.value if stored else None
        content: str | None = None
        data: dict[str, Any] | None = None
        if self.config.json_schema is None:
            if value is not None:
                content = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
        else:
            parsed = _as_object(value)
            if isinstance(parsed, dict):
                data = parsed
            elif value is not None:
                # Left from template mode: shown as is; the next merge replaces it.
                content = value if isinstance(value, str) else json.dumps(value)
        return WorkingMemoryState(
            scope=key.scope,
            mode=self.config.mode,
            user_id=key.user_id,
            thread_id=key.thread_id,
            content=content,
            data=data,
            version=stored.version if stored else 0,
            updated_at=as_utc(stored.updated_at) if stored and stored.updated_at else None,
            cache_key=tool.cache_key(self.config.mode, data if data is not None else content),
            read_only=read_only,
        )
