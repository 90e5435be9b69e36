"""Extraction: turn snapshots into long-term memories, one extractor per memory type."""
