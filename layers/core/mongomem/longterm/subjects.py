"""One subject per person: the user's own facts are stored under the canonical subject "user".

Extraction and callers name the user many ways: "user", "me", the name the user stated ("Maria", "my name
is Maria"), the name their turns were recorded with, their user id. Stored under those spellings, one fact
would have several keys ("maria|home city", "user|home city"), both versions would stay active and a later
statement would supersede neither. So before a memory's key is computed, a subject that names the user is
rewritten to "user" (within the user's scope that means the user's id); the stated name stays what it is,
an attribute of the user ("user|name"). Names are known from the memories of the same write, the user's
stored name facts and the names the snapshot's user turns carry.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from mongomem.kinds import MemoryKind
from mongomem.kinds.base import norm
from mongomem.kinds.labels import names_user, subject_form
from mongomem.kinds.semantic import USER_NAME_KEYS, Semantic
from mongomem.longterm.ports import MemoryRepository
from mongomem.models.common import Scope

USER = "user"


class UserSubjects:
    """The spellings of one user: which subjects name them."""

    def __init__(
        self,
        store: MemoryRepository,
        scope: Scope,
        kind: MemoryKind,
        payloads: list[dict[str, Any]],
        names: Collection[str] = (),
    ) -> None:
        self.store, self.scope, self.kind = store, scope, kind
        self.known = {norm(n) for n in names if n and n.strip()}
        for payload in payloads:
            stated = kind.user_name(payload)
            if stated:
                self.known.add(norm(stated))
        self.stored: set[str] | None = None

    def _stored(self) -> set[str]:
        """The names the user's stored name facts hold (read once, only when a subject needs them)."""
        if self.stored is None:
            self.stored = stored_names(self.store, self.scope)
        return self.stored

    def names_user(self, subject: str) -> bool:
        if names_user(subject, self.known, self.scope.user_id):
            return True
        return names_user(subject, self._stored(), self.scope.user_id)

    def canonical(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The payload with its subject "user" when the subject names the user."""
        subject = self.kind.subject(payload)
        if subject is None or subject == USER or not self.names_user(subject):
            return payload
        named = subject_form(subject) != USER  # a name (the user's id spelled as one included) is kept
        return self.kind.with_subject(payload, USER, subject.strip() if named else None)


def stored_names(store: MemoryRepository, scope: Scope) -> set[str]:
    """The names (normalised) the user's active name facts hold: "my name is Maria", "call me Mia"."""
    facts = Semantic()
    found = store.by_keys(scope, facts.name, list(USER_NAME_KEYS), None)
    return {norm(name) for r in found if r.status == "active" and (name := facts.user_name(r.payload))}
