"""The ``/inspect`` page and its API, as an ASGI layer in front of Quart.

:func:`install_inspector` (called by ``create_app`` when ``ServerConfig.inspect`` is set)
puts an :class:`Inspector` in front of the app's Quart ASGI app and adds its feed to the
Supervisor while the app serves. Requests below ``/inspect`` are answered here (``GET``
and ``HEAD``; anything else is 405); every other request goes on to Quart unchanged::

    GET /inspect/                       the page (HTML), /inspect/inspector.js, .css
                                        (``/inspect`` redirects there)
    GET /inspect/api/tasks              ?state=&pageSize=&pageToken=: the task rows (ListTasks) GET
    /inspect/api/tasks/{id}/events  the task's row, timeline and hop facts (GetTask) GET
    /inspect/api/tasks/{id}/tree    the hop tree below the task
    (:mod:`.hops`) GET /inspect/api/stream
    SSE: the caller's task updates (:mod:`a2a_actors.server._observability.inspector.feed`)

Auth: the page and its two files are public (they hold no data, like the AgentCard); every
``/inspect/api`` request is authenticated exactly like an A2A request (401 with the same
``WWW-Authenticate`` challenge) and reads through the A2A methods with the caller's rights,
so a caller sees only its own tasks, as with ListTasks. Credentials are taken from headers
only (no cookie, nothing in the URL), so no other site can make a browser use them. The
page sends them from script once its user typed them.

The stream is tracked by the service's :class:`~a2a_actors.server._http.sse.StreamHub`, so
shutdown ends it; a client that leaves ends it at once (its ``http.disconnect`` is
watched), and an idle one gets ``: ping`` every ``ping_interval``.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlparse

import anyio
import httpx
import msgspec
from quart import Quart

from a2a_actors.protocol._errors import (
    InvalidParamsError,
    MethodNotFoundError,
    UnauthenticatedError,
)
from a2a_actors.protocol._models import Task
from a2a_actors.protocol._requests import GetTaskRequest, ListTasksRequest
from a2a_actors.protocol._sse import encode_comment, encode_event
from a2a_actors.runtime import Supervisor
from a2a_actors.server._calls import as_a2a_error
from a2a_actors.server._config.inspector import InspectorOptions
from a2a_actors.server._http.asgi import ScopeHeaders
from a2a_actors.server._http.responses import (
    Answer,
    Receive,
    Send,
    rest_error_answer,
    send_answer,
)
from a2a_actors.server._http.sse import SSE_HEADERS
from a2a_actors.server._methods import CallContext
from a2a_actors.server._observability.inspector.feed import InspectorFeed, Lane
from a2a_actors.server._observability.inspector.hops import PeerReader, read_tree
from a2a_actors.server._observability.inspector.views import (
    hop_facts,
    http_url,
    parse_state,
    row_of,
    snapshot_timeline,
)
from a2a_actors.server._service import A2AService, ServerNotRunningError, base_url

__all__ = ("PREFIX", "Inspector", "install_inspector")

#: Where the page is served.
PREFIX = "/inspect"

ASGIApp = Callable[..., Awaitable[None]]

_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/inspector.js": ("inspector.js", "text/javascript; charset=utf-8"),
    "/inspector.css": ("inspector.css", "text/css; charset=utf-8"),
}
#: Headers of the page's files: nothing from elsewhere, no framing, no referrer.
_PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
_API_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
_PING = encode_comment("ping")


def _read_file(name: str) -> bytes:
    return (importlib.resources.files(__package__) / "static" / name).read_bytes()


class Inspector:
    """The ASGI layer of the page (see the module docstring).

    Args:
        service: The app's service (auth, methods, stream hub).
        options: The inspector's options.
        inner: The app this layer is in front of.
    """

    def __init__(self, service: A2AService, options: InspectorOptions, inner: ASGIApp) -> None:
        self._service = service
        self._options = options
        self._inner = inner
        self.feed = InspectorFeed(
            agent=service.agent.name,
            buffer=options.buffer,
            max_tasks=options.max_tasks,
            max_events=options.max_events,
        )
        self._observed: Supervisor | None = None
        self._files = {path: (_read_file(name), kind) for path, (name, kind) in _FILES.items()}

    # -- lifetime: the feed observes the Supervisor while the app serves ---------------

    async def attach(self) -> None:
        """Start observing the Supervisor (the app's ``before_serving``, after the service's)."""
        supervisor = self._service.methods.supervisor
        supervisor.add_observer(self.feed)
        self._observed = supervisor

    async def detach(self) -> None:
        """Stop observing (the app's ``after_serving``): a Supervisor the caller owns may
        outlive the app."""
        if self._observed is not None:
            self._observed.remove_observer(self.feed)
            self._observed = None

    # -- requests -----------------------------------------------------------------------

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        path = _path(scope) if scope["type"] == "http" else None
        if path is None or not (path == PREFIX or path.startswith(PREFIX + "/")):
            await self._inner(scope, receive, send)
            return
        rest = path[len(PREFIX) :]
        if scope["method"] not in ("GET", "HEAD"):
            error = MethodNotFoundError(f"{scope['method']} is not allowed here; use GET")
            await send_answer(
                send, rest_error_answer(error, status=405, headers={"Allow": "GET, HEAD"})
            )
            return
        if not rest:  # the page's links are relative to /inspect/ (root_path kept)
            await send_answer(send, Answer(b"", 308, {"Location": "inspect/"}))
            return
        found = self._files.get(rest)
        if found is not None:
            await _send_file(send, *found)
            return
        if not rest.startswith("/api/"):
            await send_answer(
                send, rest_error_answer(MethodNotFoundError(f"No such resource: {path}"))
            )
            return
        headers = ScopeHeaders(scope["headers"])
        try:
            ctx = self._service.context_for(headers, _base_url(scope, headers))
            if rest == "/api/stream":
                await self._stream(ctx, receive, send)
                return
            answer = await self._api(rest[len("/api/") :], _query(scope), ctx)
        except UnauthenticatedError as exc:
            answer = rest_error_answer(exc, challenge=self._service.auth.challenge(exc))
        except ServerNotRunningError:
            answer = Answer(b'{"error":{"code":503,"message":"not serving"}}', 503)
        except Exception as exc:
            answer = rest_error_answer(as_a2a_error(exc))
        await send_answer(
            send, Answer(answer.body, answer.status, {**answer.headers, **_API_HEADERS})
        )

    async def _api(self, route: str, query: dict[str, str], ctx: CallContext) -> Answer:
        if route == "tasks":
            return _json(await self._tasks(query, ctx))
        if route.startswith("tasks/"):
            task_id, _, what = route[len("tasks/") :].rpartition("/")
            if task_id and what == "events":
                return _json(await self._events(task_id, ctx))
            if task_id and what == "tree":
                return _json(await self._tree(task_id, ctx))
        raise MethodNotFoundError(f"No such resource: {PREFIX}/api/{route}")

    async def _tasks(self, query: dict[str, str], ctx: CallContext) -> dict[str, Any]:
        """One page of the caller's tasks, newest first (ListTasks, ``historyLength`` 1)."""
        state = query.get("state", "")
        try:
            status = parse_state(state) if state and state != "all" else None
        except ValueError:
            raise InvalidParamsError(f"unknown state {state!r}", field="state") from None
        size_text = query.get("pageSize", "50")
        if not size_text.isdigit() or not 1 <= int(size_text) <= 100:
            raise InvalidParamsError("pageSize must be between 1 and 100", field="pageSize")
        request = ListTasksRequest(
            status=status,
            page_size=int(size_text),
            page_token=query.get("pageToken", ""),
            history_length=1,
        )
        page = await self._service.methods.list_tasks(request, ctx)
        return {
            "agent": self.feed.agent,
            "tasks": [self._row(task, ctx) for task in page.tasks],
            "nextPageToken": page.next_page_token,
            "totalSize": page.total_size,
        }

    def _row(self, task: Task, ctx: CallContext) -> dict[str, Any]:
        log = self.feed.log(task.id, ctx.caller)
        if log is None:
            return row_of(task, self.feed.agent)
        return row_of(task, log.agent, log.first_seen)

    async def _events(self, task_id: str, ctx: CallContext) -> dict[str, Any]:
        """The task's row, its timeline (recorded events, else read from its snapshot), and
        what its hop record says of its parent."""
        task = await self._service.methods.get_task(GetTaskRequest(id=task_id), ctx)
        log = self.feed.log(task.id, ctx.caller)
        facts = hop_facts(task.metadata)
        parent = None
        if facts is not None and facts.parent_task_id:
            link = http_url(facts.parent_url)
            parent = {
                "agent": facts.parent_agent,
                "taskId": facts.parent_task_id,
                "url": link,
                "inspectUrl": f"{link}/inspect#task={facts.parent_task_id}" if link else "",
            }
        return {
            "task": self._row(task, ctx),
            "source": "recorded" if log is not None else "snapshot",
            "events": list(log.entries) if log is not None else snapshot_timeline(task),
            "traceId": facts.trace_id if facts is not None else "",
            "parent": parent,
            "children": len(facts.children) if facts is not None else 0,
        }

    async def _tree(self, task_id: str, ctx: CallContext) -> dict[str, Any]:
        """The hop tree below the task (children read as :mod:`.hops` says)."""
        methods = self._service.methods
        root = await methods.get_task(GetTaskRequest(id=task_id, history_length=0), ctx)
        options = self._options
        async with httpx.AsyncClient(trust_env=False) as client:
            peers = PeerReader(options, client)

            async def read(url: str, tid: str) -> Task:
                if not url:
                    return await methods.get_task(GetTaskRequest(id=tid, history_length=0), ctx)
                return await peers.get_task(url, tid)

            return await read_tree(root, read, agent=self.feed.agent, max_hops=options.max_hops)

    async def _stream(self, ctx: CallContext, receive: Receive, send: Send) -> None:
        """SSE: ``ready``, then ``task`` updates (and ``resync`` after an overflow)."""
        hub = self._service.hub
        with anyio.CancelScope() as scope:
            refused = hub.track(scope)
            if refused is not None:
                await send_answer(send, rest_error_answer(refused))
                return
            try:
                with self.feed.subscribe(ctx.caller) as lane:
                    headers = [(b"content-type", b"text/event-stream")] + [
                        (k.lower().encode(), v.encode()) for k, v in SSE_HEADERS.items()
                    ]
                    await send({"type": "http.response.start", "status": 200, "headers": headers})
                    hello = msgspec.json.encode(
                        {"agent": self.feed.agent, "buffer": self.feed.buffer}
                    )
                    await _body(send, encode_event(hello, event="ready"))
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(_watch_disconnect, receive, scope)
                        await self._pump(lane, send)
            finally:
                hub.untrack(scope)
        with anyio.CancelScope(shield=True):  # shutdown or departure: end the answer
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _pump(self, lane: Lane, send: Send) -> None:
        ping = self._service.config.ping_interval
        while True:
            with anyio.move_on_after(ping) as timer:
                updates, resync = await lane.receive()
            if timer.cancelled_caught:
                await _body(send, _PING)
                continue
            data = b""
            if resync:
                data += encode_event(b'{"reason":"overflow"}', event="resync")
            for update in updates:
                data += encode_event(update, event="task")
            await _body(send, data)


async def _watch_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


async def _body(send: Send, data: bytes) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": True})


async def _send_file(send: Send, body: bytes, kind: str) -> None:
    headers = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in _PAGE_HEADERS.items()]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _json(value: dict[str, Any]) -> Answer:
    return Answer(msgspec.json.encode(value))


def _path(scope: MutableMapping[str, Any]) -> str | None:
    """The path below the app's ``root_path`` (None: not below it)."""
    path: str = scope["path"]
    if path[:1] != "/":
        path = urlparse(path).path
    root: str = scope.get("root_path", "")
    if not root:
        return path
    if path == root or not path.startswith(root):
        return None
    return path.removeprefix(root)


def _query(scope: MutableMapping[str, Any]) -> dict[str, str]:
    raw: bytes = scope.get("query_string", b"")
    found: dict[str, str] = {}
    for name, value in parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True):
        found.setdefault(name, value)
    return found


def _base_url(scope: MutableMapping[str, Any], headers: ScopeHeaders) -> str:
    return base_url(
        scope.get("scheme", "http"), headers.get("host") or "", scope.get("root_path", "")
    )


def install_inspector(app: Quart, service: A2AService, options: InspectorOptions) -> Inspector:
    """Serve the inspector in front of ``app``'s Quart ASGI app (before the A2A core wraps
    it) and observe the Supervisor while the app serves."""
    inspector = Inspector(service, options, app.asgi_app)
    app.before_serving(inspector.attach)
    app.after_serving(inspector.detach)
    app.asgi_app = inspector  # type: ignore[method-assign,assignment]
    return inspector
