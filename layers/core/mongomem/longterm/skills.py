"""A procedural memory as an Agent Skill: a folder named for the skill holding SKILL.md (YAML front matter
with name and description, then the procedure as Markdown).

Front matter values are written as JSON strings, which YAML reads as double-quoted scalars: no YAML
library on the runtime's path, and nothing a procedure says can break out of its field.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from typing import Any

from mongomem import markers
from mongomem.kinds.meaning import norm
from mongomem.models.memory import ORG_OWNER, MemoryRecord

# The Agent Skills format: a lowercase name of letters, digits and single hyphens, at most 64 characters;
# a description of at most 1024 characters.
MAX_NAME = 64
MAX_DESCRIPTION = 1024
# A name the slug cannot spell in full ends in these many hex digits of its key's SHA-256: 64 bits, so
# nobody finds another name of the same slug and suffix by trying names (24 bits take seconds).
SUFFIX_HEX = 16


def skill_name(name: str, fallback: str) -> str:
    """`name` as a skill name (lowercase letters, digits, single hyphens, at most 64 characters): the
    words of its key, or, when the slug loses some of them (a letter outside ASCII, a cut), the slug
    (`fallback` if nothing is left) and a digest of the key: two procedures of two keys never export
    under one name."""
    folded = unicodedata.normalize("NFKD", name.casefold()).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", folded).strip("-")
    key = norm(name)  # the procedure's key (kinds.procedural)
    if slug == key.replace(" ", "-") and len(slug) <= MAX_NAME:
        return slug or fallback  # the key spelled whole: every ASCII name that fits, as it always exported
    digest = hashlib.sha256(key.encode()).hexdigest()[:SUFFIX_HEX]
    return f"{(slug or fallback)[: MAX_NAME - SUFFIX_HEX - 1].strip('-')}-{digest}"


def _quoted(value: str) -> str:
    # outside the marked body, a value still may not forge a marker (an agent may paste the whole file)
    return json.dumps(markers.neutralise(value), ensure_ascii=False)


def _step(step: Any) -> tuple[str, str | None]:
    """(what to do, the expected output) of a stored step: a string, or an object with an expected output."""
    if isinstance(step, dict):
        text = step.get("text") or step.get("action") or step.get("instruction") or step.get("description")
        expected = step.get("expected_output") or step.get("expected")
        return str(text or json.dumps(step, ensure_ascii=False)), str(expected) if expected else None
    return str(step), None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    return []


def render_skill(record: MemoryRecord) -> tuple[str, str]:
    """(skill name, SKILL.md text) of a procedural memory."""
    payload = record.payload
    title = str(payload.get("name") or "procedure")
    name = skill_name(title, fallback=f"procedure-{record.lineage_id[-8:]}")
    # the version's words are the statement that made it (its first evidence entry: an ADD or an UPDATE
    # holds what that statement said); a later tenant-wide restatement of fewer fields REINFORCEs it as it
    # is and makes none of its words the tenant's (issue 33's thirtieth probe)
    shared_by_one = record.user_id == ORG_OWNER and not (record.evidence and record.evidence[0].tenant_wide)
    if shared_by_one:
        # agent hosts put every skill's name and description in the system prompt, outside any marker:
        # of a shared procedure no tenant-wide key stated, neither holds one user's words (issue 33's
        # twenty-fifth and twenty-sixth probes); the marked body says what it is for
        name = f"shared-procedure-{hashlib.sha256(record.lineage_id.encode()).hexdigest()[:SUFFIX_HEX]}"
    when = str(payload.get("when_to_use") or "").strip()
    description = str(payload.get("description") or "").strip() or when or title
    if when and when not in description:
        description = f"{description} Use when: {when}"
    if shared_by_one:
        description = (
            "A procedure a user of the organisation shared: its body says what it is for and when to use it."
        )
    description = description[:MAX_DESCRIPTION].strip()
    tools = _strings(payload.get("allowed_tools"))
    usage = record.usage
    metadata = {
        "mongomem-memory-id": record.memory_id,
        "mongomem-version": str(record.version),
        "reinforcements": str(record.reinforcement_count),
        "successes": str(usage.successes if usage else 0),
        "failures": str(usage.failures if usage else 0),
    }
    if usage and usage.last_used_at:
        metadata["last-used-at"] = usage.last_used_at.isoformat()
    front = ["---", f"name: {name}", f"description: {_quoted(description)}"]
    if tools:
        # the Agent Skills field is a space-separated list
        front.append(f"allowed-tools: {_quoted(' '.join(t.replace(' ', '_') for t in tools))}")
    front.append("metadata:")
    front.extend(f"  {k}: {_quoted(v)}" for k, v in metadata.items())
    front.append("---")
    body = [f"# {title}", ""]
    if payload.get("description") and when:
        body += [str(payload["description"]).strip(), ""]
    if when:
        body += ["## When to use", "", when, ""]
    triggers = _strings(payload.get("trigger_conditions"))
    if triggers:
        body += ["## Triggers", "", *(f"- {t}" for t in triggers), ""]
    body += ["## Steps", ""]
    for i, step in enumerate(payload.get("steps") or [], 1):
        text, expected = _step(step)
        body.append(f"{i}. {text}")
        if expected:
            body.append(f"   Expected: {expected}")
    if tools:
        body += ["", "## Tools", "", *(f"- `{t}`" for t in tools)]
    tags = _strings(payload.get("tags"))
    if tags:
        body += ["", f"Tags: {', '.join(tags)}"]
    # the body goes out inside mongomem's marker, like everything handed to an agent: a skill pasted back
    # into a conversation is never extracted again as a new procedure (front matter must open the file)
    return name, "\n".join(front) + "\n\n" + markers.wrap("\n".join(body).rstrip(), "skill") + "\n"
