"""The process's globals, in one place: the installed services (local stack, tests) and the root."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    from mongomem.runtime.services import Services

T = TypeVar("T")
_lock = threading.Lock()
_installed: Services | None = None
_root: Any = None


def installed() -> Services | None:
    """The services `configure` installed, if any: every Runtime of the process serves with them."""
    return _installed


def configure(new: Services | None) -> None:
    """Install services explicitly (the local stack, tests); None goes back to the composition root's."""
    global _installed
    with _lock:
        _installed = new


def root(make: Callable[[], T]) -> T:
    """The process's one root object, made on first call (one per Lambda execution environment)."""
    global _root
    with _lock:
        if _root is None:
            _root = make()
        return cast(T, _root)
