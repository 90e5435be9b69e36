"""Operator actions the CLI runs against a local or deployed stack (dead-letter re-drive)."""
