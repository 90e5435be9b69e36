"""Offline extraction rules: `OfflineProposer` (and `RulesProposer`, the same as extraction's proposer) proposes items of one memory kind from a snapshot's
turns with deterministic patterns (no network, no model). One module per kind (semantic, episodic,
procedural, taxonomic), registered in `proposer.KINDS`; shared rule families: words (the lexicon,
lexicon.toml), mongomem.dates (date expressions), text (cleaning, sentences), phrases (names, places, noun phrases),
third_person (rewriting), speaker (who the user is). See docs/offline-extractor.md."""

from mongomem.offline.rules.proposer import OfflineProposer, RulesProposer

__all__ = ["OfflineProposer", "RulesProposer"]
