"""Serving an app (or an agent) on Hypercorn, on whichever backend is running.

:func:`serve` is a long-lived service in the structured-concurrency style: start it with
``base_url = await task_group.start(serve, agent)``; it reports ``http://HOST:PORT`` once
the runtime is up and the listening socket accepts connections, and serves until cancelled.
Cancellation is a graceful shutdown: open streams are ended, Hypercorn stops accepting and
waits up to ``ServerConfig.graceful_timeout`` for requests in flight, then the app's
lifespan stops the runtime. Hypercorn never installs signal handlers here; the CLI does.

The socket is bound here (so ``port=0`` works on both backends) and handed to Hypercorn as
``fd://N``. Answers carry no ``Server`` header: it would only tell a client which software
answers (and Hypercorn would validate and write it on every answer).
"""

from __future__ import annotations

import logging
import os
import socket
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskStatus
from hypercorn.config import Config as HypercornConfig, Sockets
from quart import Quart

from a2a_actors.server._addresses import authority
from a2a_actors.server._app import Backend, create_app, current_backend, service_of
from a2a_actors.server._config.config import ClusterOptions, ServerConfig
from a2a_actors.server._config.grpc import require_grpc
from a2a_actors.server._delegation import lost_task_handler
from a2a_actors.server._push_configs import PushConfigStore

if TYPE_CHECKING:
    from a2a_actors.cluster._member import ClusterMember
    from a2a_actors.server._grpc.server import GrpcServer
    from a2a_actors.server._service import A2AService

__all__ = ("serve",)

logger = logging.getLogger("a2a_actors.server")
_SHUTDOWN_MARGIN = 5.0


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=1024)


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{authority(host, port)}"


def _join(
    options: ClusterOptions, agent_name: str, url: str
) -> AbstractAsyncContextManager[ClusterMember]:
    """Join the cluster (imported here: without ``cluster`` nothing imports nats-py;
    :func:`_require_extras` checked that it is installed)."""
    from a2a_actors.cluster._member import default_node_id, join

    return join(
        options.urls,
        cluster=options.cluster_name or agent_name,
        node_id=options.node_id or default_node_id(),
        url=url,
        lease_ttl=options.lease_s,
        timeout=options.timeout_s,
        replicas=options.replicas,
    )


def _require_extras(config: ServerConfig) -> None:
    """Check that the extras ``config`` needs are installed, importing neither.

    Raises:
        GrpcExtraMissingError: gRPC without the ``grpc`` extra.
        ClusterExtraMissingError: Cluster mode without the ``cluster`` extra.
    """
    if config.grpc is not None:
        require_grpc()
    if config.cluster is not None:
        from a2a_actors.cluster._errors import require_nats

        require_nats()


def _grpc_server(service: A2AService, host: str, base_url: str) -> GrpcServer | None:
    """The gRPC server of ``ServerConfig.grpc``, bound (imported here: without it nothing
    imports grpcio), or None.

    Raises:
        OSError: The gRPC address cannot be bound.
    """
    options = service.config.grpc
    if options is None:
        return None
    from a2a_actors.server._grpc.server import GrpcServer

    return GrpcServer(service, options, host=host, base_url=base_url)


class _Hypercorn(HypercornConfig):
    """Hypercorn's configuration, noting when Hypercorn took the listening socket: it
    does so only once the app's lifespan started, and until then closing it is ours to
    do (a start that fails, such as a cluster join, must not keep the port bound)."""

    took_fd = False

    def create_sockets(self) -> Sockets:
        sockets = super().create_sockets()
        self.took_fd = True
        return sockets


def _is_trio_app(app: Quart) -> bool:
    return any(cls.__name__ == "QuartTrio" for cls in type(app).__mro__)


async def serve(
    target: object,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    config: ServerConfig | None = None,
    backend: Backend | None = None,
    push_store: PushConfigStore | None = None,
    sock: socket.socket | None = None,
    task_status: TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``target`` over HTTP until cancelled.

    Args:
        target: An app from :func:`~a2a_actors.server._app.create_app`, or anything
            ``create_app`` accepts (an agent, a ``ServedAgent``, a running Supervisor).
        host: Interface to bind.
        port: Port to bind; 0 picks a free one.
        config: Server configuration when ``target`` is not an app.
        backend: Must name the running backend if given (the running one always decides).
        push_store: Push-config store when ``target`` is not an app.
        sock: A socket already bound to the address to serve on, instead of binding
            ``host:port`` (a worker of ``serve --workers`` gets one from its parent); one
            not listening yet listens once the app has started. Once the arguments are
            checked (the ValueErrors below), it is serve's: closed when serve fails or ends.
        task_status: Receives the base URL (``http://127.0.0.1:PORT``) once serving.

    With ``ServerConfig.cluster`` the server joins that cluster first (docs/cluster.md):
    its Supervisor stores tasks, logs events and keeps push configs in NATS JetStream,
    serves this node's inbox, and answers for every task of the cluster.

    With ``ServerConfig.grpc`` the gRPC binding is served too (docs/grpc.md), on its own
    port, bound before serving and started with the runtime; the card lists it and
    ``service_of(app).cards.grpc_address`` is its address.

    Raises:
        ValueError: ``backend`` (or the app's flavour) differs from the running backend,
            or cluster mode or gRPC on trio.
        GrpcExtraMissingError: gRPC without the ``grpc`` extra.
        ClusterExtraMissingError: Cluster mode without the ``cluster`` extra.
        ClusterUnavailableError: Cluster mode and NATS did not answer in time.
        OSError: The address cannot be bound.
    """
    running = current_backend()
    if backend is not None and backend != running:
        raise ValueError(f"serve() runs on {running}, not {backend}")
    if isinstance(target, Quart):
        if config is not None or push_store is not None:
            raise ValueError("config and push_store apply to agents, not to a built app")
        app = target
        if _is_trio_app(app) != (running == "trio"):
            raise ValueError(f"this app was built for the other backend; running {running}")
    else:
        app = create_app(target, config, backend=running, push_store=push_store)
    service = service_of(app)
    cluster = service.config.cluster
    if cluster is not None and running != "asyncio":
        raise ValueError("cluster mode runs on asyncio (nats-py is asyncio-only), not on trio")
    if service.config.grpc is not None and running != "asyncio":
        raise ValueError("gRPC is served on asyncio (grpcio's grpc.aio), not on trio")

    try:
        _require_extras(service.config)  # before anything is bound
        if sock is None:
            sock = _listen(host, port)
        base_url = _url(sock)
        service.bind_url(base_url)
        grpc_server = _grpc_server(service, host, base_url)  # before any card is served
    except BaseException:
        if sock is not None:
            sock.close()
        raise
    fd = sock.detach()
    hyper = _Hypercorn()
    hyper.bind = [f"fd://{fd}"]
    hyper.graceful_timeout = service.config.graceful_timeout
    hyper.accesslog = None
    hyper.include_server_header = False
    hyper.errorlog = logging.getLogger("hypercorn.error")

    stop = anyio.Event()
    shield = anyio.CancelScope(shield=True)

    async def run_hypercorn(*, task_status: TaskStatus[Any]) -> None:
        with shield:
            if running == "trio":
                from hypercorn.trio import serve as trio_serve

                await trio_serve(app, hyper, shutdown_trigger=stop.wait, task_status=task_status)
            else:
                from hypercorn.asyncio import serve as asyncio_serve

                task_status.started()
                await asyncio_serve(app, hyper, shutdown_trigger=stop.wait)

    joined: AbstractAsyncContextManager[ClusterMember | None] = nullcontext()
    if cluster is not None:
        joined = _join(cluster, service.agent.name, service.config.public_url or base_url)
    try:
        async with joined as member, anyio.create_task_group() as tg:
            if member is not None:  # before the lifespan starts the Supervisor
                keys = member.keys(service.config.idempotency_ttl)
                service.use_cluster(member.supervisor_options(), member.push, keys)
            try:
                await tg.start(run_hypercorn)
                # trio: Hypercorn reported after the lifespan started; asyncio: wait for it.
                await service.started.wait()
                if grpc_server is not None:
                    await grpc_server.start()
                if member is not None:
                    await tg.start(member.serve_inbox, service.methods.supervisor)
                    # a lost node's parent tasks this node fails: cancel their remote children
                    orphans = lost_task_handler(service.methods.supervisor.delegator)
                    member.node.handle_lost_tasks(orphans)
                logger.info("serving %s on %s (%s)", service.agent.name, base_url, running)
                task_status.started(base_url)
                await anyio.sleep_forever()
            finally:
                service.close_streams()
                if grpc_server is not None:  # its calls in flight end before the runtime stops
                    await grpc_server.stop()
                stop.set()
                shield.deadline = anyio.current_time() + hyper.graceful_timeout + _SHUTDOWN_MARGIN
    finally:
        if grpc_server is not None:  # when the start failed before it (a no-op after it)
            await grpc_server.stop()
        if not hyper.took_fd:  # Hypercorn never started serving: the port is ours to free
            os.close(fd)
