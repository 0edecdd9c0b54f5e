"""The app factory: the one place that chooses Quart or QuartTrio, and the routes Quart keeps.

Every A2A request is answered by the ASGI core (:mod:`a2a_actors.server._http.asgi`) in front of
Quart::

    POST /                               JSON-RPC 2.0 binding (A2A 1.0, and 0.3 methods)
    *    /rest/...                       HTTP+JSON binding (ServerConfig.rest_prefix)
    POST /message:send, /tasks/send      A2A 0.3 aliases (when ServerConfig.legacy_v0_3)

Quart keeps what is not the protocol's hot path: the app object and its lifespan (and so
``app.test_app()``), the AgentCard, ``OPTIONS``, and the JSON 404 and 405 of everything
else. The A2A paths are declared to Quart too, with the methods the core answers, so that
Quart's routing gives their ``OPTIONS`` and 405 answers; their view is never reached.

The app must be served with its lifespan (Hypercorn does; tests use ``app.test_app()``):
the runtime runs in a background task of it (a task of the lifespan nursery on trio, an
asyncio task on asyncio), started before serving and cancelled after.
"""

from __future__ import annotations

import asyncio
from typing import Literal

import anyio
import sniffio
from anyio.abc import TaskStatus
from quart import Quart, Response, request
from werkzeug.exceptions import HTTPException, MethodNotAllowed

from a2a_actors.protocol._errors import (
    A2AError,
    InvalidRequestError,
    MethodNotAllowedError,
    MethodNotFoundError,
    PayloadTooLargeError,
)
from a2a_actors.server._calls import as_a2a_error
from a2a_actors.server._config.config import ServedAgent, ServerConfig
from a2a_actors.server._http import legacy
from a2a_actors.server._http.asgi import A2ACore
from a2a_actors.server._http.responses import JSON, Answer, rest_error_answer
from a2a_actors.server._http.sse import StreamHub
from a2a_actors.server._observability.spans import CallSpans
from a2a_actors.server._push_configs import PushConfigStore
from a2a_actors.server._service import EXTENSION_KEY, A2AService, base_url

__all__ = ("Backend", "create_app", "current_backend", "service_of")

Backend = Literal["asyncio", "trio"]


def current_backend() -> Backend:
    """The async library running now (``"asyncio"`` outside any event loop)."""
    try:
        library = sniffio.current_async_library()
    except sniffio.AsyncLibraryNotFoundError:
        return "asyncio"
    if library not in ("asyncio", "trio"):
        raise RuntimeError(f"unsupported async library: {library}")
    return "trio" if library == "trio" else "asyncio"


def service_of(app: Quart) -> A2AService:
    """The :class:`A2AService` behind an app made by :func:`create_app`.

    Raises:
        TypeError: ``app`` was not made by :func:`create_app`.
    """
    service = app.extensions.get(EXTENSION_KEY)
    if not isinstance(service, A2AService):
        raise TypeError("not an a2a-actors app (use create_app)")
    return service


def _install_lifespan(app: Quart, service: A2AService, backend: Backend) -> None:
    """Run ``service.run`` as a background task of the app's lifespan, on its backend."""
    if backend == "trio":
        scopes: list[anyio.CancelScope] = []

        async def run(*, task_status: TaskStatus[None]) -> None:
            with anyio.CancelScope() as scope:
                scopes.append(scope)
                await service.run(task_status=task_status)

        @app.before_serving
        async def start_trio() -> None:
            await app.nursery.start(run)  # type: ignore[attr-defined]

        @app.after_serving
        async def stop_trio() -> None:
            for scope in scopes:
                scope.cancel()
            scopes.clear()
            await service.stopped.wait()

        return

    tasks: list[asyncio.Task[None]] = []

    @app.before_serving
    async def start_asyncio() -> None:
        task = asyncio.create_task(service.run(), name="a2a-actors service")
        tasks.append(task)
        ready = asyncio.create_task(service.started.wait())
        await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():
            ready.cancel()
            task.result()  # raises why it stopped
            raise RuntimeError("the service stopped during startup")

    @app.after_serving
    async def stop_asyncio() -> None:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        tasks.clear()


def _response(answer: Answer) -> Response:
    """The Quart response of ``answer``."""
    response: Response = Response(
        answer.body, status=answer.status, headers=dict(answer.headers), content_type=JSON
    )
    return response


def _error(error: A2AError, *, status: int | None = None, **headers: str) -> Response:
    return _response(rest_error_answer(error, status=status, headers=headers))


async def _answered_by_the_core() -> Response:
    """The view of the A2A paths: never reached, the ASGI core answers those requests."""
    raise RuntimeError("an A2A request reached Quart")


def create_app(
    target: object,
    config: ServerConfig | None = None,
    *,
    backend: Backend | None = None,
    push_store: PushConfigStore | None = None,
) -> Quart:
    """Build the A2A app for an agent.

    Args:
        target: An ``Agent``, an async function of a ``TaskContext``, an object with
            ``handle``, a :class:`ServedAgent` (its config is used unless ``config`` is
            given), or a running ``Supervisor`` whose lifetime the caller owns.
        config: The server configuration (defaults apply when omitted).
        backend: ``"trio"`` builds a QuartTrio app, ``"asyncio"`` a Quart app; default:
            the async library running now, else asyncio.
        push_store: Where push configs are kept (in memory by default).

    Returns:
        The app. Serve it with :func:`~a2a_actors.server._serve.serve` or any ASGI server
        that runs the lifespan.
    """
    if isinstance(target, ServedAgent):
        config = config or target.config
        target = target.agent
    config = config or ServerConfig()
    backend = backend or current_backend()
    if backend == "trio":
        from quart_trio import QuartTrio

        app: Quart = QuartTrio("a2a_actors")
    else:
        app = Quart("a2a_actors")
    app.config["MAX_CONTENT_LENGTH"] = config.max_body_bytes
    metrics = None
    if config.metrics is not None:  # prometheus-client, the metrics extra
        from a2a_actors.server._observability.metrics import ServerMetrics

        metrics = ServerMetrics()
    service = A2AService(
        target,
        config,
        hub=StreamHub(ping_interval=config.ping_interval),
        push_store=push_store,
        metrics=metrics,
        call_spans=CallSpans,
    )
    app.extensions[EXTENSION_KEY] = service

    _install_lifespan(app, service, backend)

    async def card() -> Response:
        url = base_url(request.scheme, request.host, request.root_path)
        rendered = service.cards.rendered(url)
        headers = {
            "ETag": rendered.etag,
            "Last-Modified": rendered.last_modified,
            "Cache-Control": rendered.cache_control,
        }
        if rendered.matches(
            request.headers.get("If-None-Match"), request.headers.get("If-Modified-Since")
        ):
            return app.response_class(b"", status=304, headers=headers)
        return _response(Answer(rendered.body, 200, headers))

    app.add_url_rule("/.well-known/agent-card.json", view_func=card, methods=["GET"])
    app.add_url_rule(
        "/.well-known/agent.json", endpoint="legacy_card", view_func=card, methods=["GET"]
    )
    core = _answered_by_the_core
    app.add_url_rule("/", endpoint="jsonrpc", view_func=core, methods=["POST"])
    rest_methods = ["GET", "POST", "DELETE", "PUT", "PATCH"]
    prefix = config.rest_prefix.rstrip("/")
    app.add_url_rule(prefix, endpoint="rest", view_func=core, methods=rest_methods)
    app.add_url_rule(
        f"{prefix}/<path:subpath>", endpoint="rest_path", view_func=core, methods=rest_methods
    )
    if config.legacy_v0_3:
        for path in legacy.ALIASES:
            app.add_url_rule(path, endpoint=f"legacy{path}", view_func=core, methods=["POST"])

    if service.metrics is not None and config.metrics is not None:
        from a2a_actors.server._observability.metrics import metrics_view

        app.add_url_rule(config.metrics.path, "metrics", metrics_view(service), methods=["GET"])

    @app.errorhandler(HTTPException)
    async def http_error(exc: HTTPException) -> Response:
        status = exc.code or 500
        if isinstance(exc, MethodNotAllowed):
            allowed = ", ".join(sorted(exc.valid_methods or ()))
            error = MethodNotAllowedError(f"{request.method} is not allowed here; use {allowed}")
            return _error(error, Allow=allowed)
        if status == 404:
            return _error(MethodNotFoundError(f"No such resource: {request.path}"))
        if status == 413:
            limit = app.config["MAX_CONTENT_LENGTH"]
            return _error(PayloadTooLargeError(f"Request body exceeds the limit of {limit} bytes"))
        return _error(InvalidRequestError(exc.description or exc.name), status=status)

    @app.errorhandler(Exception)
    async def unexpected(exc: Exception) -> Response:
        return _error(as_a2a_error(exc))

    if config.inspect is not None:  # /inspect in front of Quart (docs/observability.md)
        from a2a_actors.server._observability.inspector.app import install_inspector

        install_inspector(app, service, config.inspect)
    app.asgi_app = A2ACore(app, service, app.asgi_app)  # type: ignore[method-assign,assignment]
    return app
