"""OpenSearch adapter of the VectorIndex port: HNSW k-NN + BM25, fused client-side by RRF.

One `_msearch` round trip carries both legs of a hybrid query. Scope, kind and filters sit
inside the knn clause (efficient filtering), so a small user among many is never starved.

Two sets of rules (docs/aws-rules.md, "OpenSearch Serverless"):
- a managed domain or a node: a document's id is its `_id`, a write replaces the document of that id,
  `_refresh` makes writes visible at once when asked;
- a Serverless vector search collection (`serverless=True`): the service assigns `_id`s and refuses
  custom ones and upserts, and has no `_refresh` (writes become visible on its own schedule). A
  document's id lives in the `id` field; a write inserts the new copy (stamped with a `rev`) and then
  deletes the older copies it can see; deletes and erasure find documents by field; reads collapse
  copies of one id to the newest and delete the stale ones they meet; erasure sweeps until a search
  finds nothing of the user (or its time budget ends).
"""

from mongomem.vectors.opensearch.client import RETRY_ON_STATUS, Auth, make_client
from mongomem.vectors.opensearch.index import OpenSearchIndex

__all__ = ["RETRY_ON_STATUS", "Auth", "OpenSearchIndex", "make_client"]
