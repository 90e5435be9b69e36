"""The demo providers, fenced off from the product: no model, no network, no account.

- `rules/`: the offline extractor (deterministic patterns per memory kind, its lexicon as data) and
  `RulesProposer`, extraction's proposer when the configuration names the offline LLM;
- `llm_offline.OfflineLLM`: the "offline" LLM setting (answers nothing; reconciliation decides by rules);
- `llm_scripted.ScriptedLLM`: replays recorded answers (tests and demos);
- `embed_hashing.HashingEmbedder`: feature hashing, the embedder of last resort.

Product code never imports this package: only the composition point that picks providers
(`mongomem.providers.factory`) does, an import-linter contract in pyproject.toml keeps it so.
"""
