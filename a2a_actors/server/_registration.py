"""Registering a served agent in the NATS registry while it serves (``serve --register``).

:func:`registered` is entered once the server listens: it writes the agent's public card,
under the card's name and the server's public URL (``ServerConfig.public_url`` when set, so
a cluster of servers behind one URL registers once, under that URL), into the registry
bucket of :class:`~a2a_actors.cluster._directory.AgentDirectory`, keeps it alive (rewritten
every third of the TTL) and withdraws it when the block ends. A server killed without
leaving the block stops rewriting: its entry expires one TTL later at most. Clients find it
with :class:`a2a_actors.client._registry.nats.NatsRegistry` (``--registry nats://...``).

nats-py runs on asyncio only, so registering needs the asyncio backend.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import partial

import anyio
from quart import Quart

from a2a_actors.server._app import current_backend, service_of

__all__ = ("DEFAULT_REGISTER_TTL", "check_register_urls", "registered")

#: Seconds a registration outlives its server's last refresh, unless told otherwise.
DEFAULT_REGISTER_TTL = 30.0


def check_register_urls(spec: str) -> list[str]:
    """The NATS URLs of ``--register URL[,URL...]``.

    Raises:
        ValueError: A URL is not ``nats://`` or ``tls://``.
    """
    urls = [u.strip() for u in spec.split(",") if u.strip()]
    if not urls or not all(u.startswith(("nats://", "tls://")) for u in urls):
        raise ValueError(f"--register takes nats://HOST:PORT URLs (comma-separated); got {spec!r}")
    return urls


@asynccontextmanager
async def registered(
    app: Quart,
    served_url: str,
    nats_urls: Sequence[str],
    *,
    ttl: float = DEFAULT_REGISTER_TTL,
    bucket: str | None = None,
    withdraw: bool = True,
) -> AsyncIterator[str]:
    """Keep ``app``'s agent registered for the block; yields the URL it is registered at.

    Leaving the block withdraws the entry; without ``withdraw`` (a cluster node, whose
    entry the other nodes keep too) it is left to expire one TTL after the last write.

    Args:
        app: An app made by ``create_app`` and served at ``served_url``.
        served_url: Where the server listens (``serve`` reports it).
        nats_urls: The NATS servers of the registry.
        ttl: Seconds the entry outlives the last refresh (for a new bucket, see
            ``AgentDirectory``).
        bucket: The registry's KV bucket (``A2A_registry`` by default).

    Raises:
        RuntimeError: Not running on asyncio.
        ClusterExtraMissingError: nats-py is not installed.
        ClusterUnavailableError: NATS cannot be reached, or the first write failed.
        ValueError: ``ttl`` below 1 s.
    """
    if current_backend() != "asyncio":
        raise RuntimeError("registering in NATS needs the asyncio backend (nats-py)")
    from a2a_actors.cluster._errors import require_nats

    require_nats()
    from a2a_actors.cluster._connection import ClusterConnection
    from a2a_actors.cluster._directory import DEFAULT_BUCKET, AgentDirectory

    cards = service_of(app).cards
    base = cards.base_url(served_url)
    card = cards.public(base)
    async with ClusterConnection.open(nats_urls, cluster="registry", name=card.name) as conn:
        directory = await AgentDirectory.open(conn, bucket=bucket or DEFAULT_BUCKET, ttl=ttl)
        async with anyio.create_task_group() as tg:
            await tg.start(partial(directory.hold, card, base, withdraw=withdraw))
            try:
                yield base
            finally:
                tg.cancel_scope.cancel()  # the hold withdraws the entry (shielded)
