"""Long-term memories: direct writes, reads, history and deletes."""
