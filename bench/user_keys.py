"""Prototype bench: what per-user data keys (envelope encryption) would add to the record path.

Erasure by deleting a user's key (crypto-shredding) would reach the copies mongomem cannot delete: the
oplog of a replica set, backups and snapshots (docs/adr/0044-per-user-data-keys.md). This measures the
price on the hot path, side by side on one local MongoDB-compatible server (SecantusDB), each side
taking turns every 10 writes, medians of several rounds:

- `plain`: the record path's two commands (`findAndModify $inc` on the session, `insert_one` of the
  turn), as bench/record_turn.py's floor sends them;
- `encrypted_warm`: the same, the turn's content sealed with AES-256-GCM under the user's data key
  (the tenant and user as associated data), the key already unwrapped in this process (a warm Lambda);
- `encrypted_cold`: a key cache miss first: one more MongoDB read (the user's wrapped key) and the
  unwrap (AES key wrap with a local key encryption key standing in for KMS `Decrypt`, whose network
  round trip this bench cannot measure and does not invent), then the warm path.

    python bench/user_keys.py [--turns 300] [--rounds 5]

Prints one JSON line: ms per turn of each side (wall, and this process's CPU: the wall swings with the
server's fsync latency on a shared machine, the CPU does not), `warm_vs_plain`, `cold_vs_plain`,
`warm_vs_plain_by_cpu`, the CPU of sealing one turn (`seal_us`) and of opening it (`open_us`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: E402
from cryptography.hazmat.primitives.keywrap import aes_key_unwrap, aes_key_wrap  # noqa: E402
from pymongo import MongoClient, ReturnDocument, WriteConcern  # noqa: E402

from mongomem.local.mongod import EmbeddedMongo  # noqa: E402

CONTENT = "turn {i}: I'd like a window seat on the 9am flight to Lisbon, and a vegetarian meal please."
CHUNK = 10


class Sides:
    def __init__(self, uri: str) -> None:
        self.client: MongoClient[dict[str, Any]] = MongoClient(uri)
        db = self.client[f"keys_{uuid.uuid4().hex[:8]}"]
        journaled = WriteConcern(w=1, j=True)
        self.sessions = db.get_collection("sessions", write_concern=journaled)
        self.turns = db.get_collection("turns", write_concern=journaled)
        self.keys = db.get_collection("user_keys", write_concern=journaled)
        self.turns.create_index([("tenant", 1), ("user_id", 1), ("session_id", 1), ("seq", 1)], unique=True)
        self.kek = AESGCM.generate_key(bit_length=256)  # stands in for the KMS key
        self.cache: dict[tuple[str, str], AESGCM] = {}

    def new_user(self, user: str) -> None:
        data_key = AESGCM.generate_key(bit_length=256)
        self.keys.insert_one({"_id": f"t|{user}", "wrapped": aes_key_wrap(self.kek, data_key)})

    def _record(self, user: str, session: str, i: int, content: Any) -> None:
        s = self.sessions.find_one_and_update(
            {"_id": f"t|{user}|{session}"},
            {"$inc": {"next_seq": 1}, "$set": {"tenant": "t", "user_id": user}},
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        self.turns.insert_one(
            {"tenant": "t", "user_id": user, "session_id": session, "seq": s["next_seq"], "content": content}
        )

    def _key(self, user: str) -> AESGCM:
        key = self.cache.get(("t", user))
        if key is None:
            wrapped = self.keys.find_one({"_id": f"t|{user}"})
            assert wrapped is not None
            key = AESGCM(aes_key_unwrap(self.kek, wrapped["wrapped"]))
            self.cache[("t", user)] = key
        return key

    def plain(self, user: str, session: str, i: int) -> None:
        self._record(user, session, i, CONTENT.format(i=i))

    def encrypted_warm(self, user: str, session: str, i: int) -> None:
        key = self._key(user)
        nonce = os.urandom(12)
        sealed = nonce + key.encrypt(nonce, CONTENT.format(i=i).encode(), f"t|{user}".encode())
        self._record(user, session, i, sealed)

    def encrypted_cold(self, user: str, session: str, i: int) -> None:
        self.cache.pop(("t", user), None)
        self.encrypted_warm(user, session, i)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300, help="turns per side per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    names = ("plain", "encrypted_warm", "encrypted_cold")
    with tempfile.TemporaryDirectory() as tmp, EmbeddedMongo(Path(tmp)) as server:
        sides = Sides(server.uri)
        runs = {
            "plain": sides.plain,
            "encrypted_warm": sides.encrypted_warm,
            "encrypted_cold": sides.encrypted_cold,
        }
        per_round: dict[str, list[float]] = {n: [] for n in names}
        cpu_round: dict[str, list[float]] = {n: [] for n in names}
        for r in range(args.rounds):
            spent = dict.fromkeys(names, 0.0)
            cpu = dict.fromkeys(names, 0.0)
            users = {n: f"u-{n}-{r}" for n in names}
            for user in users.values():
                sides.new_user(user)
            for k, start in enumerate(range(0, args.turns, CHUNK)):
                for name in names[k % 3 :] + names[: k % 3]:  # each side goes first in turn
                    run = runs[name]
                    began, began_cpu = time.perf_counter(), time.thread_time()
                    for i in range(start, min(start + CHUNK, args.turns)):
                        run(users[name], "s", i)
                    spent[name] += time.perf_counter() - began
                    cpu[name] += time.thread_time() - began_cpu
            for name in names:
                per_round[name].append(spent[name] * 1000 / args.turns)
                cpu_round[name].append(cpu[name] * 1000 / args.turns)
        key = AESGCM(AESGCM.generate_key(bit_length=256))
        text, aad, n = CONTENT.format(i=1).encode(), b"t|u", 2000
        began = time.thread_time()
        sealed = [key.encrypt(nonce := os.urandom(12), text, aad) + nonce for _ in range(n)]
        seal_us = (time.thread_time() - began) * 1e6 / n
        began = time.thread_time()
        for blob in sealed:
            key.decrypt(blob[-12:], blob[:-12], aad)
        open_us = (time.thread_time() - began) * 1e6 / n
    ms = {name: statistics.median(v) for name, v in per_round.items()}
    cpu_ms = {name: statistics.median(v) for name, v in cpu_round.items()}
    print(
        json.dumps(
            {
                "bench": "user_keys",
                "turns": args.turns,
                "rounds": args.rounds,
                "plain_ms_per_turn": round(ms["plain"], 3),
                "encrypted_warm_ms_per_turn": round(ms["encrypted_warm"], 3),
                "encrypted_cold_ms_per_turn": round(ms["encrypted_cold"], 3),
                "warm_vs_plain": round(ms["encrypted_warm"] / ms["plain"], 3),
                "cold_vs_plain": round(ms["encrypted_cold"] / ms["plain"], 3),
                "plain_cpu_ms_per_turn": round(cpu_ms["plain"], 3),
                "encrypted_warm_cpu_ms_per_turn": round(cpu_ms["encrypted_warm"], 3),
                "encrypted_cold_cpu_ms_per_turn": round(cpu_ms["encrypted_cold"], 3),
                "warm_vs_plain_by_cpu": round(cpu_ms["encrypted_warm"] / cpu_ms["plain"], 3),
                "seal_us": round(seal_us, 2),
                "open_us": round(open_us, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
