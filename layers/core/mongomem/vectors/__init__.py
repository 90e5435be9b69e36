"""Vector index port and adapters (OpenSearch, embedded); import an adapter from its module.

Adapters are not imported here so that `import mongomem.vectors` never loads opensearch-py or numpy.
"""

from mongomem.vectors.port import (
    DimensionMismatch,
    Hit,
    IndexDoc,
    IndexUnavailable,
    SearchQuery,
    VectorIndex,
)

__all__ = ["DimensionMismatch", "Hit", "IndexDoc", "IndexUnavailable", "SearchQuery", "VectorIndex"]
