"""The key of the blocks' tokens (`markers.enclose`, docs/adr/0081): drawn at the process's start, or
derived from a secret every process of a deployment shares. A module of its own, so that the runtime sets
it without importing `markers` on the record path."""

from __future__ import annotations

import hashlib
import os

# drawn on first use (os.urandom: no `secrets` / `random` import on every function's cold start)
_key: list[bytes | None] = [None]


def key() -> bytes:
    drawn = _key[0]
    if drawn is None:
        drawn = _key[0] = os.urandom(32)
    return drawn


def use_secret(secret: str) -> None:
    """Key tokens by a secret every process of a deployment shares (the database's credentials), so that
    a reader's token is the same whichever process serves them; until then (and where no secret is
    given, as on the local stack) the key is one drawn at the process's start."""
    _key[0] = hashlib.sha256(b"mongomem marker token\0" + secret.encode("utf-8", "surrogatepass")).digest()
