"""``a2a-actors serve MODULE:ATTR``: serve an agent until SIGINT or SIGTERM.

Prints exactly one line on stdout, the base URL (``http://127.0.0.1:PORT``), once the server accepts
requests (with ``--grpc-port``, a second one: the gRPC endpoint as a URL the client commands take,
``grpc://HOST:PORT``, see :mod:`a2a_actors.server._cli.grpc`); logs go to stderr. A signal shuts the
server down gracefully, nothing more is printed, and the process exits with status 0.

Errors are one line on stderr, ``a2a-actors serve: <what happened>`` (the style of every
``a2a-actors`` command, see :mod:`a2a_actors.cli`). A flag whose extra is not installed is refused
first, in the same words for every flag (:func:`a2a_actors.server._cli.values.check_extras`, status
2); a port that cannot be bound is named, the gRPC one as such (``cannot listen on gRPC port
HOST:PORT: ...``, status 1).

``MODULE`` is a dotted module name importable from the current directory. When it cannot
be imported (or raises while importing) or lacks ``ATTR``, one line says so on stderr and the
exit status is 2; ``--debug`` (``a2a-actors --debug serve ...``) also prints the traceback of
the import. Flags are checked before anything starts (``--port`` 0..65535, caps at least 1,
retention not negative).

``MODULE:ATTR`` names an ``Agent``, an async function of a ``TaskContext``, an object with
``async def handle(self, ctx)``, or a :class:`~a2a_actors.server._config.config.ServedAgent` (whose
configuration is the starting point the flags below are applied to). Anything else (a plain
``def``, a class, a function of two arguments...) is refused before serving, with one line
on stderr and exit status 2.

``--store`` chooses where tasks live. ``memory`` (the default) keeps them in the process:
right for embedding, tests and stateless demos; everything is gone at exit.
``sqlite:PATH`` keeps tasks and push configs in an embedded SQLite file: every state a
client observed is on disk, and after a restart (even a SIGKILL) tasks that were running
are FAILED with a "server restarted" status message while tasks waiting for input resume
with the client's next message. ``--retention-ttl``/``--retention-max`` evict the oldest
finished tasks (never live ones) with either store; the memory store keeps at most 10,000
finished tasks for at most a day unless told otherwise. See docs/durability.md.

``--middleware MODULE:ATTR`` (repeatable, outermost first) wraps each named agent-side
middleware (an async callable ``(ctx, next)``, see ``a2a_actors.runtime.middleware``) around
the agent's handler; what is not callable is refused with exit status 2.
``--register nats://HOST:PORT`` (comma-separated for several NATS servers) publishes the
agent's card in the NATS registry under its name once the server listens, before the URL
is printed, keeps it alive (``--register-ttl``, default 30 s: a killed server disappears
within it) and withdraws it on shutdown; it needs the asyncio backend (nats-py). A NATS
that cannot be reached is said on stderr and the exit status is 1. The nodes of a cluster
(``--cluster``, ``--workers``) hold one entry together and none withdraws it: it expires
one TTL after the last node stopped.

``--cluster nats://HOST:PORT[,nats://...]`` serves as one node of a cluster on NATS
JetStream (docs/cluster.md): every node serving the same agent (card name, or
``--cluster-name``) answers every method for every task. ``--node-id`` names the node
(default ``HOST-PID``), ``--cluster-lease`` is a new cluster's lease time,
``--cluster-replicas`` the JetStream replicas of its buckets and stream, ``--public-url``
is the URL the card advertises (the load balancer's). It needs the asyncio backend
(``--backend trio --cluster`` is refused, status 2), no ``--store``, and the ``cluster``
extra (missing: one line naming it, status 2); a NATS that cannot be reached is said on
stderr and the exit status is 1, and so is a node that lost its lease (cut from NATS for a
lease time: it stops serving, since the other nodes settle its tasks).

``--workers N`` runs N such nodes from one command on one port
(:mod:`a2a_actors.server._cli.workers`): with ``--cluster`` they join it; without, a private
nats-server is started for them and stopped after them (the ``cluster`` extra; missing: one line,
status 2). ``--workers 1`` (the default) is a single server, no NATS.

``--jwks``/``--jwt-*``/``--oidc-discovery`` (JWT bearer tokens) and ``--sign-card``/
``--sign-kid``/``--sign-jku`` (signed cards) are parsed by :mod:`a2a_actors.server._cli.trust`
(docs/trust.md).

Once serving, the process tunes its cyclic garbage collector (benchmarks/README.md):
``gc.freeze()`` moves what start-up built (modules, the app), which lives as long as the
process, out of the collector's sight, so full collections under load stay short; and the
youngest generation is collected after :data:`GC_THRESHOLD` allocations instead of 700, so
the objects of requests in flight are not rescanned every few requests (most die by
reference counting before the next collection). ``serve()`` itself leaves the garbage
collector of an embedding process alone.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import os
import signal
import sys
import traceback
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from a2a_actors.cluster._errors import ClusterExtraMissingError, LeaseLostError
from a2a_actors.protocol._errors import ServerBusyError
from a2a_actors.runtime import as_agent
from a2a_actors.server._app import create_app, service_of
from a2a_actors.server._auth.credentials import principal_for_secret
from a2a_actors.server._cli import (
    grpc as cli_grpc,
    metrics as cli_metrics,
    trust as cli_trust,
    values as cli_values,
    workers,
)
from a2a_actors.server._cli.parser import add_serve_parser
from a2a_actors.server._cli.values import parse_store  # kept here: ``--store`` was always read here
from a2a_actors.server._config.config import ServedAgent, ServerConfig
from a2a_actors.server._observability.inspector import cli as inspector_cli
from a2a_actors.server._registration import check_register_urls, registered
from a2a_actors.server._serve import serve
from a2a_actors.stores import SQLiteTaskStore, StoreError

if TYPE_CHECKING:
    from quart import Quart

__all__ = ("GC_THRESHOLD", "TargetError", "load_target", "parse_store", "register", "run")

#: Allocations between two collections of the youngest generation once serving (the
#: interpreter's default is 700). A request in flight holds a few hundred tracked objects;
#: at 700 they were scanned, and some promoted, every couple of requests.
GC_THRESHOLD = 7000


class TargetError(Exception):
    """``MODULE:ATTR`` cannot be imported or resolved."""


def load_target(spec: str) -> object:
    """Import ``MODULE:ATTR`` (``ATTR`` may be dotted); the current directory is importable.

    Raises:
        TargetError: Malformed spec, module not importable, or attribute missing.
    """
    module_name, colon, attr = spec.partition(":")
    if not colon or not module_name or not attr:
        raise TargetError(f"expected MODULE:ATTR, got {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    if module_name.endswith(".py") or "/" in module_name or "\\" in module_name:
        dotted = module_name.removesuffix(".py").replace("/", ".").replace("\\", ".")
        raise TargetError(
            f"MODULE is a dotted module name importable from the current directory "
            f"(such as {dotted!r}), not a file path: got {module_name!r}"
        )
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise TargetError(f"cannot import {module_name!r}: {exc}") from exc
    except Exception as exc:  # the module itself raised (or has a syntax error)
        raise TargetError(f"importing {module_name!r} raised {type(exc).__name__}: {exc}") from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise TargetError(f"{module_name!r} has no attribute {attr!r}") from None
    return obj


def register(subparsers: Any) -> None:
    """Add the ``serve`` subcommand."""
    add_serve_parser(subparsers).set_defaults(handler=run)


def _config(base: ServerConfig, args: argparse.Namespace) -> ServerConfig:
    changes: dict[str, Any] = {}
    if args.api_key:
        changes["api_keys"] = {args.api_key: principal_for_secret("apikey", args.api_key)}
    if args.bearer_token:
        token = args.bearer_token
        changes["bearer_tokens"] = {token: principal_for_secret("bearer", token)}
    if args.max_tasks is not None:
        changes["max_live_tasks"] = args.max_tasks
    if args.max_running is not None:
        changes["max_running"] = args.max_running
    if args.max_queued is not None:
        if args.max_running is None:
            raise ValueError("--max-queued needs --max-running")
        changes["max_queued"] = args.max_queued
    if args.task_timeout is not None:
        changes["task_timeout"] = args.task_timeout
    if args.idempotency_ttl is not None:
        changes["idempotency_ttl"] = args.idempotency_ttl
    if args.max_body_bytes is not None:
        changes["max_body_bytes"] = args.max_body_bytes
    if args.allow_private_push:
        changes["allow_private_push"] = True
    if args.middleware:
        changes["middleware"] = (*base.middleware, *(_middleware(m) for m in args.middleware))
    retention = {
        key: value
        for key, value in (
            ("retention_ttl", args.retention_ttl),
            ("retention_max", args.retention_max),
        )
        if value is not None
    }
    if args.store == "memory" and retention:  # what is not given keeps its default
        changes["supervisor_options"] = {**base.supervisor_options, **retention}
    if args.public_url:
        changes["public_url"] = args.public_url
    if args.cluster:
        changes["cluster"] = cli_values.cluster_options(args)
    elif (args.node_id or args.cluster_name) and args.workers == 1:
        raise ValueError("--node-id and --cluster-name need --cluster")
    config = base.replace(**changes) if changes else base
    return cli_trust.apply(config, args)


def _middleware(spec: str) -> object:
    try:
        found = load_target(spec)
    except TargetError as exc:
        raise ValueError(f"--middleware: {exc}") from None
    if not callable(found):
        raise ValueError(
            f"--middleware {spec}: a middleware is an async callable (ctx, next); "
            f"got an object of type {type(found).__name__!r}"
        )
    return found


async def _serve_until_signal(
    target: object, config: ServerConfig, args: argparse.Namespace, db: Path | None
) -> int:
    """Serve until SIGINT/SIGTERM; the exit status (errors are printed on stderr)."""
    async with AsyncExitStack() as stack:
        push_store = None
        if db is not None:
            try:
                store = await stack.enter_async_context(
                    SQLiteTaskStore.open(
                        db, retention_ttl=args.retention_ttl, retention_max=args.retention_max
                    )
                )
            except StoreError as exc:  # its message names the file and the cause
                said = str(exc)
                if "cannot open the task store" not in said:
                    said = f"cannot open the task store: {said}"
                return _fail(said, 2)
            push_store = store.push_configs
            options = {**config.supervisor_options, "store": store, "keep_interrupted": True}
            config = config.replace(supervisor_options=options)
        # The store is opened before and closed after the app: at shutdown the supervisor
        # records the final state of every task in it.
        try:
            app = create_app(target, config, backend=args.backend, push_store=push_store)
        except (OSError, TypeError, ValueError) as exc:  # not an agent, bad config, SKILL.md
            return _fail(str(exc), 2)
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with anyio.create_task_group() as tg, AsyncExitStack() as registration:
                stop = anyio.Event()
                failed: int | None = None
                # Watched from the start: a signal during a long start-up (a cluster join
                # waiting for its node id's lease) stops it at once.
                url: str | None = None
                with anyio.CancelScope() as starting:
                    tg.start_soon(_until_signal, signals, stop, starting)
                    url, failed = await _listen(tg, app, config, args)
                if failed is None and not starting.cancelled_caught:
                    # Entered here, not in ``starting``: its task group must end in the
                    # scope it began in (below, when the stack closes).
                    failed = await _announce(app, config, args, registration, url or "")
                if failed is not None or starting.cancelled_caught:
                    tg.cancel_scope.cancel()
                    return failed or 0
                await stop.wait()
                await registration.aclose()  # withdrawn while it still answers
                tg.cancel_scope.cancel()
    return 0


async def _until_signal(
    signals: AsyncIterator[int], stop: anyio.Event, starting: anyio.CancelScope
) -> None:
    async for _ in signals:
        stop.set()
        starting.cancel()  # no effect once started
        return


async def _listen(
    tg: TaskGroup, app: Quart, config: ServerConfig, args: argparse.Namespace
) -> tuple[str | None, int | None]:
    """Start serving: the URL, or the exit status (the error printed on stderr)."""
    try:
        sock = workers.inherited_socket(args)  # a worker's, from its parent
        url: str = await tg.start(partial(serve, app, host=args.host, port=args.port, sock=sock))
    except OSError as exc:
        return None, _fail(workers.listen_failure(exc, args.host, args.port), 1)
    except (ServerBusyError, RuntimeError, BaseExceptionGroup) as exc:  # NATS, the node id
        if config.cluster is None:
            raise
        return None, _fail(f"cannot join the cluster at {args.cluster}: {_leaf(exc)}", 1)
    return url, None


async def _announce(
    app: Quart,
    config: ServerConfig,
    args: argparse.Namespace,
    registration: AsyncExitStack,
    url: str,
) -> int | None:
    """Register (``--register``), print the URL, tune the collector; None once serving,
    else the exit status (the error printed on stderr)."""
    if args.register:
        try:
            nats = check_register_urls(args.register)
            where = await registration.enter_async_context(
                registered(
                    app,
                    url,
                    nats,
                    ttl=args.register_ttl,
                    withdraw=config.cluster is None,  # nodes share the entry
                )
            )
        except Exception as exc:  # NATS unreachable, no nats-py, a bad TTL
            return _fail(f"cannot register in {args.register}: {exc}", 1)
        logging.getLogger("a2a_actors.server").info("registered in %s at %s", args.register, where)
    print(url, flush=True)
    if (grpc_address := service_of(app).cards.grpc_address) is not None:
        print(f"grpc://{grpc_address}", flush=True)  # its own line, after the URL
    # Everything imported and built so far lives as long as the process: move it out of
    # the collector's sight, so full collections (which otherwise rescan it every time
    # in-flight requests get promoted) stay short. This process is ours to tune; serve()
    # leaves the embedding process's GC alone.
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    return None


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


def _fail(message: str, status: int) -> int:
    print(f"a2a-actors serve: {message}", file=sys.stderr)
    return status


def run(args: argparse.Namespace) -> int:
    """Serve ``args.target`` until a signal; the exit status."""
    try:
        target = load_target(args.target)
    except TargetError as exc:
        if getattr(args, "debug", False) and exc.__cause__ is not None:
            traceback.print_exception(exc.__cause__)
        return _fail(str(exc), 2)
    base = ServerConfig()
    if isinstance(target, ServedAgent):
        base, target = target.config, target.agent
    try:
        cli_values.check_extras(args)  # a flag whose extra is missing: one line, status 2
        target = as_agent(target)  # a handler that can never work is refused here
        db = cli_values.parse_store(args.store)
        config = _config(base, args)
        config = cli_metrics.apply(config, args)
        config = inspector_cli.apply(config, args)
        config = cli_grpc.apply(config, args)
        workers.check(args)
        if args.register:
            check_register_urls(args.register)
            if args.backend != "asyncio":
                raise ValueError("--register needs --backend asyncio (nats-py runs on asyncio)")
            if args.register_ttl < 1:
                raise ValueError(f"--register-ttl is at least 1 s, not {args.register_ttl}")
    except (TypeError, ValueError, ClusterExtraMissingError) as exc:
        return _fail(str(exc), 2)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(message)s")
    if args.workers > 1:
        return workers.run(args)
    try:
        status: int = anyio.run(_serve_until_signal, target, config, args, db, backend=args.backend)
    except BaseExceptionGroup as group:  # a cluster node cut from NATS fences itself
        lost = group.subgroup(LeaseLostError)
        if lost is None:
            raise
        return _fail(f"stopped serving: {_leaf(lost)}", 1)
    return status
