"""The ``serve`` command's own flags, and what it checks of its flags before anything starts.

:func:`add_arguments` adds the flags :mod:`.serve` applies itself (address,
backend, credentials, caps, store, retention, middleware, registry, cluster); the features' modules
add theirs (``cli_trust``, ``workers``, ``cli_metrics``, the inspector's, ``cli_grpc``).
:func:`parse_store` reads ``--store`` and :func:`cluster_options` the ``--cluster`` flags. The value
types for argparse (:func:`port`, :func:`positive`, :func:`count`, :func:`seconds`,
:func:`positive_seconds`) each return the value or raise ``argparse.ArgumentTypeError`` with one
line that says what was expected (the command then exits with status 2 and that line).
:func:`check_extras` refuses a flag whose extra is not installed, in the one wording every
``a2a-actors`` command uses for it: ``--metrics needs the metrics extra: pip install
'a2a-actors[metrics]'`` (status 2).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
from pathlib import Path

from a2a_actors.server._config.config import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_QUEUED,
    ClusterOptions,
)
from a2a_actors.server._registration import DEFAULT_REGISTER_TTL

__all__ = (
    "EXTRAS",
    "add_arguments",
    "add_worker_arguments",
    "check_extras",
    "cluster_options",
    "count",
    "missing_extra",
    "parse_store",
    "port",
    "positive",
    "positive_seconds",
    "seconds",
)

#: The ``serve`` flags that need an extra: (its ``args`` attribute, the flag, the extra, the
#: modules it brings). ``--workers N`` checks its own (``workers.check``: nats-py and the
#: nats-server binary), in the same words.
EXTRAS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("grpc_port", "--grpc-port", "grpc", ("grpc", "grpc_status", "a2a")),
    ("cluster", "--cluster", "cluster", ("nats",)),
    ("register", "--register", "cluster", ("nats",)),
    ("metrics", "--metrics", "metrics", ("prometheus_client",)),
    ("metrics_public", "--metrics-public", "metrics", ("prometheus_client",)),
    ("jwks", "--jwks", "jwt", ("jwt",)),
    ("oidc_discovery", "--oidc-discovery", "jwt", ("jwt",)),
    ("sign_card", "--sign-card", "signing", ("jwt", "rfc8785")),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``serve`` flags applied by :mod:`.serve` itself to ``parser``."""
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=port, default=0, help="0 picks a free port")
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    auth = parser.add_mutually_exclusive_group()
    auth.add_argument("--api-key", metavar="KEY", help="require this key in X-API-Key")
    auth.add_argument("--bearer-token", metavar="TOKEN", help="require this Bearer token")
    parser.add_argument("--max-tasks", type=positive, metavar="N", help="cap on live tasks")
    parser.add_argument("--max-running", type=positive, metavar="N", help="cap on running handlers")
    parser.add_argument(
        "--max-queued",
        type=positive,
        metavar="N",
        help=f"with --max-running: tasks that may wait for a slot (default {DEFAULT_MAX_QUEUED})",
    )
    parser.add_argument(
        "--task-timeout",
        type=positive_seconds,
        metavar="SECONDS",
        help="fail a task that runs longer (waiting for input does not count)",
    )
    parser.add_argument(
        "--idempotency-ttl",
        type=positive_seconds,
        metavar="SECONDS",
        help="how long a send's Idempotency-Key is remembered (default 86400)",
    )
    parser.add_argument(
        "--max-body-bytes",
        type=positive,
        metavar="N",
        help=f"largest request body accepted (default {DEFAULT_MAX_BODY_BYTES})",
    )
    parser.add_argument(
        "--allow-private-push",
        action="store_true",
        help="let push webhooks target loopback and private addresses",
    )
    parser.add_argument(
        "--store",
        default="memory",
        metavar="memory|sqlite:PATH",
        help="where tasks live: in memory (default) or durably in a SQLite file",
    )
    parser.add_argument(
        "--retention-ttl",
        type=seconds,
        metavar="SECONDS",
        help="evict finished tasks this old (memory store default: 86400)",
    )
    parser.add_argument(
        "--retention-max",
        type=count,
        metavar="N",
        help="keep at most N finished tasks (memory store default: 10000)",
    )
    parser.add_argument(
        "--middleware",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="agent-side middleware around the handler (repeatable, outermost first)",
    )
    parser.add_argument(
        "--register",
        metavar="nats://HOST:PORT",
        help="publish the card in this NATS registry while serving",
    )
    parser.add_argument(
        "--register-ttl",
        type=seconds,
        default=DEFAULT_REGISTER_TTL,
        metavar="SECONDS",
        help="how long a registration outlives the server's last refresh (default 30)",
    )
    parser.add_argument(
        "--public-url",
        metavar="URL",
        help="the base URL the card advertises (a load balancer's); default: this server's",
    )
    parser.add_argument(
        "--cluster",
        metavar="nats://HOST:PORT[,...]",
        help="join the cluster on this NATS JetStream (asyncio; the 'cluster' extra)",
    )
    parser.add_argument(
        "--node-id", metavar="NAME", help="this node's id in the cluster (default HOST-PID)"
    )
    parser.add_argument(
        "--cluster-name", metavar="NAME", help="the cluster's name (default: the card name)"
    )
    parser.add_argument(
        "--cluster-lease",
        type=seconds,
        default=10.0,
        metavar="SECONDS",
        help="lease time of a new cluster: lost nodes' tasks are settled within it",
    )
    parser.add_argument(
        "--cluster-replicas",
        type=positive,
        default=1,
        metavar="N",
        help="JetStream replicas of a new cluster's buckets and stream (1..5; default 1)",
    )


def add_worker_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--workers`` to the ``serve`` parser."""
    parser.add_argument(
        "--workers",
        type=positive,
        default=1,
        metavar="N",
        help="run N node processes sharing the port, as one cluster (private NATS "
        "without --cluster; the 'cluster' extra)",
    )
    parser.set_defaults(listen_fd=None)  # a worker's inherited socket (set by the parent)


def check_extras(args: argparse.Namespace) -> None:
    """Refuse the first flag given whose extra is not installed (nothing is imported).

    Raises:
        ValueError: ``FLAG needs the EXTRA extra: pip install 'a2a-actors[EXTRA]'``.
    """
    for attribute, flag, extra, modules in EXTRAS:
        given = getattr(args, attribute, None)
        if given is None or given is False:  # not given (``--grpc-port 0`` is given)
            continue
        if any(importlib.util.find_spec(module) is None for module in modules):
            raise ValueError(missing_extra(flag, extra))


def missing_extra(flag: str, extra: str) -> str:
    """The line that says ``flag`` needs ``extra``."""
    return f"{flag} needs the {extra} extra: pip install 'a2a-actors[{extra}]'"


def port(text: str) -> int:
    """A TCP port, 0..65535 (0: pick a free one)."""
    value = _int(text, "a port number")
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535 (0 picks a free one), not {value}")
    return value


def positive(text: str) -> int:
    """A whole number of at least 1."""
    value = _int(text, "a whole number")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def count(text: str) -> int:
    """A whole number of at least 0."""
    value = _int(text, "a whole number")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, not {value}")
    return value


def seconds(text: str) -> float:
    """A finite number of seconds, at least 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, not {text}")
    return value


def positive_seconds(text: str) -> float:
    """A finite number of seconds, more than 0."""
    value = seconds(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return value


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None


def parse_store(spec: str) -> Path | None:
    """The SQLite path of ``--store sqlite:PATH``; None for ``memory``.

    Raises:
        ValueError: Neither ``memory`` nor ``sqlite:PATH``.
    """
    if spec == "memory":
        return None
    kind, colon, path = spec.partition(":")
    if kind != "sqlite" or not colon or not path:
        raise ValueError(f"--store must be 'memory' or 'sqlite:PATH', got {spec!r}")
    return Path(path)


def cluster_options(args: argparse.Namespace) -> ClusterOptions:
    """The cluster of ``--cluster`` and its tuning flags.

    Raises:
        ValueError: ``--backend trio``, a ``--store``, a lease not above 0.
        ClusterExtraMissingError: nats-py is not installed.
    """
    if args.backend != "asyncio":
        raise ValueError("--cluster needs --backend asyncio (nats-py runs on asyncio)")
    if args.store != "memory":
        raise ValueError("--cluster keeps tasks in NATS JetStream; it takes no --store")
    if args.cluster_lease <= 0:
        raise ValueError("--cluster-lease must be positive")
    from a2a_actors.cluster._errors import require_nats  # nats-py is not imported here

    require_nats()  # ClusterExtraMissingError names the extra
    urls = tuple(url.strip() for url in args.cluster.split(",") if url.strip())
    return ClusterOptions(
        urls=urls,
        node_id=args.node_id,
        cluster_name=args.cluster_name,
        lease_s=args.cluster_lease,
        replicas=args.cluster_replicas,
    )
