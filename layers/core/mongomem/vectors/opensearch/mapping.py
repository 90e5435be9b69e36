"""The index's settings and mapping: HNSW k-NN on normalised vectors, BM25 on `text`, exact-match
keywords for everything else."""

from __future__ import annotations

from typing import Any

SPACE_TYPES = ("innerproduct", "cosinesimil")
ENGINES = ("faiss", "lucene", "nmslib")
# The write stamp of a Serverless copy: later writes sort higher (nanoseconds, then a random tail).
REV = "rev"


def index_body(
    dim: int,
    *,
    engine: str,
    space_type: str,
    m: int,
    ef_construction: int,
    ef_search: int,
    shards: int | None,
    replicas: int | None,
    analyzer: str,
) -> dict[str, Any]:
    """Settings and mapping of a new index for `dim`-sized vectors (HNSW graphs of `m` links built with
    `ef_construction`, searched with `ef_search`; `shards` and `replicas` sent only when given)."""
    index_settings: dict[str, Any] = {"knn": True, "knn.algo_param.ef_search": ef_search}
    # Serverless collections reject shard settings, so they are only sent when configured.
    if shards is not None:
        index_settings["number_of_shards"] = shards
    if replicas is not None:
        index_settings["number_of_replicas"] = replicas
    method = {
        "name": "hnsw",
        "engine": engine,
        "space_type": space_type,
        "parameters": {"m": m, "ef_construction": ef_construction},
    }
    return {
        "settings": {"index": index_settings},
        "mappings": {
            "_meta": {"dim": dim, "engine": engine, "space_type": space_type},
            # The index is derived from MongoDB: keeping vectors out of _source halves its size.
            "_source": {"excludes": ["vector"]},
            # Filter fields are exact-match keywords; only `text` is analysed (BM25).
            "date_detection": False,
            "dynamic_templates": [
                {"strings_as_keywords": {"match_mapping_type": "string", "mapping": {"type": "keyword"}}}
            ],
            "properties": {
                "id": {"type": "keyword"},
                REV: {"type": "keyword"},
                "tenant": {"type": "keyword"},
                "user_id": {"type": "keyword"},
                "kind": {"type": "keyword"},
                "text": {"type": "text", "analyzer": analyzer},
                "created_at": {"type": "date"},
                "vector": {"type": "knn_vector", "dimension": dim, "method": method},
            },
        },
    }
