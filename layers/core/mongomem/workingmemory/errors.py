"""Working-memory refusals; each maps to one HTTP status through the domain error handler."""

from __future__ import annotations

from mongomem.errors import Conflict, Forbidden, InvalidInput, Unprocessable


class ReadOnly(Forbidden):
    code = "working_memory_read_only"


class EmptyTemplateRefused(Conflict):
    code = "empty_template_refused"


class SchemaMismatch(Unprocessable):
    """The merged or replaced document does not validate against the configured schema."""

    code = "working_memory_invalid"


class ModeMismatch(InvalidInput):
    code = "working_memory_mode_mismatch"


class ConcurrentUpdate(Conflict):
    code = "concurrent_update"
