"""The HTTP+JSON binding, mounted under ``ServerConfig.rest_prefix`` (``/rest``).

Routes (reference §5.1; paths relative to the prefix)::

    POST   /message:send                          SendMessage           {"task"|"message": …}
    POST   /message:stream                        SendStreamingMessage  SSE of StreamResponse
    GET    /tasks/{id}?historyLength=             GetTask               Task
    GET    /tasks?contextId=&status=&…            ListTasks             ListTasksResponse
    POST   /tasks/{id}:cancel                     CancelTask            Task
    GET|POST /tasks/{id}:subscribe                SubscribeToTask       SSE of StreamResponse
    POST   /tasks/{id}/pushNotificationConfigs    Create push config
    GET    /tasks/{id}/pushNotificationConfigs    List push configs     ?pageSize=&pageToken=
    GET    /tasks/{id}/pushNotificationConfigs/{cid}   Get push config
    DELETE /tasks/{id}/pushNotificationConfigs/{cid}   Delete push config  {}
    GET    /extendedAgentCard                     GetExtendedAgentCard  AgentCard

Every route is also served below a ``/{tenant}`` segment (``/rest/acme/message:send``): the
tenant goes into the request's ``tenant`` field (the path wins over the body) and reaches
the agent as ``ctx.tenant``. A path that matches a route without a tenant is that route.

Query parameters are accepted in camelCase and snake_case. Errors are ``google.rpc.Status``
bodies with the HTTP status of the protocol's error table; an unknown path is 404
(MethodNotFound) and a known path with another method is 405. Check order as for JSON-RPC:
405, 401, Content-Type (415), size (413), JSON (-32700 as 400), ``A2A-Version`` (400),
params (400).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import msgspec
from werkzeug.sansio.utils import get_content_length

from a2a_actors.protocol import codec
from a2a_actors.protocol._errors import (
    A2AError,
    ContentTypeNotSupportedError,
    InvalidParamsError,
    MethodNotAllowedError,
    MethodNotFoundError,
    ParseError,
    UnauthenticatedError,
)
from a2a_actors.protocol._models import Message
from a2a_actors.protocol._requests import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    SendMessageRequest,
    SendMessageResponse,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)
from a2a_actors.server._calls import as_a2a_error
from a2a_actors.server._checks import (
    HeaderLookup,
    check_content_type,
    is_supported_v1,
    requested_version,
    version_error,
)
from a2a_actors.server._http.responses import REST, Answer, rest_error_answer
from a2a_actors.server._http.sse import LAST_EVENT_ID, StreamCall, StreamFactory, resume_point
from a2a_actors.server._methods import CallContext, Methods
from a2a_actors.server._service import A2AService

__all__ = ("ROUTES", "admit")

T = TypeVar("T")
_SNAKE = re.compile(r"_([a-z0-9])")
_ID = r"(?P<id>[^/]+)"


@dataclass(frozen=True, slots=True)
class _Inputs:
    path: dict[str, str]
    query: dict[str, str]
    body: bytes
    tenant: str = ""

    def from_path(self, **fields: str) -> dict[str, str]:
        """``fields`` and the path's tenant, for the request to decode (they win)."""
        return {**fields, "tenant": self.tenant} if self.tenant else fields


Unary = Callable[[Methods, _Inputs, CallContext], Awaitable[object]]
Streaming = Callable[[Methods, _Inputs, CallContext], StreamFactory]


def _camel(name: str) -> str:
    return _SNAKE.sub(lambda m: m.group(1).upper(), name)


def _convert(obj: dict[str, Any], type_: type[T]) -> T:
    """Typed request from JSON builtins; query strings may stand for numbers and booleans."""
    try:
        return codec.convert(obj, type_, strict=False)
    except msgspec.ValidationError as exc:
        message, field = codec.error_path(exc)
        raise InvalidParamsError(message, field=field or "params") from None


def _object(body: bytes) -> dict[str, Any]:
    """The JSON object of a body (``{}`` when empty)."""
    if not body.strip():
        return {}
    try:
        value = codec.decode(body, dict[str, Any])
    except (msgspec.ValidationError, RecursionError):
        raise InvalidParamsError("the body must be a JSON object", field="body") from None
    except (msgspec.DecodeError, UnicodeDecodeError):
        raise ParseError() from None
    return value


def _body(body: bytes, type_: type[T], **from_path: str) -> T:
    """Decode a body into ``type_`` (path parameters win over body fields)."""
    if not from_path:
        try:
            return codec.decode(body or b"{}", type_)
        except msgspec.ValidationError as exc:
            message, field = codec.error_path(exc)
            raise InvalidParamsError(message, field=field or "params") from None
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            raise ParseError() from None
    obj = _object(body)
    try:
        return codec.convert({**obj, **from_path}, type_)
    except msgspec.ValidationError as exc:
        message, field = codec.error_path(exc)
        raise InvalidParamsError(message, field=field or "params") from None


def _query(inputs: _Inputs, type_: type[T], **from_path: str) -> T:
    return _convert({**{_camel(k): v for k, v in inputs.query.items()}, **from_path}, type_)


async def _send(m: Methods, i: _Inputs, c: CallContext) -> object:
    result = await m.send_message(_body(i.body, SendMessageRequest, **i.from_path()), c)
    if isinstance(result, Message):
        return SendMessageResponse(message=result)
    return SendMessageResponse(task=result)


async def _get(m: Methods, i: _Inputs, c: CallContext) -> object:
    return await m.get_task(_query(i, GetTaskRequest, **i.from_path(id=i.path["id"])), c)


async def _list(m: Methods, i: _Inputs, c: CallContext) -> object:
    return await m.list_tasks(_query(i, ListTasksRequest, **i.from_path()), c)


async def _cancel(m: Methods, i: _Inputs, c: CallContext) -> object:
    request = _body(i.body, CancelTaskRequest, **i.from_path(id=i.path["id"]))
    return await m.cancel_task(request, c)


async def _create(m: Methods, i: _Inputs, c: CallContext) -> object:
    config = _body(i.body, TaskPushNotificationConfig, **i.from_path(taskId=i.path["id"]))
    return await m.create_push_config(config, c)


async def _list_configs(m: Methods, i: _Inputs, c: CallContext) -> object:
    request = _query(i, ListTaskPushNotificationConfigsRequest, **i.from_path(taskId=i.path["id"]))
    return await m.list_push_configs(request, c)


async def _get_config(m: Methods, i: _Inputs, c: CallContext) -> object:
    request = GetTaskPushNotificationConfigRequest(
        task_id=i.path["id"], id=i.path["cid"], tenant=i.tenant
    )
    return await m.get_push_config(request, c)


async def _delete_config(m: Methods, i: _Inputs, c: CallContext) -> object:
    request = DeleteTaskPushNotificationConfigRequest(
        task_id=i.path["id"], id=i.path["cid"], tenant=i.tenant
    )
    await m.delete_push_config(request, c)
    return {}


async def _card(m: Methods, i: _Inputs, c: CallContext) -> object:
    return await m.extended_card(c)


def _stream(m: Methods, i: _Inputs, c: CallContext) -> StreamFactory:
    request = _body(i.body, SendMessageRequest, **i.from_path())
    return lambda: m.stream_message(request, c)


def _subscribe(m: Methods, i: _Inputs, c: CallContext) -> StreamFactory:
    request = SubscribeToTaskRequest(id=i.path["id"], tenant=i.tenant)
    return lambda: m.subscribe(request, c)


@dataclass(frozen=True, slots=True)
class _Route:
    pattern: re.Pattern[str]
    unary: Mapping[str, Unary]
    streaming: Mapping[str, Streaming]
    public: bool = False  # answered without credentials when the extended card is public

    @property
    def allowed(self) -> str:
        return ", ".join(sorted({*self.unary, *self.streaming}))


def _r(
    pattern: str,
    unary: Mapping[str, Unary] | None = None,
    streaming: Mapping[str, Streaming] | None = None,
    *,
    public: bool = False,
) -> _Route:
    return _Route(re.compile(pattern), unary or {}, streaming or {}, public)


#: The routes below the prefix; the first pattern that matches the path decides.
ROUTES: tuple[_Route, ...] = (
    _r(r"message:send", {"POST": _send}),
    _r(r"message:stream", streaming={"POST": _stream}),
    _r(rf"tasks/{_ID}:cancel", {"POST": _cancel}),
    _r(rf"tasks/{_ID}:subscribe", streaming={"GET": _subscribe, "POST": _subscribe}),
    _r(rf"tasks/{_ID}/pushNotificationConfigs", {"POST": _create, "GET": _list_configs}),
    _r(
        rf"tasks/{_ID}/pushNotificationConfigs/(?P<cid>[^/]+)",
        {"GET": _get_config, "DELETE": _delete_config},
    ),
    _r(rf"tasks/{_ID}", {"GET": _get}),
    _r(r"tasks", {"GET": _list}),
    _r(r"extendedAgentCard", {"GET": _card}, public=True),
)


def _match(subpath: str) -> tuple[_Route, dict[str, str], str] | None:
    """The route of ``subpath``, its path parameters and its tenant ("" when none)."""
    for route in ROUTES:
        m = route.pattern.fullmatch(subpath)
        if m is not None:
            return route, m.groupdict(), ""
    tenant, slash, rest = subpath.partition("/")
    if slash and tenant:
        for route in ROUTES:
            m = route.pattern.fullmatch(rest)
            if m is not None:
                return route, m.groupdict(), tenant
    return None


def admit(
    service: A2AService,
    method: str,
    subpath: str,
    headers: HeaderLookup,
    base_url: str,
    query: Mapping[str, str],
) -> _RestCall | Answer:
    """The checks before the body of a request below the prefix, in order: route (404),
    method (405), credentials (401), Content-Type (415, only when a body is read); then
    the :class:`~a2a_actors.server._http.asgi.Exchange` that answers the body.

    Args:
        service: The served agent.
        method: The HTTP method.
        subpath: The path below the prefix.
        headers: The request headers.
        base_url: The request's base URL (see :func:`~a2a_actors.server._service.base_url`).
        query: The query arguments (the first value of each name).
    """
    found = _match(subpath.strip("/"))
    if found is None:
        return rest_error_answer(MethodNotFoundError(f"No such resource: /{subpath}"))
    route, path, tenant = found
    method = method.upper()
    unary, streaming = route.unary.get(method), route.streaming.get(method)
    if unary is None and streaming is None:
        return rest_error_answer(
            MethodNotAllowedError(f"{method} is not allowed here; use {route.allowed}"),
            headers={"Allow": route.allowed},
        )
    try:
        ctx = service.context_for(headers, base_url, binding="rest")
    except UnauthenticatedError as exc:
        if not (route.public and service.extended_card_is_public()):
            return rest_error_answer(exc, challenge=service.auth.challenge(exc))
        ctx = service.anonymous_context_for(headers, base_url, binding="rest")
    response_headers = service.response_headers(ctx)
    length = get_content_length(headers.get("Content-Length"), headers.get("Transfer-Encoding"))
    read = method != "GET" and length != 0
    if read:
        try:
            check_content_type(headers.get("Content-Type"))
        except ContentTypeNotSupportedError as exc:
            return rest_error_answer(exc, status=415, headers=response_headers)
    return _RestCall(
        service, ctx, unary, streaming, path, dict(query), tenant, headers, response_headers, read
    )


@dataclass(frozen=True, slots=True)
class _RestCall:
    """An admitted request below the prefix (an :class:`~a2a_actors.server._http.asgi.Exchange`)."""

    service: A2AService
    ctx: CallContext
    unary: Unary | None
    streaming: Streaming | None
    path: dict[str, str]
    query: dict[str, str]
    tenant: str
    headers: HeaderLookup
    response_headers: Mapping[str, str]
    read: bool

    def refuse(self, error: A2AError, status: int) -> Answer:
        return rest_error_answer(error, status=status, headers=self.response_headers)

    def respond(self, body: bytes) -> Answer | StreamCall | Coroutine[Any, Any, Answer]:
        headers = self.response_headers
        try:
            version = requested_version(self.headers, self.query)
            if not is_supported_v1(version):
                raise version_error(version)
            inputs = _Inputs(self.path, self.query, body, self.tenant)
            if self.streaming is not None:
                ctx = self.ctx
                if self.streaming is _subscribe:  # a cut stream resumes with Last-Event-ID
                    after = resume_point(self.headers.get(LAST_EVENT_ID))
                    if after is not None:
                        ctx = replace(ctx, after=after)
                factory = self.streaming(self.service.methods, inputs, ctx)
                return StreamCall(factory, REST, None, headers)
        except Exception as exc:
            return rest_error_answer(as_a2a_error(exc), headers=headers)
        return self._unary(inputs)

    async def _unary(self, inputs: _Inputs) -> Answer:
        headers = self.response_headers
        assert self.unary is not None
        try:
            result = await self.unary(self.service.methods, inputs, self.ctx)
        except Exception as exc:
            return rest_error_answer(as_a2a_error(exc), headers=headers)
        return Answer(codec.encode(result), 200, headers)
