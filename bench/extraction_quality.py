"""Benchmark: are the memories extraction stores right? Scored against LoCoMo's ground truth.

The first N sessions of every LoCoMo-layout conversation in DATA_DIR go through a fresh local stack as a
user's turns would (`LocalStack`, in process: the record API, `flush`, the stack's scan and extraction
pollers, the writer): one LoCoMo session is one session (flushed to one snapshot), `user_id` = the
conversation, turn times from `session_N_date_time` (10 s apart), a photo's caption appended as
" [shared a photo: ...]". Speaker A is recorded as role `user` with `name` = speaker A, speaker B as role
`assistant` with `name` = speaker B: the product's case, where the memory is the user's, so a fact of
speaker B credited to the user is the wrong-subject error. Sessions are extracted one at a time (record,
flush, wait until every kind is done), so a snapshot's seconds are its own.

Ground truth beside the turns: `session_N_observation` (per speaker, the facts a reader should keep, each
with its evidence dia_id) and `session_N_summary`. The matching rule (deterministic, no LLM judge) is
bench/extraction_match.py, written down in docs/benchmarks.md "Extraction quality" and checked by hand on
the pairs of bench/data/extraction_handcheck.jsonl.

Providers: `offline` (the offline rules, the default), `openai-compatible` (any server at --base-url,
e.g. llama.cpp's llama-server: `--base-url http://127.0.0.1:8081/v1 --model local`), `bedrock` (the
twin's Bedrock Runtime stand-in answering with the offline rules' items, a check of the Converse path and
of the accounting; or a real endpoint with --base-url). LLM calls go through a logging proxy (or are the
stand-in's record): their count, seconds, tokens and how many answered no item.

One JSON line: per kind and overall `recall` (share of speaker A's observations some memory about A
states), `recall_other_speaker`, `precision` (share of stored memories that state something the
conversation says about the right person), `wrong_subject_rate`, `invented_rate`, `empty_answer_share`,
`org_items`, `org_precision`, `memories_per_snapshot`, `seconds_per_snapshot`, `llm_tokens_per_snapshot`,
`share_outside_llm` (wall time outside LLM calls over extraction wall time; null with the offline rules).

    .venv/bin/python bench/extraction_quality.py DATA_DIR
    .venv/bin/python bench/extraction_quality.py DATA_DIR --sessions 1 --conversations 26 \\
        --provider openai-compatible --base-url http://127.0.0.1:8081/v1 --model local
    .venv/bin/python bench/extraction_quality.py DATA_DIR --dump pairs.jsonl   # the judged pairs

`--answers FILE` (openai-compatible) keeps the server's answers by request (a SHA-256 of the path and the
body): a request answered before is answered from FILE, any other goes to the server and its answer is
added. The prompts do not depend on what the stack stored, so a change to the screens after the model
(grounding, the org screen, reconciliation) is re-scored from a model's recorded answers in seconds,
exactly as the model would have answered; `answers_replayed` counts them, and `seconds_per_snapshot`
and `share_outside_llm` then read the recorded calls' seconds beside the stack's own time. A prompt
change misses every entry: the server answers again.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import extraction_match as match
from harness import emit, log, machine, quiet

KINDS = ["semantic", "episodic", "preference", "taxonomic", "procedural"]
TERMINAL = ("done", "failed", "skipped")
EMBEDDINGS = {"hashing": "{kind: hashing, dim: 256}", "local": "{kind: local}"}


# -- LLM calls, seen on the wire ------------------------------------------------------------------------
def answer_items(content: str | None) -> int | None:
    """How many items an extraction answer holds (None: not an items answer, e.g. reconciliation)."""
    if not content:
        return 0
    try:
        data = json.loads(content)
    except ValueError:
        start = content.find("{")
        try:
            data = json.loads(content[start : content.rfind("}") + 1]) if start >= 0 else None
        except ValueError:
            return 0
    if isinstance(data, dict) and "items" in data:
        return len(data["items"]) if isinstance(data["items"], list) else 0
    if isinstance(data, list):
        return len(data)
    return None if isinstance(data, dict) and "decision" in data else 0


class Answers:
    """A server's answers by request (JSONL of key, status, seconds, response; `.gz` read and written
    compressed): the ones recorded are replayed, new ones are appended."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: dict[str, dict[str, Any]] = {}
        if path.exists():
            with self._open("rt") as lines:
                for line in lines:
                    if line.strip():
                        entry = json.loads(line)
                        self.known[entry["key"]] = entry
        self.replayed = 0
        self.recorded = 0

    def _open(self, mode: str) -> Any:
        import gzip

        return (
            gzip.open(self.path, mode, encoding="utf-8")
            if self.path.suffix == ".gz"
            else self.path.open(mode)
        )

    @staticmethod
    def key(path: str, body: bytes) -> str:
        import hashlib

        return hashlib.sha256(path.encode() + body).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        found = self.known.get(key)
        if found is not None:
            self.replayed += 1
        return found

    def put(self, key: str, status: int, data: bytes, seconds: float) -> None:
        entry = {"key": key, "status": status, "seconds": round(seconds, 3), "response": data.decode("utf-8")}
        self.known[key] = entry
        self.recorded += 1
        with self._open("at") as out:
            out.write(json.dumps(entry) + "\n")


class Proxy:
    """Forwards to an OpenAI-compatible server and keeps, per chat call: seconds, tokens, items answered."""

    def __init__(self, upstream: str, strip: tuple[str, ...] = (), answers: Answers | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.strip = strip  # texts cut out of every message before it reaches the server (prompt trials)
        self.answers = answers  # recorded answers, replayed by request (--answers)
        self.lock = threading.Lock()
        proxy = self
        upstream = upstream.rstrip("/")

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self, method: str) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(size) if method == "POST" else None
                if raw and proxy.strip and self.path.endswith("/chat/completions"):
                    raw = proxy.stripped(raw)
                headers = {"Content-Type": "application/json"}
                if self.headers.get("Authorization"):
                    headers["Authorization"] = self.headers["Authorization"]
                chat = self.path.endswith("/chat/completions")
                key = Answers.key(self.path, raw or b"") if chat and proxy.answers else ""
                with proxy.lock:
                    known = proxy.answers.get(key) if key and proxy.answers else None
                if known is not None:
                    status, data, seconds = (
                        int(known["status"]),
                        known["response"].encode(),
                        float(known["seconds"]),
                    )
                else:
                    status, data, seconds = self._ask(method, raw, headers)
                    if key and status == 200 and proxy.answers is not None:
                        with proxy.lock:
                            proxy.answers.put(key, status, data, seconds)
                if chat:
                    proxy.note(status, data, seconds, replayed=known is not None)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _ask(
                self, method: str, raw: bytes | None, headers: dict[str, str]
            ) -> tuple[int, bytes, float]:
                req = urllib.request.Request(upstream + self.path, data=raw, method=method, headers=headers)
                started = time.perf_counter()
                try:
                    with urllib.request.urlopen(req, timeout=1800) as resp:
                        status, data = resp.status, resp.read()
                except urllib.error.HTTPError as exc:
                    status, data = exc.code, exc.read()
                except OSError as exc:
                    status, data = 502, json.dumps({"error": str(exc)}).encode()
                return status, data, time.perf_counter() - started

            def do_GET(self) -> None:
                self._forward("GET")

            def do_POST(self) -> None:
                self._forward("POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, name="llm-proxy", daemon=True).start()

    def stripped(self, raw: bytes) -> bytes:
        body = json.loads(raw)
        for message in body.get("messages") or []:
            content = message.get("content")
            if isinstance(content, str):
                message["content"] = self.cut(content)
            for part in content if isinstance(content, list) else []:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    part["text"] = self.cut(part["text"])
        return json.dumps(body).encode()

    def cut(self, text: str) -> str:
        for piece in self.strip:
            text = text.replace(piece, "")
        return text

    def note(self, status: int, data: bytes, seconds: float, replayed: bool = False) -> None:
        entry: dict[str, Any] = {"status": status, "seconds": seconds, "tokens": 0, "items": None}
        if replayed:
            entry["replayed"] = True  # `seconds` are the recorded call's
        try:
            answer = json.loads(data)
            usage = answer.get("usage") or {}
            entry["tokens"] = int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)
            message = answer["choices"][0]["message"]
            content = message.get("content")
            for call in message.get("tool_calls") or []:
                content = (call.get("function") or {}).get("arguments") or content
            entry["items"] = answer_items(content)
            entry["answer"] = (content or "")[:2000]
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            entry["error"] = data[:300].decode("utf-8", "replace")
        with self.lock:
            self.calls.append(entry)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class StandInCalls:
    """The Bedrock stand-in's record, read as the proxy's calls (seconds, tokens, items answered)."""

    def __init__(self, stand_in: Any, answered: list[int | None]) -> None:
        self.stand_in = stand_in
        self.answered = answered  # items of each answer, in the order the calls were answered

    @property
    def calls(self) -> list[dict[str, Any]]:
        return [
            {
                "status": 200,
                "seconds": max(0.0, c.get("completed", 0.0) - c.get("started", 0.0)),
                "tokens": int((c.get("usage") or {}).get("totalTokens") or 0),
                "items": None
                if c["tool"] == "reconcile"
                else (self.answered[i] if i < len(self.answered) else 0),
            }
            for i, c in enumerate(self.stand_in.converses())
        ]


# -- the run --------------------------------------------------------------------------------------------
def llm_config(args: argparse.Namespace, proxy_url: str | None) -> str:
    if args.provider == "offline":
        return "{kind: offline}"
    if args.provider == "openai-compatible":
        return (
            f"{{kind: openai-compatible, base_url: '{proxy_url}', model: '{args.model}', "
            f"timeout_seconds: {args.timeout}, max_retries: 1, max_concurrency: 1}}"
        )
    return f"{{kind: bedrock, model: '{args.model}', region: eu-west-1, timeout_seconds: {args.timeout}}}"


def run(args: argparse.Namespace, convs: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    import locomo_recall as locomo
    from pymongo.errors import PyMongoError

    from mongomem.client import MemoryClient
    from mongomem.local.stack import LocalStack

    proxy: Any = None
    stand_in: Any = None
    calls: Any = None
    proxy_url = None
    if args.provider == "openai-compatible":
        # the proxy forwards each path as it comes to the server's origin; the stack keeps the URL's path
        parts = urllib.parse.urlsplit(args.base_url.rstrip("/"))
        answers = Answers(args.answers) if args.answers else None
        proxy = Proxy(f"{parts.scheme}://{parts.netloc}", tuple(args.strip), answers)
        calls = proxy
        proxy_url = proxy.url + parts.path
    elif args.provider == "bedrock":
        if args.base_url:
            os.environ["AWS_ENDPOINT_URL_BEDROCK_RUNTIME"] = args.base_url
        else:
            stand_in, answered = bedrock_stand_in(convs, args.sessions)
            calls = StandInCalls(stand_in, answered)
            os.environ.update(
                {
                    "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": stand_in.url,
                    "AWS_ACCESS_KEY_ID": "bench",
                    "AWS_SECRET_ACCESS_KEY": "bench",
                    "AWS_REGION": "eu-west-1",
                }
            )
    snapshots: list[dict[str, Any]] = []
    memories: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="extraction-quality-") as tmp:
        config = Path(tmp) / "project-config.yaml"
        config.write_text(
            "memory:\n"
            f"  extraction: {{enabled: [{', '.join(args.kinds)}], with_rules: {str(args.with_rules).lower()}}}\n"
            "  snapshot: {max_messages: 1000}\n"  # one LoCoMo session, one snapshot
            "  recall: {enabled: false}\n"
            "  observations: {enabled: false}\n"  # extraction's calls only (bench/observations.py)
            f"  providers:\n    llm: {llm_config(args, proxy_url)}\n"
            f"    embeddings: {EMBEDDINGS[args.embeddings]}\n"
        )
        stack = LocalStack(
            Path(tmp) / "data", port=0, config_file=config, scan_seconds=0.5, poll_seconds=0.05
        )
        stack.start()
        try:
            assert stack.services is not None
            db = stack.services.db
            client = MemoryClient(stack.url)
            for name, conv in convs:
                for n, start, turns in locomo.sessions(conv)[: args.sessions]:
                    body = locomo.api_turns(conv, start, turns)
                    for i in range(0, len(body), 100):
                        client.record_turns(f"session_{n}", name, body[i : i + 100])
                    before = len(calls.calls) if calls else 0
                    started = time.perf_counter()
                    flushed = client.flush(f"session_{n}", name)
                    snap_id = flushed.snapshot.snapshot_id if flushed.snapshot else None
                    states: dict[str, Any] = {}
                    deadline = time.monotonic() + args.snapshot_timeout
                    while time.monotonic() < deadline:
                        try:
                            doc = db["snapshots"].find_one({"_id": snap_id})
                        except (
                            PyMongoError
                        ) as exc:  # the stack restarts a database child that stopped answering
                            log(f"reading the snapshot failed ({type(exc).__name__}), reading again")
                            time.sleep(1.0)
                            continue
                        states = dict((doc or {}).get("extraction") or {})
                        if set(states) >= set(args.kinds) and all(
                            s.get("status") in TERMINAL for s in states.values()
                        ):
                            break
                        time.sleep(0.05)
                    wall = time.perf_counter() - started
                    made = calls.calls[before:] if calls else []
                    snapshots.append(
                        {
                            "conversation": name,
                            "session": n,
                            "snapshot_id": snap_id,
                            "seconds": wall,
                            "states": states,
                            "calls": made,
                        }
                    )
                    for call in made:
                        if call.get("answer") is not None:
                            log(
                                f"  call {call['seconds']:.1f} s, {call['tokens']} tokens: {call['answer'][:300]}"
                            )
                    log(
                        f"{name} session {n}: {len(turns)} turns, {wall:.1f} s, "
                        + ", ".join(
                            f"{k}={s.get('status')}:{s.get('memories', 0)}" for k, s in states.items()
                        )
                    )
            # every stored version (active or superseded), read as the repository stores them
            for doc in db["memories"].find({"status": {"$in": ["active", "superseded"]}}):
                memories.append(doc)
        finally:
            stack.stop()
            if proxy is not None:
                proxy.stop()
            if stand_in is not None:
                stand_in.stop()
    replayed = proxy.answers.replayed if proxy is not None and proxy.answers else 0
    return {"snapshots": snapshots, "memories": memories, "answers_replayed": replayed}


def bedrock_stand_in(convs: list[tuple[str, dict[str, Any]]], sessions: int) -> tuple[Any, list[int | None]]:
    """The twin's Bedrock stand-in, answering each (session, kind) with the offline rules' items."""
    from datetime import datetime

    import locomo_recall as locomo
    from twin.bedrock import BedrockStandIn

    from mongomem.extraction.proposal import TurnView
    from mongomem.offline.rules.proposer import OfflineProposer

    proposer = OfflineProposer()
    answers: list[tuple[str, dict[str, Any]]] = []  # (a turn only this session says, answers by tool)
    for name, conv in convs:
        for _n, start, turns in locomo.sessions(conv)[:sessions]:
            body = locomo.api_turns(conv, start, turns)
            views = [
                TurnView(i + 1, t["role"], t["content"], datetime.fromisoformat(t["timestamp"]), t["name"])
                for i, t in enumerate(body)
            ]
            marker = max((t["content"] for t in body), key=len)
            answers.append(
                (marker, {f"{k}_memories": {"items": proposer.propose(k, views, name)} for k in KINDS})
            )
    stand_in = BedrockStandIn().start()
    answered: list[int | None] = []

    def respond(tool: str, _body: Any, prompt: str) -> dict[str, Any] | None:
        found = next((by_tool.get(tool) for marker, by_tool in answers if marker in prompt), None)
        answered.append(None if tool == "reconcile" else len((found or {}).get("items") or []))
        return found

    stand_in.responder = respond
    return stand_in, answered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path, help="a folder of LoCoMo-layout JSON files with observations")
    parser.add_argument(
        "--sessions", type=int, default=1000, help="the first N sessions of each conversation"
    )
    parser.add_argument("--conversations", default="", help="comma-separated conversation ids (default: all)")
    parser.add_argument("--provider", choices=["offline", "openai-compatible", "bedrock"], default="offline")
    parser.add_argument("--base-url", default="", help="the server (openai-compatible: ending in /v1)")
    parser.add_argument("--model", default="", help="the model name the server expects")
    parser.add_argument("--kinds", default=",".join(KINDS), help="the kinds to extract (default: all five)")
    parser.add_argument(
        "--embeddings",
        choices=["hashing", "local"],
        default="hashing",
        help="hashing (fast, the default) or the bundled local e5 model (what a local user runs: for seconds)",
    )
    parser.add_argument("--timeout", type=float, default=900, help="seconds one LLM call may take")
    parser.add_argument("--snapshot-timeout", type=float, default=3600, help="seconds one snapshot may take")
    parser.add_argument(
        "--strip",
        action="append",
        default=[],
        metavar="TEXT",
        help="openai-compatible: cut TEXT out of every prompt on its way to the server (a prompt trial "
        "without a code change; repeatable)",
    )
    parser.add_argument(
        "--with-rules",
        action="store_true",
        help="memory.extraction.with_rules: the offline rules' items proposed beside the model's",
    )
    parser.add_argument("--dump", type=Path, help="write every judged (memory, source) pair here (JSONL)")
    parser.add_argument(
        "--answers",
        type=Path,
        help="openai-compatible: replay the server's answers recorded in this file, record new ones (JSONL, .gz too)",
    )
    args = parser.parse_args()
    args.kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    if args.provider == "openai-compatible" and not (args.base_url and args.model):
        parser.error("--provider openai-compatible needs --base-url and --model")
    if args.answers and args.provider != "openai-compatible":
        parser.error("--answers records an openai-compatible server's answers")
    if args.provider == "bedrock" and not args.model:
        args.model = "global.amazon.nova-2-lite-v1:0"
    import locomo_recall as locomo

    wanted = {c.strip() for c in args.conversations.split(",") if c.strip()}
    convs = [
        (name, conv) for name, conv, _ in locomo.conversations(args.data_dir) if not wanted or name in wanted
    ]
    if not convs:
        raise SystemExit(f"no LoCoMo conversation in {args.data_dir} (wanted: {sorted(wanted) or 'all'})")
    missing = [name for name, conv in convs if not match.has_observations(conv)]
    if missing:
        raise SystemExit(f"no session_N_observation in conversation(s) {missing}: nothing to score against")
    started = time.perf_counter()
    with quiet():
        raw = run(args, convs)
    truth = {name: match.Conversation.from_locomo(conv, args.sessions) for name, conv in convs}
    scored = score(raw, truth, args)
    if args.dump:
        with args.dump.open("w") as out:
            for pair in scored.pop("pairs"):
                out.write(json.dumps(pair) + "\n")
    else:
        scored.pop("pairs")
    emit({**scored, "wall_s": round(time.perf_counter() - started, 1), "machine": machine()})


def score(
    raw: dict[str, Any], truth: dict[str, match.Conversation], args: argparse.Namespace
) -> dict[str, Any]:
    by_snapshot = {s["snapshot_id"]: s for s in raw["snapshots"]}
    judged: list[match.Judged] = []
    for doc in raw["memories"]:
        snap_ids = [e.get("snapshot_id") for e in doc.get("evidence") or [] if e.get("snapshot_id")]
        origin = next((by_snapshot[s] for s in snap_ids if s in by_snapshot), None)
        if origin is None:
            continue
        conv = truth[origin["conversation"]]
        seqs = sorted({q for e in doc.get("evidence") or [] for q in e.get("seqs") or []})
        mem = match.Memory(
            kind=str(doc.get("type")),
            payload=dict(doc.get("payload") or {}),
            text=str(doc.get("text") or ""),
            org=doc.get("visibility") == "org",
            session=origin["session"],
            seqs=seqs,
        )
        judged.append(conv.judge(mem, origin["conversation"]))
    figures = match.figures(judged, truth, args.kinds)
    snaps = raw["snapshots"]
    calls = [c for s in snaps for c in s["calls"]]
    extraction_calls = [c for c in calls if c.get("items") is not None]
    if extraction_calls:
        empty = sum(1 for c in extraction_calls if c["items"] == 0) / len(extraction_calls)
    else:  # the offline rules: a kind's extraction that stored and refused nothing proposed nothing
        states = [st for s in snaps for st in s["states"].values() if st.get("status") == "done"]
        empty = (
            sum(1 for st in states if not st.get("memories") and not st.get("refused")) / len(states)
            if states
            else 0.0
        )
    # a replayed call took no time here: its recorded seconds stand in for it beside the stack's own time
    llm_seconds = sum(c["seconds"] for c in calls)
    wall = sum(s["seconds"] for s in snaps) + sum(c["seconds"] for c in calls if c.get("replayed"))
    failed = Counter(k for s in snaps for k, st in s["states"].items() if st.get("status") != "done")
    n = max(1, len(snaps))
    return {
        "bench": "extraction_quality",
        "provider": args.provider,
        "model": args.model or None,
        "embeddings": args.embeddings,
        "stripped": args.strip,
        "with_rules": args.with_rules,
        "conversations": sorted(truth),
        "snapshots": len(snaps),
        **figures,
        "empty_answer_share": round(empty, 3),
        "memories_per_snapshot": round(len(judged) / n, 2),
        "seconds_per_snapshot": round(wall / n, 2),
        "llm_calls_per_snapshot": round(len(calls) / n, 2),
        "llm_tokens_per_snapshot": round(sum(c["tokens"] for c in calls) / n, 1),
        "llm_calls_refused_by_server": sum(1 for c in calls if c["status"] != 200),
        "share_outside_llm": round((wall - llm_seconds) / wall, 4) if calls and wall else None,
        "kinds_not_done": dict(failed),
        "answers_replayed": raw.get("answers_replayed", 0),
        "pairs": [p for j in judged for p in j.pairs(truth[j.conversation].speakers)]
        + [
            p
            for name, conv in truth.items()
            for p in conv.recall_pairs([j.memory for j in judged if j.conversation == name], name)
        ],
    }


if __name__ == "__main__":
    main()
