"""The lifecycle of an execution environment's services: config reload, secret rotation, control calls.

A Lambda execution environment builds one `Runtime` at module scope (`lambda_runtime()`); each
invocation goes through `Runtime.handler` (or `api_handler`), which
- answers control requests (`{"mongomem_control": {...}}`) with the config version and readiness this
  function runs (what `mongomem memory apply --wait` and `status` ask every function),
- re-reads the stack's applied project config when its max age has passed and rebuilds the services
  when it changed,
- on a MongoDB authentication failure refetches the secret once (a rotated password) and retries; an API
  function answers a second failure with the 503 error body.
Tests and the local stack install their own `Services` with `configure()` (runtime/process.py): every
`Runtime` of the process then hands those to its handlers.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from mongomem.errors import ConfigUnavailable, StoreAuthFailed
from mongomem.runtime import process
from mongomem.runtime.services import Services

if TYPE_CHECKING:
    from mongomem.config import ProjectConfig, Settings

R = TypeVar("R")
CONTROL_KEY = "mongomem_control"


class Runtime:
    """One execution environment's settings and services, kept in step with the applied project config."""

    def __init__(
        self,
        environ: Mapping[str, str] | None = None,
        build: Callable[[Settings], Services] = Services,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._environ = environ
        self._build = build
        self._clock = clock
        self._lock = threading.RLock()
        self._services: Services | None = None
        self._checked_at = float("-inf")
        self._config: dict[str, Any] = {
            "sha256": None,
            "source": "(defaults)",
            "loaded_at": None,
            "error": None,
        }

    # -- the services -----------------------------------------------------------------------------
    def services(self, force_config: bool = False) -> Services:
        """The current services; re-reads the applied config when its max age has passed.

        Services installed with `configure()` (the local stack, tests) win: they are the process's.
        """
        installed = process.installed()
        if installed is not None:
            return installed
        with self._lock:
            if self._services is None or force_config or self._config_due():
                self._load(force_config)
            assert self._services is not None
            return self._services

    def _config_due(self) -> bool:
        svc = self._services
        if svc is None or not svc.settings.config_parameter:
            return False
        return self._clock() - self._checked_at >= svc.settings.config_max_age

    def _load(self, force: bool) -> None:
        # the configuration's models load with the first request, not with the function (record path)
        from mongomem.config import ConfigError, settings_from_env  # lazy: 13 ms

        base = settings_from_env(self._environ)
        if not base.config_parameter:
            self._checked_at = self._clock()
            if self._services is None:
                self._services = self._build(base)
                self._config.update(source=base.config_file or "(defaults)", loaded_at=_now())
            return
        from mongomem.adapters.config_source import ConfigSourceError, read_applied  # lazy: 1.2 ms

        try:
            # This runtime keeps the config's age, so every read goes to SSM; the age counts from when
            # the read returned, as Powertools' cache would (stamped before the read, a busy function
            # could serve a value cached just after it for up to twice the max age).
            applied = read_applied(base.config_parameter, base.config_max_age, force=True)
        except ConfigSourceError as exc:
            self._checked_at = self._clock()
            if self._services is None:
                # Serving the template's defaults instead of the applied config would change what the
                # function does without anyone noticing: fail this invocation (the API answers 503).
                from mongomem.observability import logger  # lazy: 10 ms

                logger.warning("project config not readable; serving nothing yet", extra={"error": str(exc)})
                raise ConfigUnavailable(
                    f"the project configuration could not be read: {exc}", {"retry_after_seconds": 2}
                ) from exc
            self._failed(base, str(exc))
            return
        self._checked_at = self._clock()
        sha = hashlib.sha256(applied.text.encode()).hexdigest() if applied.text is not None else None
        if self._services is not None and sha == self._config["sha256"] and not self._config["error"]:
            return
        try:
            project = _parse(applied.text, applied.source) if applied.text is not None else base.project
            settings = settings_from_env(
                self._environ,
                project=project,
                config_sha256=sha,
                config_source="deployed" if sha else "defaults",
            )
        except ConfigError as exc:
            self._failed(base, str(exc), sha)
            return
        built = self._build(settings)
        try:
            built.check_custom_types()  # a custom type's schema may not change incompatibly
        except ConfigError as exc:
            self._failed(base, str(exc), sha)
            return
        self._services = built
        self._config = {"sha256": sha, "source": applied.source, "loaded_at": _now(), "error": None}
        _log_config(self._config)

    def _failed(self, base: Settings, error: str, sha: str | None = None) -> None:
        """Keep serving the last good config; with none yet, run on the template defaults and say why."""
        from mongomem.observability import logger  # lazy: 10 ms

        logger.error("project config not loaded; keeping the previous one", extra={"error": error})
        if self._services is None:
            self._services = self._build(base)
        self._config.update(error=error, failed_sha256=sha)

    def config_report(self) -> dict[str, Any]:
        """What `mongomem memory status` shows for this function: the config it runs, and why not another."""
        with self._lock:
            return dict(self._config)

    # -- the handler wrapper ----------------------------------------------------------------------
    def handler(self, fn: Callable[[dict[str, Any], Any, Services], R]) -> Callable[[Any, Any], Any]:
        """Wrap a Lambda handler `fn(event, context, services)` (see the module docstring)."""
        return self._wrap(fn, api=False)

    def api_handler(self, fn: Callable[[dict[str, Any], Any, Services], R]) -> Callable[[Any, Any], Any]:
        """`handler` for an API function: a second MongoDB authentication failure is answered 503 (with
        the API's error body), never a gateway 500."""
        return self._wrap(fn, api=True)

    def _wrap(self, fn: Callable[[dict[str, Any], Any, Services], R], api: bool) -> Callable[[Any, Any], Any]:
        @functools.wraps(fn)
        def wrapped(event: Any, context: Any) -> Any:
            if isinstance(event, dict) and CONTROL_KEY in event:
                return self.control(event.get(CONTROL_KEY) or {})

            try:
                svc = self.services()
            except ConfigUnavailable as exc:
                if _is_http_api(event):  # the caller gets a retryable 503, not API Gateway's 500
                    return _unavailable_response(exc)
                raise
            try:
                return fn(event, context, svc)
            except StoreAuthFailed:
                # A changed secret: run again on it. Unchanged: run again anyway, as the final attempt, so
                # the API answers its 503 instead of a gateway 500 (other handlers raise again).
                self._reconnect(svc)
            try:
                return fn(event, context, self.services())
            except StoreAuthFailed as exc:
                if not api:
                    raise
                return _unavailable_response(exc, retry_after=False)

        return wrapped

    def bare_handler(self, fn: Callable[[Any, Any], R]) -> Callable[[Any, Any], Any]:
        """Wrap a handler that builds its services itself, inside its own error handling (the deploy-time
        custom resource); control invocations are answered as `handler` answers them."""

        @functools.wraps(fn)
        def wrapped(event: Any, context: Any) -> Any:
            if isinstance(event, dict) and CONTROL_KEY in event:
                return self.control(event.get(CONTROL_KEY) or {})
            return fn(event, context)

        return wrapped

    def _reconnect(self, failed: Services) -> bool:
        """Refetch the MongoDB secret; rebuild the services when it changed (a rotated password)."""
        from mongomem.observability import logger  # lazy: 10 ms

        arn = failed.settings.mongodb_secret_arn
        if not arn:
            return False
        from mongomem.adapters.secrets import mongodb_uri_from_secret  # lazy: 15 ms

        uri = mongodb_uri_from_secret(arn, force=True)
        if uri == failed.mongodb_uri:
            logger.error("MongoDB authentication failed and the secret is unchanged")
            return False
        logger.warning("MongoDB authentication failed; the secret changed (rotation), reconnecting")
        with self._lock:
            self._services = self._build(failed.settings)
        return True

    def control(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Answer a control invocation: the config this function runs and whether it is ready."""
        svc = self.services(force_config=bool(request.get("refresh")))
        report = svc.readiness()
        config = self.config_report()
        if config.get("error"):
            report["ready"] = False
            report["reasons"].append(f"config: {config['error']}")
        return {
            "function": svc.settings.function_name,
            "stage": svc.settings.stage,
            "config": config,
            "ready": report["ready"],
            "reasons": report["reasons"],
            "llm": report["llm"],
            "embeddings": report["embeddings"],
            "extraction": [str(t) for t in svc.settings.enabled_extractions],
        }


def _is_http_api(event: Any) -> bool:
    return isinstance(event, dict) and "http" in (event.get("requestContext") or {}) and "routeKey" in event


def _unavailable_response(exc: Any, retry_after: bool = True) -> dict[str, Any]:
    body = {"error": {"code": exc.code, "message": exc.message, "details": exc.details}}
    headers = {"Content-Type": "application/json"}
    if retry_after:
        headers["Retry-After"] = "2"
    return {
        "statusCode": 503,
        "headers": headers,
        "body": json.dumps(body, default=str),
        "isBase64Encoded": False,
    }


def _parse(text: str, source: str) -> ProjectConfig:
    from mongomem.config import ConfigError, parse_project_config  # lazy: 14 ms

    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"invalid configuration in {source}: not valid JSON ({exc})") from exc
    return parse_project_config(data, source)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _log_config(config: dict[str, Any]) -> None:
    from mongomem.observability import logger  # lazy: 11 ms

    logger.info(
        "project config loaded", extra={"config_sha256": config["sha256"], "source": config["source"]}
    )


def lambda_runtime() -> Runtime:
    """The process's composition root (one per Lambda execution environment)."""
    return process.root(Runtime)
