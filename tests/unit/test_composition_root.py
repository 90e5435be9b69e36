"""The composition root keeps what it was given: a replaced root serves with the same parts except the ones
changed (the way tests and the local stack swap an extractor), without a database."""

from __future__ import annotations

from mongomem.extraction.extractor import ExtractionResult, Extractor, SnapshotInput
from mongomem.kindnames import BuiltinKind
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.runtime import Services
from tests.fake_roots import settings_for
from tests.fakes import InMemoryQueue


class Refusing:
    """An extractor the test can tell apart from the built-in one."""

    def extract(self, item: SnapshotInput) -> ExtractionResult:
        raise AssertionError("not run here")


def test_a_replaced_root_keeps_every_part_it_was_not_told_to_change() -> None:
    settings = settings_for()
    queue, embedder, refusing = InMemoryQueue(settings.queue_kinds), HashingEmbedder(dim=64), Refusing()
    root = Services(settings, queue=queue, embedder=embedder, mongodb_uri="mongodb://127.0.0.1:1/x")

    extractor: Extractor = refusing
    replaced = root.replaced(extractors={BuiltinKind.semantic: lambda _svc: extractor})

    assert (replaced.queue, replaced.embedder, replaced.mongodb_uri) == (queue, embedder, root.mongodb_uri)
    assert replaced.extractor("semantic") is extractor
    assert root.parts.get("extractors") is None  # the original is unchanged
    # and a change replaces the part it names
    other = HashingEmbedder(dim=32)
    assert root.replaced(embedder=other).embedder is other and root.embedder is embedder
