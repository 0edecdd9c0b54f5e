"""The app factory: routes only, and the one place that chooses Quart or QuartTrio.

Routes::

    GET  /.well-known/agent-card.json    public AgentCard (ETag, Last-Modified, max-age; 304)
    GET  /.well-known/agent.json         the same (legacy discovery path)
    POST /                               JSON-RPC 2.0 binding (A2A 1.0, and 0.3 methods)
    *    /rest/...                       HTTP+JSON binding (ServerConfig.rest_prefix)
    POST /message:send, /tasks/send      A2A 0.3 aliases (when ServerConfig.legacy_v0_3)

Unary JSON-RPC calls on ``POST /`` are answered by an ASGI-level fast path in front of Quart
(:mod:`a2a_actors.server.fastpath`, both backends), with the same checks and answers as the
route; whatever it does not handle (streams, refusals before the body is read, ...) goes to
Quart unchanged. Everything else is a JSON 404 (or 405 with ``Allow`` for a known path); an
unexpected exception is a JSON 500, never an HTML page. An answer given before the request
body was completely received (401 without reading the body, 405, 413, 415, ...) carries
``Connection: close``: the rest of that body would otherwise be read as the start of the
next request on a keep-alive connection (Hypercorn then stalls the connection), so the
client is told to open a new one. The app must be served with its lifespan
(Hypercorn does; tests use ``app.test_app()``): the runtime and the stream pumps run in a
background task of it (a task of the lifespan nursery on trio, an asyncio task on asyncio),
started before serving and cancelled after.
"""

from __future__ import annotations

import asyncio
from typing import Literal

import anyio
import sniffio
from anyio.abc import TaskStatus
from quart import Quart, Request, Response, request
from werkzeug.exceptions import HTTPException, MethodNotAllowed

from a2a_actors.protocol.errors import InvalidRequestError, MethodNotFoundError

from . import legacy
from .config import ServedAgent, ServerConfig
from .fastpath import JsonRpcFastPath
from .jsonrpc import handle_jsonrpc
from .push_configs import PushConfigStore
from .responses import json_response, rest_error_response
from .rest import handle_rest
from .service import EXTENSION_KEY, A2AService, request_base_url
from .sse import as_a2a_error

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


def _body_unread(req: Request) -> bool:
    """Whether ``req`` announced a body that has not been completely received yet."""
    if req.content_length == 0:
        return False
    if req.content_length is None and "transfer-encoding" not in req.headers:
        return False  # no body at all
    complete = getattr(req.body, "_complete", None)  # Quart's Body and quart-trio's TrioBody
    return complete is None or not complete.is_set()


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
        The app. Serve it with :func:`~a2a_actors.server.serve.serve` or any ASGI server
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
    service = A2AService(target, config, push_store=push_store)
    app.extensions[EXTENSION_KEY] = service

    _install_lifespan(app, service, backend)

    async def card() -> Response:
        rendered = service.cards.rendered(request_base_url(request))
        headers = {
            "ETag": rendered.etag,
            "Last-Modified": rendered.last_modified,
            "Cache-Control": rendered.cache_control,
        }
        if rendered.matches(
            request.headers.get("If-None-Match"), request.headers.get("If-Modified-Since")
        ):
            return app.response_class(b"", status=304, headers=headers)
        return json_response(rendered.body, headers=headers)

    async def jsonrpc_endpoint() -> Response:
        return await handle_jsonrpc(service, request)

    async def rest_endpoint(subpath: str = "") -> Response:
        return await handle_rest(service, request, subpath)

    async def legacy_alias() -> Response:
        return await legacy.handle_alias(service, request)

    app.add_url_rule("/.well-known/agent-card.json", view_func=card, methods=["GET"])
    app.add_url_rule(
        "/.well-known/agent.json", endpoint="legacy_card", view_func=card, methods=["GET"]
    )
    app.add_url_rule("/", view_func=jsonrpc_endpoint, methods=["POST"])
    rest_methods = ["GET", "POST", "DELETE", "PUT", "PATCH"]
    prefix = config.rest_prefix.rstrip("/")
    app.add_url_rule(prefix, view_func=rest_endpoint, methods=rest_methods)
    app.add_url_rule(
        f"{prefix}/<path:subpath>",
        endpoint="rest_endpoint_path",
        view_func=rest_endpoint,
        methods=rest_methods,
    )
    if config.legacy_v0_3:
        for path in legacy.ALIASES:
            app.add_url_rule(
                path, endpoint=f"legacy{path}", view_func=legacy_alias, methods=["POST"]
            )

    @app.after_request
    async def close_if_body_unread(response: Response) -> Response:
        if _body_unread(request):
            response.headers["Connection"] = "close"
        return response

    @app.errorhandler(HTTPException)
    async def http_error(exc: HTTPException) -> Response:
        status = exc.code or 500
        if isinstance(exc, MethodNotAllowed):
            allowed = ", ".join(sorted(exc.valid_methods or ()))
            error = MethodNotFoundError(f"{request.method} is not allowed here; use {allowed}")
            return rest_error_response(error, status=405, headers={"Allow": allowed})
        if status == 404:
            return rest_error_response(MethodNotFoundError(f"No such resource: {request.path}"))
        if status == 413:
            return rest_error_response(InvalidRequestError("Request body too large"), status=413)
        return rest_error_response(InvalidRequestError(exc.description or exc.name), status=status)

    @app.errorhandler(Exception)
    async def unexpected(exc: Exception) -> Response:
        return rest_error_response(as_a2a_error(exc))

    # Unary JSON-RPC calls on POST / skip Quart (see fastpath.py); everything else, streams
    # included, still goes through the routes above.
    app.asgi_app = JsonRpcFastPath(app, service, app.asgi_app)  # type: ignore[method-assign,assignment]
    return app
