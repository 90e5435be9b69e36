"""The `mongomem` command (dev, memory, keys, snapshots, reindex, mcp): tools, never in the Lambda layer."""

from mongomem.cli.main import main

__all__ = ["main"]
