"""The update tool an agent is given and the instruction text that shows it its working memory."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from mongomem import markers
from mongomem.models.working_memory import STATE_ID, Delivery, ToolSpec, WorkingMemoryMode
from mongomem.workingmemory.config import WorkingMemoryConfig

SYSTEM_TOOL = "updateWorkingMemory"
STATE_TOOL = "setWorkingMemory"
# Object-level keywords that would make a partial update ({"name": "Ada"}) invalid as tool input.
_WHOLE_OBJECT_RULES = ("required", "minProperties", "dependentRequired", "dependentSchemas")


def cache_key(mode: WorkingMemoryMode, value: Any) -> str:
    """A stable hash of a working-memory snapshot; equal snapshots have equal keys."""
    canonical = json.dumps({"mode": mode, "value": value}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def _nullable(schema: Any) -> dict[str, Any]:
    wrapper: dict[str, Any] = {"anyOf": [schema, {"type": "null"}]}
    if isinstance(schema, dict) and "description" in schema:
        # Models read the description next to the property name; keep it visible at the top.
        wrapper["description"] = schema["description"]
    return wrapper


def partial_schema(schema: Any) -> Any:
    """The schema with every object property optional and nullable (null deletes), recursively.

    Array items stay complete: an array is always sent, and replaced, whole.
    """
    if not isinstance(schema, dict):
        return schema
    out = copy.deepcopy(schema)
    if "properties" in out or out.get("type") == "object":
        for rule in _WHOLE_OBJECT_RULES:
            out.pop(rule, None)
        out["properties"] = {
            name: _nullable(partial_schema(sub)) for name, sub in out.get("properties", {}).items()
        }
    for defs in ("$defs", "definitions"):
        if isinstance(out.get(defs), dict):
            out[defs] = {name: partial_schema(sub) for name, sub in out[defs].items()}
    return out


def empty_from_schema(schema: Any) -> Any:
    """The empty document a schema describes: objects with every property, [] for arrays, else null."""
    if not isinstance(schema, dict):
        return None
    if "default" in schema:
        return copy.deepcopy(schema["default"])
    kind = schema.get("type")
    if "properties" in schema or kind == "object":
        return {name: empty_from_schema(sub) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return []
    return None


def tool_spec(config: WorkingMemoryConfig, delivery: Delivery) -> ToolSpec:
    """The update tool for the configured mode; named setWorkingMemory when memory arrives as state."""
    name = STATE_TOOL if delivery == "state" else SYSTEM_TOOL
    if config.json_schema is None:
        description = (
            "Update the working memory with new information. Send the complete Markdown document, keeping "
            "the template's structure: it replaces what is stored."
        )
        memory: dict[str, Any] = {"type": "string", "description": "The complete working memory as Markdown"}
        input_schema: dict[str, Any] = {"type": "object", "properties": {"memory": memory}}
    else:
        description = (
            "Update the working memory with new information. Send only the fields that changed, as JSON: "
            "objects are merged into what is stored, null deletes a field, an array replaces the stored "
            "array whole."
        )
        memory = partial_schema(config.json_schema)
        input_schema = {"type": "object", "properties": {"memory": memory}}
        # $ref "#/$defs/..." resolves against the document root, which is now the tool's input schema.
        for defs in ("$defs", "definitions"):
            if defs in memory:
                input_schema[defs] = memory.pop(defs)
    input_schema["required"] = ["memory"]
    input_schema["additionalProperties"] = False
    return ToolSpec(name=name, description=description, input_schema=input_schema)


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def shown_template(config: WorkingMemoryConfig) -> str:
    """The template as the agent sees it: the Markdown, or the empty JSON object derived from the schema."""
    if config.json_schema is None:
        return config.effective_template.strip()
    return _pretty(empty_from_schema(config.json_schema))


def shown_data(config: WorkingMemoryConfig, value: Any) -> str:
    if config.json_schema is None:
        if value is None:
            return config.effective_template.strip()
        return value.strip() if isinstance(value, str) else _pretty(value)
    return _pretty(value if value is not None else {})


def _guidelines(config: WorkingMemoryConfig, tool: str) -> str:
    if config.json_schema is None:
        how = (
            f"- Call {tool} with the entire Markdown document; it replaces what is stored.\n"
            "- Keep the template's structure and its empty sections; fill them in as you learn more."
        )
    else:
        how = (
            f"- Call {tool} with only the fields that changed, as JSON; they merge into what is stored.\n"
            "- Set a field to null to delete it. Arrays are replaced whole: send the complete array."
        )
    return (
        "Guidelines:\n"
        "- Store anything that could be useful later in the conversation; update it as soon as it changes.\n"
        "- If you are unsure whether to store something, store it.\n"
        f"{how}\n"
        "- Act naturally: do not mention this memory to the user or ask for information just to fill it."
    )


def instructions(config: WorkingMemoryConfig, value: Any, delivery: Delivery, read_only: bool) -> str:
    """System text for the agent; with state delivery the data itself travels in the state signal."""
    fmt = "Markdown" if config.json_schema is None else "JSON"
    tool = STATE_TOOL if delivery == "state" else SYSTEM_TOOL
    if read_only:
        head = (
            "WORKING MEMORY (READ-ONLY):\n"
            "This is what you know about the user and the conversation. Use it to personalise your answers. "
            "You cannot change it in this conversation."
        )
    else:
        head = (
            "WORKING_MEMORY_SYSTEM_INSTRUCTION:\n"
            f"Keep conversation-relevant information in your working memory ({fmt}) by calling the {tool} "
            "tool. Your context window may be short: working memory is how you keep track of the user "
            "across messages.\n\n" + _guidelines(config, tool)
        )
    parts = [
        head,
        f"WORKING MEMORY TEMPLATE:\n<working_memory_template>\n{shown_template(config)}\n"
        "</working_memory_template>",
    ]
    if delivery == "state":
        parts.append(
            f'The current working memory arrives separately as the state "{STATE_ID}"; treat it as the '
            "working memory data."
        )
    else:
        parts.append(
            f"WORKING MEMORY DATA:\n<working_memory_data>\n{shown_data(config, value)}\n"
            "</working_memory_data>"
        )
    return markers.wrap("\n\n".join(parts), "working_memory")
