"""Field types the kinds' item models share: bounded, storable text (see mongomem.models.common)."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

from mongomem.models.common import DateText, SafeKey, ValidText

Short = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300), ValidText]
Long = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4000), ValidText]

__all__ = ["DateText", "Long", "SafeKey", "Short"]
