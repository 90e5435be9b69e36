"""Short-term memory: record turns, list history, promote sessions to snapshots."""
