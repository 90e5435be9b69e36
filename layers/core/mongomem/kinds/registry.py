"""The memory kinds a deployment knows: the built-in ones, extended by the project config."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from mongomem.kinds.base import MemoryKind
from mongomem.kinds.episodic import Episodic
from mongomem.kinds.preference import Preference
from mongomem.kinds.procedural import Procedural
from mongomem.kinds.semantic import Semantic
from mongomem.kinds.taxonomic import Taxonomic

if TYPE_CHECKING:
    from mongomem.config import CustomTypeConfig

BUILTIN: tuple[type[MemoryKind], ...] = (Semantic, Episodic, Procedural, Taxonomic, Preference)


class UnknownKind(KeyError):
    """No kind of that name is registered."""


class KindRegistry:
    """Kinds by name (one instance each); what every part of the pipeline looks a kind up in."""

    def __init__(self, kinds: Iterable[MemoryKind]) -> None:
        self._kinds: dict[str, MemoryKind] = {}
        for kind in kinds:
            if kind.name in self._kinds:
                raise ValueError(f"memory kind {kind.name!r} is registered twice")
            self._kinds[kind.name] = kind

    def __getitem__(self, name: str) -> MemoryKind:
        try:
            return self._kinds[str(name)]
        except KeyError:
            raise UnknownKind(name) from None

    def get(self, name: str) -> MemoryKind | None:
        return self._kinds.get(str(name))

    def __contains__(self, name: object) -> bool:
        return str(name) in self._kinds

    def __iter__(self) -> Iterator[MemoryKind]:
        return iter(self._kinds.values())

    def names(self) -> list[str]:
        return list(self._kinds)


def builtin_registry() -> KindRegistry:
    return KindRegistry(kind() for kind in BUILTIN)


def project_registry(custom_types: Iterable[CustomTypeConfig] = ()) -> KindRegistry:
    """The built-in kinds plus the project's custom types (memory.custom_types)."""
    from mongomem.kinds.custom import custom_kind  # lazy: 8.8 ms

    return KindRegistry([*(kind() for kind in BUILTIN), *(custom_kind(d) for d in custom_types)])
