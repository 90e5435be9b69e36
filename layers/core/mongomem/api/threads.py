"""Thread routes: create (seeding working memory), list, read, update, delete and clone threads."""

from __future__ import annotations

from typing import Annotated, Protocol

from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit

from mongomem.api.identity import Caller, UserQuery
from mongomem.models.common import ID_PATTERN
from mongomem.models.working_memory import (
    Thread,
    ThreadClone,
    ThreadCloneRequest,
    ThreadCreate,
    ThreadDeleted,
    ThreadPage,
    ThreadUpdate,
)
from mongomem.observability import logger, metrics
from mongomem.requestlog import RecentRequestLog, forget_working_memory
from mongomem.workingmemory.threads import Threads

ThreadId = Annotated[str, Path(pattern=ID_PATTERN, description="The conversation thread's id (= session id)")]


Limit = Annotated[int, Query(ge=1, le=200, description="threads per page")]


Cursor = Annotated[str | None, Query(max_length=300, description="next_cursor of the previous page")]


class ThreadServices(Protocol):
    @property
    def threads(self) -> Threads: ...
    @property
    def recent_requests(self) -> RecentRequestLog: ...


def routes(svc: ThreadServices, caller: Caller) -> APIGatewayHttpRouter:
    router = APIGatewayHttpRouter()

    def _threads() -> Threads:
        return svc.threads

    @router.post(
        "/v1/threads",
        summary="Create a thread; metadata.workingMemory seeds the configured working-memory scope",
        responses={201: {}},
    )
    def post_thread(
        request: Annotated[ThreadCreate, Body(embed=False)], user_id: UserQuery = None
    ) -> tuple[Thread, int]:
        thread = _threads().create(caller.scope(request.user_id or user_id), request)
        logger.info("thread created", extra={"thread_id": thread.thread_id})
        metrics.add_metric(name="ThreadsCreated", unit=MetricUnit.Count, value=1)
        return thread, 201

    @router.get("/v1/threads", summary="A user's threads, most recently updated first")
    def list_threads(user_id: UserQuery = None, limit: Limit = 50, cursor: Cursor = None) -> ThreadPage:
        return _threads().page(caller.scope(user_id), limit, cursor)

    @router.get(
        "/v1/threads/<thread_id>", summary="A thread with its metadata (and thread-scoped working memory)"
    )
    def get_thread(thread_id: ThreadId, user_id: UserQuery = None) -> Thread:
        return _threads().get(caller.scope(user_id), thread_id)

    @router.patch(
        "/v1/threads/<thread_id>",
        summary="Change a thread's title and/or metadata; metadata.workingMemory replaces the working memory",
    )
    def patch_thread(
        thread_id: ThreadId, request: Annotated[ThreadUpdate, Body(embed=False)], user_id: UserQuery = None
    ) -> Thread:
        thread = _threads().update(caller.scope(request.user_id or user_id), thread_id, request)
        logger.info("thread updated", extra={"thread_id": thread_id})
        return thread

    @router.delete(
        "/v1/threads/<thread_id>",
        summary="Delete a thread: its turns, snapshots, recall entries and thread working memory",
    )
    def delete_thread(thread_id: ThreadId, user_id: UserQuery = None) -> ThreadDeleted:
        scope = caller.scope(user_id)
        result = _threads().delete(scope, thread_id)
        forget_working_memory(svc.recent_requests, scope, "thread", thread_id)  # its turns: without_gone
        logger.info("thread deleted", extra={"thread_id": thread_id, "deleted": result.deleted})
        return result

    @router.post(
        "/v1/threads/<thread_id>/clone",
        summary="Copy a thread's turns and thread working memory to a new thread id",
        responses={201: {}},
    )
    def clone_thread(
        thread_id: ThreadId,
        request: Annotated[ThreadCloneRequest, Body(embed=False)],
        user_id: UserQuery = None,
    ) -> tuple[ThreadClone, int]:
        result = _threads().clone(caller.scope(request.user_id or user_id), thread_id, request)
        logger.info(
            "thread cloned",
            extra={"thread_id": thread_id, "clone": result.thread.thread_id, "turns": result.turns},
        )
        return result, 201

    return router
