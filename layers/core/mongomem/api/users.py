"""User routes: the tenant's users, a user's sessions and recent calls, and erasing a user everywhere."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Protocol

from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit

from mongomem.api.identity import Caller
from mongomem.directory import user_page
from mongomem.erasure import ErasureResult, erase_user
from mongomem.models.common import ID_PATTERN
from mongomem.models.requests import RecentRequests
from mongomem.models.sessions import SessionPage
from mongomem.models.users import UserPage
from mongomem.observability import logger, metrics
from mongomem.requestlog import KEPT, without_gone

if TYPE_CHECKING:
    from mongomem.directory import DirectoryRepository
    from mongomem.erasure import ErasureRepository
    from mongomem.kinds import KindRegistry
    from mongomem.longterm.ports import MemoryRepository
    from mongomem.longterm.write.indexing import MemoryIndexer
    from mongomem.requestlog import RecentRequestLog
    from mongomem.shortterm.history import History
    from mongomem.shortterm.ports import TurnRepository
    from mongomem.vectors.port import VectorIndex


UserId = Annotated[str, Path(pattern=ID_PATTERN, description="The memory user")]


Limit = Annotated[int, Query(ge=1, le=200)]


class UserServices(Protocol):
    @property
    def directory(self) -> DirectoryRepository: ...
    @property
    def history(self) -> History: ...
    @property
    def recent_requests(self) -> RecentRequestLog: ...
    @property
    def memory_store(self) -> MemoryRepository: ...
    @property
    def turns(self) -> TurnRepository: ...
    @property
    def kinds(self) -> KindRegistry: ...
    @property
    def erasure(self) -> ErasureRepository: ...
    @property
    def vector_index(self) -> VectorIndex | None: ...
    @property
    def indexer(self) -> MemoryIndexer: ...


def routes(svc: UserServices, caller: Caller) -> APIGatewayHttpRouter:
    router = APIGatewayHttpRouter()

    @router.get("/v1/users", summary="The tenant's memory users with their counts, by user_id (paginated)")
    def list_users(
        limit: Limit = 50,
        cursor: Annotated[
            str | None, Query(pattern=ID_PATTERN, description="next_cursor of the last page")
        ] = None,
    ) -> UserPage:
        return user_page(svc.directory, caller.principal(), limit, cursor)

    @router.get("/v1/users/<user_id>/sessions", summary="A user's sessions, most recently active first")
    def list_user_sessions(
        user_id: UserId,
        limit: Limit = 50,
        cursor: Annotated[
            str | None, Query(max_length=200, description="next_cursor of the last page")
        ] = None,
    ) -> SessionPage:
        scope = caller.path_scope(user_id)
        return svc.history.session_page(scope, limit, cursor)

    @router.get(
        "/v1/users/<user_id>/requests",
        summary="The user's latest search, recall and context calls: what each returned and why (newest first)",
    )
    def list_user_requests(
        user_id: UserId, limit: Annotated[int, Query(ge=1, le=KEPT, description="calls to return")] = KEPT
    ) -> RecentRequests:
        scope = caller.path_scope(user_id)
        calls = without_gone(svc.recent_requests.latest(scope, limit), svc.memory_store, scope, svc.turns)
        return RecentRequests(user_id=scope.user_id, kept=KEPT, requests=calls)

    @router.delete(
        "/v1/users/<user_id>",
        summary="Erase a user: turns, sessions, snapshots, memories and versions, working memory, index entries",
    )
    def delete_user(user_id: UserId) -> ErasureResult:
        # A service account is one memory user: it may erase itself, never someone it names.
        scope = caller.path_scope(user_id)
        kinds = svc.kinds

        def text_of(name: str, payload: dict[str, Any]) -> str:
            kind = kinds.get(name)
            if kind is None:
                raise KeyError(name)  # a custom type no longer declared: its org memories are kept whole
            return kind.text(payload)

        result = erase_user(svc.erasure, svc.vector_index, scope, svc.indexer.sync_ids, text_of)
        logger.info("user erased", extra={"erased": result.erased})
        metrics.add_metric(name="UsersErased", unit=MetricUnit.Count, value=1)
        return result

    return router
