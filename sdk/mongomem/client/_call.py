"""A request spec (`Call`) and the `endpoint` descriptor that runs it on either client: the one-definition
machinery of mongomem.client._calls, with the helpers that turn a method's arguments into a request."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Literal, ParamSpec, Protocol, TypeVar, overload
from urllib.parse import quote

from pydantic import BaseModel

T = TypeVar("T")
P = ParamSpec("P")
M = TypeVar("M", bound=BaseModel)


def _as_is(data: Any) -> Any:
    return data


def _as_dict(data: Any) -> dict[str, Any]:
    if data is not None and not isinstance(data, dict):
        raise TypeError(f"an object was expected, not {type(data).__name__}")
    return dict(data or {})


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API request and the parser of its JSON answer."""

    method: str
    path: str
    query: Mapping[str, Any] | None = None
    body: Any = None
    # May the request be sent again after a lost answer? None: by method (reads, PUT, DELETE).
    safe: bool | None = None
    parse: Callable[[Any], T] = _as_is

    @property
    def resend_safe(self) -> bool:
        return self.method in ("GET", "HEAD", "PUT", "DELETE") if self.safe is None else self.safe

    @property
    def params(self) -> dict[str, str]:
        return {k: _query_value(v) for k, v in (self.query or {}).items() if v is not None}


class _SyncRunner(Protocol):
    is_async: Literal[False]

    def _run(self, call: Call[T]) -> T: ...


class _AsyncRunner(Protocol):
    is_async: Literal[True]

    def _run(self, call: Call[T]) -> Awaitable[T]: ...


class endpoint(Generic[P, T]):
    """A method defined once as a Call builder: `client.method(...)` builds the call and runs it."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self.build = build
        functools.update_wrapper(self, build)  # type: ignore[arg-type]

    @overload
    def __get__(self, obj: None, owner: type) -> endpoint[P, T]: ...
    @overload
    def __get__(self, obj: _SyncRunner, owner: type) -> Callable[P, T]: ...
    @overload
    def __get__(self, obj: _AsyncRunner, owner: type) -> Callable[P, Awaitable[T]]: ...
    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return self
        build = self.build

        @functools.wraps(build)
        def bound(*args: P.args, **kwargs: P.kwargs) -> Any:
            return obj._run(build(*args, **kwargs))

        return bound


@dataclass(frozen=True)
class Takes:
    """The API request models a method's parameters come from: their fields minus `fills` (fields the
    method sets itself, named in its docstring). Its other parameters are the route's path and query
    parameters (tests/unit/test_api_surface.py holds all of them to the OpenAPI document)."""

    models: tuple[type[BaseModel], ...]
    fills: tuple[str, ...] = ()

    def fields(self) -> dict[str, Any]:
        """Each field the method takes, with its FieldInfo (the first model naming it wins)."""
        out: dict[str, Any] = {}
        for model in self.models:
            for name, info in model.model_fields.items():
                if name not in self.fills:
                    out.setdefault(name, info)
        return out


def takes(
    *models: type[BaseModel], fills: tuple[str, ...] = ()
) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """Mark a method as taking these request models' fields; its docstring gains their descriptions."""
    spec = Takes(models, fills)

    def mark(build: Callable[P, T]) -> Callable[P, T]:
        lines = [
            f"    {name}: {info.description}" for name, info in spec.fields().items() if info.description
        ]
        doc = inspect.cleandoc(build.__doc__ or "")
        model_names = ", ".join(m.__name__ for m in models)
        build.__doc__ = f"{doc}\n\nParameters from the API's {model_names}:\n" + "\n".join(lines)
        build.takes = spec  # type: ignore[attr-defined]
        return build

    return mark


def _fields(model: type[BaseModel], values: Mapping[str, Any]) -> dict[str, Any]:
    """The request body: the given (not None) arguments that are the model's fields, as JSON values."""
    return {
        name: _json(values[name])
        for name in model.model_fields
        if name in values and values[name] is not None
    }


def _json(value: Any) -> Any:
    """An argument as JSON: datetimes as ISO 8601, models as their JSON, mappings and iterables copied."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, Mapping):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, str | bytes | int | float | bool):
        return value
    if isinstance(value, Iterable):
        return [_json(v) for v in value]
    return value


def _model(model: type[M]) -> Callable[[Any], M]:
    return model.model_validate


def _seg(value: str) -> str:
    return quote(str(value), safe="")


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    return _drop_none(dict(value))


def _drop_none(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if v is not None}


def json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
