"""API keys: `mm_<key id>_<secret>`, stored as a SHA-256 hash and looked up by the key id.

The secret carries 256 bits from `secrets`, so a plain SHA-256 is enough (no slow KDF is needed
for high-entropy keys); the comparison is constant-time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Literal

PREFIX = "mm_"
KeyKind = Literal["service_account", "memory_service"]
KINDS: tuple[KeyKind, ...] = ("service_account", "memory_service")

_KEY_RE = re.compile(r"^mm_(?P<key_id>[a-f0-9]{16})_(?P<secret>[A-Za-z0-9]{43,64})$")


@dataclass(frozen=True)
class NewKey:
    key_id: str
    plaintext: str  # shown once to the operator, never stored
    hash: str


def hash_key(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode("utf-8")).hexdigest()


def generate() -> NewKey:
    """A fresh key: 64-bit key id (lookup) + 256-bit secret."""
    key_id = secrets.token_hex(8)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    secret = "".join(secrets.choice(alphabet) for _ in range(43))  # 43 x log2(62) ~ 256 bits
    plaintext = f"{PREFIX}{key_id}_{secret}"
    return NewKey(key_id=key_id, plaintext=plaintext, hash=hash_key(plaintext))


def key_id_of(presented: str) -> str | None:
    """The key id of a well-formed key, or None (anything else is refused without a lookup)."""
    match = _KEY_RE.fullmatch(presented.strip()) if presented else None
    return match.group("key_id") if match else None


def matches(presented: str, stored_hash: str) -> bool:
    return hmac.compare_digest(hash_key(presented.strip()), stored_hash)
