"""Operator routes: /v1/admin/* (AWS_IAM-authorized in template.yaml; what the CLI signs with SigV4).

They act across tenants, so only an IAM-signed caller of the deploying account may use them (or the
open local stack, which has no authorizer and no keys yet).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Protocol

from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import BaseModel, ConfigDict, StringConstraints

from mongomem.api.identity import Caller
from mongomem.errors import Forbidden
from mongomem.identity.principals import is_operator
from mongomem.identity.service import create_key, revoke_key
from mongomem.models.common import ID_PATTERN, Identifier
from mongomem.status import service_status

if TYPE_CHECKING:
    from mongomem.config import Settings
    from mongomem.identity.ports import ApiKeyRepository
    from mongomem.retrieval.reembed import EmbeddingDrift
    from mongomem.status import BacklogRepository
    from mongomem.vectors.port import VectorIndex


class CreateKeyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tenant: Identifier
    kind: str
    user: Identifier | None = None
    name: Annotated[str, StringConstraints(max_length=200)] | None = None


class AdminServices(Protocol):
    @property
    def settings(self) -> Settings: ...
    @property
    def vector_index(self) -> VectorIndex | None: ...
    @property
    def backlog(self) -> BacklogRepository: ...
    @property
    def api_keys(self) -> ApiKeyRepository: ...
    def readiness(self) -> dict[str, Any]: ...
    def store_reachable(self) -> bool: ...
    def embedding_drift(self, tenant: str | None) -> EmbeddingDrift | None: ...


def routes(svc: AdminServices, caller: Caller) -> APIGatewayHttpRouter:
    router = APIGatewayHttpRouter()

    def _operator() -> None:
        principal = caller.principal()
        if not is_operator(principal, svc.settings):
            raise Forbidden("operator routes need an IAM-signed request (SigV4) from the deploying account")

    @router.get("/v1/admin/status", summary="Readiness and backlog of every tenant (operators)")
    def admin_status() -> dict[str, Any]:
        _operator()
        # every tenant: operators only
        return service_status(
            svc.readiness(),
            svc.settings,
            svc.vector_index,
            svc.store_reachable(),
            svc.backlog,
            None,
            drift=svc.embedding_drift,
        )

    @router.post("/v1/admin/keys", summary="Create an API key; the key is shown once (operators)")
    def admin_create_key(
        request: Annotated[CreateKeyRequest, Body(embed=False)],
    ) -> tuple[dict[str, Any], int]:
        _operator()
        keys = svc.api_keys
        plaintext, record = create_key(keys, request.tenant, request.kind, request.user, request.name)
        return {"api_key": plaintext, "key": record}, 201

    @router.get("/v1/admin/keys", summary="List API keys, never their secrets (operators)")
    def admin_list_keys(
        tenant: Annotated[str | None, Query(pattern=ID_PATTERN)] = None,
    ) -> dict[str, Any]:
        _operator()
        return {"keys": [key.public() for key in svc.api_keys.list(tenant)]}

    @router.delete("/v1/admin/keys/<key_id>", summary="Revoke an API key (operators)")
    def admin_revoke_key(key_id: str) -> dict[str, Any]:
        _operator()
        revoke_key(svc.api_keys, key_id)
        return {"revoked": key_id, "note": "cached authorizer answers expire within 300 s"}

    return router
