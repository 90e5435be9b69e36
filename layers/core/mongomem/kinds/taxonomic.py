"""Domain terms: a term, its definition and its aliases (abbreviations, synonyms)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from mongomem.kinds.base import Item, MemoryKind, add_unique
from mongomem.kinds.fields import Long, Short
from mongomem.kinds.meaning import norm


class TaxonomicItem(Item):
    """A domain term with its definition and aliases."""

    term: Short
    definition: Long
    aliases: list[Short] = Field(default_factory=list, max_length=50)
    domain: Short | None = Field(
        None, description="the field the term belongs to, e.g. 'aviation', 'billing'"
    )
    related_terms: list[Short] = Field(default_factory=list, max_length=50)


class Taxonomic(MemoryKind):
    name = "taxonomic"
    item = TaxonomicItem
    visibility = "org"
    unordered = frozenset({"aliases", "related_terms"})
    named = ("term",)
    alias_fields = frozenset({"aliases"})
    instructions = (
        "Extract TERMS only: domain terms with their definitions and aliases (abbreviations, synonyms) as used "
        "in this conversation, the domain they belong to and related terms when stated."
    )

    def key(self, payload: dict[str, Any]) -> str:
        return norm(payload["term"])

    def text(self, payload: dict[str, Any]) -> str:
        aliases = ", ".join(payload.get("aliases") or [])
        head = f"{payload['term']} ({aliases})" if aliases else payload["term"]
        return f"{head}: {payload['definition']}"

    def value(self, payload: dict[str, Any]) -> str:
        return str(payload["definition"])

    def name_of(self, payload: dict[str, Any]) -> str:
        return str(payload["term"])

    def merged(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
        out = dict(old)
        aliases = list(old.get("aliases") or [])
        grown = add_unique([*aliases, old["term"]], [*(new.get("aliases") or []), new["term"]])
        if grown is not None:
            out["aliases"] = [*aliases, *grown[len(aliases) + 1 :]]
        related = add_unique(list(old.get("related_terms") or []), list(new.get("related_terms") or []))
        if related is not None:
            out["related_terms"] = related
        if not old.get("domain") and new.get("domain"):
            out["domain"] = new["domain"]
        out = self.capped(out, old)
        return out if out != old else None

    def updated(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        # a new definition keeps the aliases the term was known by
        merged = add_unique(list(new.get("aliases") or []), list(old.get("aliases") or []))
        # the new version's own aliases first (what its speaker said), the old ones where room is left
        return self.capped({**new, "aliases": merged}, new) if merged else new
