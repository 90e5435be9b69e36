"""Import throughput: POST /v1/import through the memory API handler, beside the record path's floor.

Each round imports a fresh history (`--sessions` sessions of `--turns-per-session` turns, a pause longer
than the idle timeout every `--stretch` turns, so snapshots are cut along the way) into a new user:

- import side: the memory_api handler (API event in, response out) with the history in requests of
  1,000 turns, as `mongomem import` sends it; promotion and the extraction fan-out (the local queue)
  are included, extraction itself is asynchronous and is not;
- floor: the same turns through the record_turns handler in batches of 100 (the record path, what an
  application recording the conversation live would pay), then one promotion per stretch (`flush`).

Prints one JSON line: `turns_per_s` (import, median of rounds), `record_floor_turns_per_s`,
`import_vs_floor` (import rate / floor rate; above 1 is faster than recording it live), the medians'
rounds, and what a round did. Usage: `python bench/import.py [--rounds 5] [--sessions 20]`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from harness import api_event, emit, log, median


def history(sessions: int, per_session: int, stretch: int) -> list[dict[str, Any]]:
    start = datetime(2024, 1, 8, 9, 0, tzinfo=UTC)
    turns = []
    for s in range(sessions):
        at = start + timedelta(days=7 * s)
        for i in range(per_session):
            if i and i % stretch == 0:
                at += timedelta(hours=3)  # longer than the idle timeout: a snapshot boundary
            at += timedelta(seconds=20)
            turns.append(
                {
                    "session_id": f"chat-{s:03d}",
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": f"Message {i} of chat {s}: planning the trip to city {i % 17} with stop {i}.",
                    "timestamp": at.isoformat(),
                }
            )
    return turns


class Sides:
    def __init__(self, uri: str) -> None:
        from mongomem.config import parse_project_config, settings_from_env
        from mongomem.local.queue import local_queue_factory
        from mongomem.runtime import Services, configure
        from tests.conftest import Ctx, load_event, load_function

        project = parse_project_config({"memory": {"snapshot": {"idle_seconds": 1800, "max_messages": 50}}})
        env = {"MONGOMEM_MONGODB_URI": uri, "MONGOMEM_DB_NAME": f"bench_{uuid.uuid4().hex[:8]}"}
        self.svc = Services(settings_from_env(env, project=project), queue_factory=local_queue_factory)
        configure(self.svc)
        self.api = load_function("memory_api")
        self.record = load_function("record_turns")
        self.ctx = Ctx()
        self.record_template = load_event("record_turns_post.json")
        self.sink = io.StringIO()

    def _call(self, fn: Any, event: dict[str, Any]) -> dict[str, Any]:
        with contextlib.redirect_stdout(self.sink):  # EMF metric lines: formatted, not shown
            response: dict[str, Any] = fn.lambda_handler(event, self.ctx)
        self.sink.seek(0)
        self.sink.truncate()
        return response

    def import_side(self, user: str, turns: list[dict[str, Any]]) -> tuple[float, dict[str, int]]:
        totals: dict[str, int] = {}
        started = time.perf_counter()
        for i in range(0, len(turns), 1000):
            body = {"user_id": user, "format": "turns", "turns": turns[i : i + 1000]}
            response = self._call(self.api, api_event("POST", "/v1/import", body))
            if response["statusCode"] != 200:
                raise SystemExit(f"import failed: {response}")
            for key, value in json.loads(response["body"]).items():
                totals[key] = totals.get(key, 0) + int(value)
        return time.perf_counter() - started, totals

    def floor_side(self, user: str, turns: list[dict[str, Any]], stretch: int) -> float:
        from mongomem.models.common import Scope

        scope = Scope(tenant="default", user_id=user)
        by_session: dict[str, list[dict[str, Any]]] = {}
        for t in turns:
            by_session.setdefault(t["session_id"], []).append(t)
        started = time.perf_counter()
        for session, said in by_session.items():
            for s in range(0, len(said), stretch):
                part = said[s : s + stretch]
                for b in range(0, len(part), 100):
                    event = json.loads(json.dumps(self.record_template))
                    event["rawPath"] = event["requestContext"]["http"]["path"] = (
                        f"/v1/sessions/{session}/turns"
                    )
                    event["pathParameters"] = {"session_id": session}
                    batch = [{k: v for k, v in t.items() if k != "session_id"} for t in part[b : b + 100]]
                    event["body"] = json.dumps({"user_id": user, "turns": batch})
                    response = self._call(self.record, event)
                    if response["statusCode"] != 201:
                        raise SystemExit(f"record failed: {response}")
                self.svc.promoter.flush(scope, session)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--turns-per-session", type=int, default=100)
    parser.add_argument("--stretch", type=int, default=25, help="turns between pauses longer than idle")
    args = parser.parse_args()

    from mongomem.local.mongod import EmbeddedMongo

    turns = history(args.sessions, args.turns_per_session, args.stretch)
    with tempfile.TemporaryDirectory() as tmp, EmbeddedMongo(Path(tmp)) as server:
        sides = Sides(server.uri)
        sides.import_side("warmup-i", turns[:200])
        sides.floor_side("warmup-f", turns[:200], args.stretch)
        rates_i, rates_f, report = [], [], {}
        for r in range(args.rounds):
            # the sides alternate which goes first, so a shared machine's load changes hit both alike
            order = ("import", "floor") if r % 2 == 0 else ("floor", "import")
            for side in order:
                user = f"{side}-{r}-{uuid.uuid4().hex[:6]}"
                if side == "import":
                    seconds, report = sides.import_side(user, turns)
                    rates_i.append(len(turns) / seconds)
                else:
                    rates_f.append(len(turns) / sides.floor_side(user, turns, args.stretch))
            log(f"round {r + 1}: import {rates_i[-1]:,.0f} turns/s, record path {rates_f[-1]:,.0f} turns/s")
        sides.import_side("again", turns)
        again_s, again = sides.import_side("again", turns)  # the same history a second time: a no-op
    emit(
        {
            "bench": "import",
            "turns": len(turns),
            "sessions": args.sessions,
            "rounds": args.rounds,
            "turns_per_s": round(median(rates_i), 1),
            "record_floor_turns_per_s": round(median(rates_f), 1),
            "import_vs_floor": round(median(rates_i) / median(rates_f), 3),
            "snapshots_per_import": report.get("snapshots"),
            "extraction_messages_per_import": report.get("extraction_queued"),
            "reimport_recorded": again.get("turns_recorded"),
            "reimport_already_imported": again.get("already_imported"),
            "reimport_s": round(again_s, 3),
            "python": sys.version.split()[0],
        }
    )


if __name__ == "__main__":
    main()
