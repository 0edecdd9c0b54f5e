"""Apps mounted in another ASGI app: started on first use, or joined to the host's lifespan.

A host framework (FastAPI, Starlette) that mounts an app made by
:func:`~a2a_actors.server._app.create_app` under a prefix does not run the mounted app's
lifespan, which is where the runtime normally starts. Two ways cover that:

* **On first use** (nothing to write): the first A2A request to an app whose runtime never
  started starts it as a detached task of the running loop (:func:`start_on_first_use`),
  and every request waits until it serves. It stops when the loop ends (uvicorn's shutdown
  cancels it: live tasks end CANCELED), with no order relative to the host's own shutdown.
* **Joined to the host's lifespan** (one line, for a clean shutdown in order)::

      api = FastAPI(lifespan=lifespan(echo_app, greeter_app))

  or, inside a lifespan of your own, ``async with lifespan(echo_app, greeter_app): ...``.
  The runtimes start before the host serves and stop, live tasks CANCELED, when the host
  shuts down.

An app served with its own lifespan (Hypercorn, ``serve``, ``app.test_app()``) is never
started a second way, and an app whose runtime stopped is not started again: requests then
get :class:`~a2a_actors.server._service.ServerNotRunningError` (answered -32603).
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskGroup

from a2a_actors.server._service import A2AService

if TYPE_CHECKING:
    from quart import Quart

__all__ = ("Lifespan", "lifespan")


class Lifespan:
    """The runtimes of several apps, started and stopped with a host (see :func:`lifespan`).

    An async context manager, and a callable of the host app returning itself, which is the
    form FastAPI's and Starlette's ``lifespan=`` take.
    """

    def __init__(self, services: tuple[A2AService, ...]) -> None:
        self._services = services
        self._group: TaskGroup | None = None

    def __call__(self, host: object) -> Lifespan:
        return self

    async def __aenter__(self) -> None:
        """Start every runtime; return once all serve (``None``: no lifespan state for
        the host).

        Raises:
            RuntimeError: Already entered, or an app's runtime was already started (by its
                own lifespan, an earlier first request, or another ``lifespan``).
        """
        if self._group is not None:
            raise RuntimeError("this lifespan is already running")
        if not all(service.claim() for service in self._services):
            raise RuntimeError("an app's runtime was already started; join it before it serves")
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        try:
            for service in self._services:
                await group.start(service.run)
        except BaseException as exc:
            self._group = None
            group.cancel_scope.cancel()
            await group.__aexit__(type(exc), exc, exc.__traceback__)
            raise

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        """Stop every runtime (open streams end, live tasks end CANCELED)."""
        group = self._group
        if group is None:
            return None
        self._group = None
        group.cancel_scope.cancel()
        return await group.__aexit__(exc_type, exc, tb)


def lifespan(*apps: Quart) -> Lifespan:
    """The runtimes of ``apps`` (made by ``create_app``) joined to a host's lifespan.

    ``FastAPI(lifespan=lifespan(app1, app2))``, ``Starlette(lifespan=...)``, or
    ``async with lifespan(app1, app2):`` inside a lifespan of your own.

    Raises:
        TypeError: An app was not made by ``create_app``.
    """
    from a2a_actors.server._app import service_of

    return Lifespan(tuple(service_of(app) for app in apps))
