"""mongomem: long-term memory for AI agents on AWS serverless (MongoDB + OpenSearch)."""

__version__ = "0.1.0"
