"""Every long-term write: `decide` (pure reconciliation rules) and `MemoryWriter` (applies a verdict to
the repository, the versions' history and the search index). Extraction proposes, the API and imports
call the writer, retrieval only reads."""
