"""Shared by the hostile-input tests: the two API functions behind one gateway, a database fingerprint."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from mongomem.config import parse_project_config
from mongomem.local.queue import local_queue_factory
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.runtime import Services
from mongomem.vectors.embedded import EmbeddedIndex
from tests import helpers
from tests.conftest import Ctx, load_function

TENANT = "acme"
USER = "ana"
SESSION = "s1"


def hostile_services(make_settings: Any, tmp_path: Path) -> Services:
    cfg = parse_project_config({"memory": {"providers": {"embeddings": {"kind": "hashing", "dim": 64}}}})
    return Services(
        make_settings(project=cfg),
        embedder=HashingEmbedder(dim=64),
        vector_index=EmbeddedIndex(tmp_path / "vectors"),
        queue_factory=local_queue_factory,
    )


class Gateway:
    """Routes a raw HTTP request (bytes, as a client sent them) to the function API Gateway would call."""

    def __init__(self) -> None:
        self.record = load_function("record_turns")
        self.memory = load_function("memory_api")
        self.ctx = Ctx()

    def call(
        self, method: str, target: str, body: bytes | None = None, user_id: str | None = USER
    ) -> tuple[int, dict[str, Any]]:
        headers = {"content-type": "application/json", "host": "api.test"}
        event = helpers.http_event(method, target, body or b"", TENANT, "k-hostile", headers)
        function = self.record if event["rawPath"].startswith("/v1/sessions") else self.memory
        return helpers.invoke(function, self.ctx, event)

    def json(self, method: str, target: str, body: Any) -> tuple[int, dict[str, Any]]:
        return self.call(method, target, json.dumps(body).encode())

    def seed(self) -> dict[str, str]:
        """Data in every place a hostile request could damage: turns and counters, a memory, working memory."""
        batch = {
            "user_id": USER,
            "client_token": "seed-1",
            "turns": [{"role": "user", "content": "I live in Porto"}, {"role": "assistant", "content": "ok"}],
        }
        assert self.json("POST", f"/v1/sessions/{SESSION}/turns", batch)[0] == 201
        fact = {
            "user_id": USER,
            "type": "semantic",
            "payload": {"subject": "ana", "attribute": "city", "value": "Porto"},
        }
        status, written = self.json("POST", "/v1/memories", fact)
        assert status == 201
        wm = {"content": "# User\n- city: Porto\n"}
        assert self.json("PUT", f"/v1/working-memory?user_id={USER}", wm)[0] == 200
        thread = {"user_id": USER, "thread_id": "t1", "metadata": {"a": 1}}
        assert self.json("POST", "/v1/threads", thread)[0] == 201
        return {"memory_id": written["memory"]["memory_id"], "session_id": SESSION, "thread_id": "t1"}


def fingerprint(svc: Services) -> str:
    """Every document of every collection, hashed: equal fingerprints mean no document was written.

    (Empty collections do not count: a store creates its collection and indexes on first use.)
    """
    db = svc.db
    digest = hashlib.sha256()
    for name in sorted(db.list_collection_names()):
        docs = list(db[name].find({}).sort("_id", 1))
        if not docs:
            continue
        digest.update(name.encode())
        digest.update(json.dumps(docs, default=str, sort_keys=True).encode())
    return digest.hexdigest()


def session_counters(svc: Services) -> dict[str, Any]:
    doc = svc.db["sessions"].find_one({"session_id": SESSION}) or {}
    return {k: doc.get(k) for k in ("last_seq", "pending", "unpromoted_tokens", "promoted_through_seq")}


def assert_refused(status: int, body: dict[str, Any]) -> None:
    assert 400 <= status < 500, (status, body)
    assert set(body["error"]) == {"code", "message", "details"} and body["error"]["message"]


# -- hypothesis strategies: values JSON can carry that BSON or JSON output cannot hold faithfully ----------
# Each yields raw JSON text (a fragment), since json.dumps never writes NaN, lone surrogates or huge nesting.


def _escaped(text: str) -> str:
    return json.dumps(text)[1:-1]


def surrogates() -> st.SearchStrategy[str]:
    """A JSON string holding a lone UTF-16 surrogate escape (high or low), between ordinary text."""
    return st.builds(
        lambda before, code, after: f'"{_escaped(before)}\\u{code:04x}{_escaped(after)}"',
        st.text(max_size=4),
        st.integers(0xD800, 0xDFFF),
        st.text(max_size=4),
    )


def big_ints() -> st.SearchStrategy[str]:
    """Integers just or far outside int64, and ones with more digits than Python converts."""
    return st.one_of(
        st.integers(min_value=2**63, max_value=2**200).map(str),
        st.integers(min_value=-(2**200), max_value=-(2**63) - 1).map(str),
        st.integers(4301, 6000).map(lambda n: "9" * n),
    )


def non_finite() -> st.SearchStrategy[str]:
    return st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1e309", "123e456789"])


def extreme_datetimes() -> st.SearchStrategy[str]:
    """Date-times at the ends of the calendar, most of which leave years 1-9999 once normalised to UTC."""
    offset = st.tuples(st.integers(0, 23), st.integers(0, 59)).map(lambda hm: f"{hm[0]:02d}:{hm[1]:02d}")
    early = st.builds(
        lambda m, s, off: f"0001-01-01T00:{m:02d}:{s:02d}+{off}",
        st.integers(0, 59),
        st.integers(0, 59),
        offset,
    )
    late = st.builds(
        lambda m, s, off: f"9999-12-31T23:{m:02d}:{s:02d}-{off}",
        st.integers(0, 59),
        st.integers(0, 59),
        offset,
    )
    return st.one_of(early, late)


def deep_nesting() -> st.SearchStrategy[str]:
    """Arrays or objects nested far deeper than any accepted body (33 to 10,000 levels)."""
    depth = st.integers(33, 10_000)
    return st.one_of(
        depth.map(lambda d: "[" * d + "]" * d),
        depth.map(lambda d: '{"a": ' * d + "1" + "}" * d),
    )


def bad_keys() -> st.SearchStrategy[str]:
    """An object whose key MongoDB would read as an operator or a path, or cannot store."""
    key = st.sampled_from(["$where", "$gt", "a.b", ".", "", "a\\u0000b", "\\u0000", "$"])
    return key.map(lambda k: f'{{"{k}": 1}}')


def dot_ids() -> st.SearchStrategy[str]:
    """`.` and `..`: dot-segments a URL client drops, refused wherever an id is expected (issue 33)."""
    return st.sampled_from(['"."', '".."'])


def long_strings() -> st.SearchStrategy[str]:
    return st.integers(70_000, 110_000).map(lambda n: '"' + "x" * n + '"')


def hostile_fragments() -> st.SearchStrategy[str]:
    return st.one_of(
        surrogates(),
        big_ints(),
        non_finite(),
        extreme_datetimes().map(lambda v: f'"{v}"'),
        deep_nesting(),
        bad_keys(),
        long_strings(),
        dot_ids(),
    )


def hostile_bodies(valid: bytes) -> st.SearchStrategy[bytes]:
    """Whole bodies that are not UTF-8 JSON: invalid UTF-8 bytes inside a valid body, UTF-16/32, a BOM."""
    invalid = st.sampled_from(
        [b"\xff", b"\xfe\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80"]
    )
    return st.one_of(
        invalid.map(lambda bad: valid.replace(b'"', b'"' + bad, 1)),
        st.sampled_from(["utf-16", "utf-16-le", "utf-16-be", "utf-32"]).map(
            lambda codec: valid.decode().encode(codec)
        ),
        st.just(b"\xef\xbb\xbf" + valid),
    )
