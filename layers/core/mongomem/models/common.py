"""Identifiers, the principal and small shared types."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints

ID_PATTERN = r"^[A-Za-z0-9._:@-]{1,128}$"

# A caller-supplied identifier (user, session, agent, client token). Strict: a JSON object such as
# {"$gt": ""} is a type error, never a query operator.
Identifier = Annotated[str, StringConstraints(strict=True, pattern=ID_PATTERN)]

MAX_METADATA_DEPTH = 8


def _check_keys(value: Any, depth: int = 0) -> None:
    if depth > MAX_METADATA_DEPTH:
        raise ValueError(f"nested deeper than {MAX_METADATA_DEPTH} levels")
    if isinstance(value, dict):
        for key, inner in value.items():
            if not isinstance(key, str) or not key or key.startswith("$") or "." in key or "\x00" in key:
                raise ValueError(f"key {key!r} is not allowed (no empty keys, no '$' prefix, no '.')")
            _check_keys(inner, depth + 1)
    elif isinstance(value, list):
        for inner in value:
            _check_keys(inner, depth + 1)


def _safe_mapping(value: dict[str, Any]) -> dict[str, Any]:
    _check_keys(value)
    return value


# Free-form JSON stored as data: keys that MongoDB would read as operators or paths are refused.
SafeMapping = Annotated[dict[str, Any], AfterValidator(_safe_mapping)]


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """MongoDB returns naive UTC datetimes; make them aware."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Principal(BaseModel):
    """Who is calling: the tenant always comes from here, never from the request body."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    kind: str = "memory_service"
    key_id: str | None = None
    # Set for service accounts: the memory identity every request of this principal uses.
    fixed_user_id: str | None = None


class Scope(BaseModel):
    """The memory identity every read and write is filtered by."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    user_id: str

    def filter(self) -> dict[str, str]:
        return {"tenant": self.tenant, "user_id": self.user_id}
