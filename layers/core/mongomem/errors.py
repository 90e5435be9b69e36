"""Domain exceptions. The API maps each to one HTTP status in one place (api/errors.py)."""

from __future__ import annotations

from typing import Any


class ConfigError(ValueError):
    """A configuration value is invalid; the message names every bad field by its path."""

    def one_line(self) -> str:
        """The message on one line (a CLI's error line): the source, then each field's problem."""
        lines = [line.strip() for line in str(self).splitlines() if line.strip()]
        return " ".join(lines[:1]) + (" " + "; ".join(lines[1:]) if len(lines) > 1 else "")


class MongomemError(Exception):
    """Base of every domain error; `code` is the stable machine-readable error code."""

    code = "internal_error"

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidInput(MongomemError):
    code = "invalid_request"


class Unprocessable(InvalidInput):
    """Well-formed input the current state cannot take (e.g. working memory that breaks its schema)."""


class UnknownKind(Unprocessable):
    """A request names a memory type the project has neither built in nor declared (like any field that
    does not match the schema: the project's kinds are part of it)."""

    code = "validation_error"


class PayloadTooLarge(MongomemError):
    code = "payload_too_large"


class NotFound(MongomemError):
    code = "not_found"


class Conflict(MongomemError):
    code = "conflict"


class Forbidden(MongomemError):
    code = "forbidden"


class Unauthorized(MongomemError):
    code = "unauthorized"


class Unavailable(MongomemError):
    """A dependency could not be reached; the request may be retried."""

    code = "unavailable"


class StoreUnavailable(Unavailable):
    """The document store could not be reached; the request may be retried (same client token)."""

    code = "store_unavailable"


class ConfigUnavailable(Unavailable):
    """The stack's applied project config could not be read (SSM throttled or unreachable) and this
    execution environment has none yet: it serves nothing rather than the template's defaults."""

    code = "config_unavailable"


class StoreAuthFailed(StoreUnavailable):
    """MongoDB refused the credentials (a rotated password): the runtime refetches the secret once."""

    code = "store_unavailable"


class QueueUnavailable(Unavailable):
    code = "queue_unavailable"


class ExtractionFailed(MongomemError):
    """An extraction failure (bad LLM answer, provider error). `final`: the same request failed the same
    way twice, so asking again would only repeat it (a deterministic answer at temperature 0); the kind is
    reported failed instead of being retried. `reason` names the failure for the status figures."""

    code = "extraction_failed"

    def __init__(
        self, message: str, details: Any = None, *, reason: str = "error", final: bool = False
    ) -> None:
        super().__init__(message, details)
        self.reason = reason
        self.final = final
