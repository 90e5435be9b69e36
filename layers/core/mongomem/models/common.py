"""Identifiers, the principal and small shared types."""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import UTC, date, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, ConfigDict, StringConstraints

from mongomem.models.base import Model

# 1 to 128 of these characters, but never `.` or `..` alone: those are dot-segments (RFC 3986 5.2.4) that
# every URL client removes, so a resource with such an id could never be addressed again (issue 33).
# Spelled without look-ahead: pydantic's Rust regex engine (and RE2) have none.
_ID_CHAR, _ID_NODOT = "[A-Za-z0-9._:@-]", "[A-Za-z0-9_:@-]"
ID_PATTERN = rf"^(?:{_ID_NODOT}{_ID_CHAR}{{0,127}}|\.{_ID_NODOT}{_ID_CHAR}{{0,126}}|\.\.{_ID_CHAR}{{1,126}})$"
# What an identifier may hold, in words (validation errors say this instead of the pattern).
ID_RULE = "1 to 128 characters: letters, digits and . _ : @ - (not . or .. alone)"
USER_HELP = "the memory user (a service-account key fixes it: then leave it out)"

# A caller-supplied identifier (user, session, agent, client token). Strict: a JSON object such as
# {"$gt": ""} is a type error, never a query operator.
Identifier = Annotated[str, StringConstraints(strict=True, pattern=ID_PATTERN)]

# Limits every caller-supplied value obeys (docs/security.md "Hostile input"). Each is checked before
# anything is written, without recursion, so no input can reach a driver error or a RecursionError.
MAX_JSON_DEPTH = 32  # a whole request body (checked before it is parsed: mongomem.api.body)
MAX_METADATA_DEPTH = 8  # inside one free-form map (metadata, tool arguments, working-memory data)
MAX_KEY_CHARS = 256  # a key of a free-form map
MAX_MAP_STRING_CHARS = 65_536  # a string inside metadata, tool arguments or thread metadata
MAX_DATE_TEXT_CHARS = 64  # an ISO 8601 date or date-time given as text (valid_from, occurred_at)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # what a BSON integer holds


def check_key(key: Any) -> None:
    """A map key must be storable as a MongoDB field name and never read as an operator or a path."""
    if not isinstance(key, str) or not key or key.startswith("$") or "." in key or "\x00" in key:
        shown = key[:40] if isinstance(key, str) else key
        raise ValueError(f"key {shown!r} is not allowed (no empty keys, no '$' prefix, no '.', no NUL)")
    if len(key) > MAX_KEY_CHARS:
        raise ValueError(f"a key holds at most {MAX_KEY_CHARS} characters; got {len(key)}")
    check_text(key)


def check_text(value: str, max_chars: int | None = None) -> None:
    """A string must be valid Unicode (no lone surrogate: UTF-8 and BSON cannot hold one) and not too long."""
    if max_chars is not None and len(value) > max_chars:
        raise ValueError(f"a string here holds at most {max_chars} characters; got {len(value)}")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(f"not valid Unicode: a lone surrogate at character {exc.start}") from None


def _text(value: str) -> str:
    check_text(value)
    return value


# Valid Unicode: add to any caller string (`Annotated[str, StringConstraints(...), ValidText]`).
ValidText = AfterValidator(_text)
# Caller text stored as given: strict str, valid Unicode (length limits are the field's own).
Text = Annotated[str, StringConstraints(strict=True), ValidText]


def check_scalar(value: Any, max_chars: int | None) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            raise ValueError("an integer here must fit in 64 bits (-2**63 .. 2**63-1)")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("a number here must be finite (no NaN or Infinity)")
    elif isinstance(value, str):
        check_text(value, max_chars)


def check_mapping(
    value: Any, max_depth: int = MAX_METADATA_DEPTH, max_chars: int | None = MAX_MAP_STRING_CHARS
) -> None:
    """Walk free-form JSON iteratively: key rules, nesting depth, storable scalars. Raises ValueError."""
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    while stack:
        item, depth, path = stack.pop()
        if depth > max_depth:
            raise ValueError(f"nested deeper than {max_depth} levels (at {path or 'the top'})")
        try:
            if isinstance(item, dict):
                for key, inner in item.items():
                    check_key(key)
                    stack.append((inner, depth + 1, f"{path}.{key}" if path else str(key)))
            elif isinstance(item, list):
                stack.extend((inner, depth + 1, f"{path}[{i}]") for i, inner in enumerate(item))
            else:
                check_scalar(item, max_chars)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}" if path else str(exc)) from None


def _safe_mapping(value: dict[str, Any]) -> dict[str, Any]:
    check_mapping(value)
    return value


def _safe_data(value: dict[str, Any]) -> dict[str, Any]:
    check_mapping(value, max_chars=None)
    return value


# Free-form JSON stored as data: keys that MongoDB would read as operators or paths are refused, and so is
# anything BSON or JSON cannot hold faithfully (64-bit integers, finite numbers, valid Unicode).
SafeMapping = Annotated[dict[str, Any], AfterValidator(_safe_mapping)]
# The same rules without the per-string cap: working-memory data, bounded as a whole by its max_bytes.
SafeData = Annotated[dict[str, Any], AfterValidator(_safe_data)]


def _safe_key(value: str) -> str:
    check_key(value)
    return value


# A caller-chosen map key (e.g. a semantic memory's qualifier names).
SafeKey = Annotated[str, AfterValidator(_safe_key)]


def _utc_datetime(value: datetime) -> datetime:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)  # MongoDB stores UTC; a naive time is read as UTC
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("the date-time is outside years 1-9999 once converted to UTC") from None


# A date-time normalised to UTC; one that leaves the representable range after normalisation
# (0001-01-01T00:00:00+14:00) is a validation error, never an OverflowError in the driver.
def _not_a_number(value: Any) -> Any:
    # pydantic would read 1700000000 (or "1700000000") as seconds since 1970; the schema says an ISO 8601
    # date-time string, and a number's unit (seconds? milliseconds?) is a guess, so it is refused
    if isinstance(value, int | float) or (isinstance(value, str) and _numeric(value)):
        raise ValueError("a date-time is an ISO 8601 string such as 2024-05-01T09:30:00Z, not a number")
    return value


def _numeric(text: str) -> bool:
    try:
        float(text)  # linear in the text, unlike a regex with two quantifiers
    except ValueError:
        return False
    return True


UtcDateTime = Annotated[datetime, BeforeValidator(_not_a_number), AfterValidator(_utc_datetime)]


def parse_utc_datetime(text: str) -> datetime:
    """An ISO 8601 date-time from a query string (a cursor), normalised like UtcDateTime."""
    return _utc_datetime(datetime.fromisoformat(text))


_REDUCED_DATE = re.compile(r"^([0-9]{4})(?:-([0-9]{2}))?$")


def ascii_digits(text: str) -> str:
    """`text` with every decimal digit of any script read by its value ("2026" in full-width or Arabic-Indic
    digits is "2026"): one date is one key however its digits are written."""
    if text.isascii():
        return text
    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in text)


def _date_text(value: str) -> str:
    # digits of any script are read by their value, so a date is stored (and keyed) in ASCII digits
    text = ascii_digits(value.strip())
    if len(text) > MAX_DATE_TEXT_CHARS:
        raise ValueError(f"a date holds at most {MAX_DATE_TEXT_CHARS} characters; got {len(text)}")
    reduced = _REDUCED_DATE.fullmatch(text)
    try:
        if reduced:  # a year or a month (ISO 8601 reduced precision, as "in 2026" is extracted)
            date(int(reduced.group(1)), int(reduced.group(2) or 1), 1)
        else:
            parse_utc_datetime(text)
    except ValueError as exc:
        if "outside years" in str(exc):
            raise
        raise ValueError("must be an ISO 8601 date or date-time, e.g. 2026, 2026-04 or 2026-04-02") from None
    return text


# An ISO 8601 date or date-time kept as the caller wrote it (valid_from, occurred_at), checked like UtcDateTime.
DateText = Annotated[str, AfterValidator(_date_text)]


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """MongoDB returns naive UTC datetimes; make them aware."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Principal(Model):
    """Who is calling: the tenant always comes from here, never from the request body."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    kind: str = "memory_service"
    key_id: str | None = None
    # Set for service accounts: the memory identity every request of this principal uses.
    fixed_user_id: str | None = None


class Scope(Model):
    """The memory identity every read and write is filtered by."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    user_id: str

    def filter(self) -> dict[str, str]:
        return {"tenant": self.tenant, "user_id": self.user_id}
