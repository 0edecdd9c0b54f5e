"""``a2a-actors agents REGISTRY``: the agents a registry knows, with their skills.

``REGISTRY`` is ``nats://HOST:PORT`` (comma-separated for several servers) or the path of a
JSON/TOML registry file (see :mod:`a2a_actors.client._registry.registry`). For each agent, sorted by
name::

    translator  http://127.0.0.1:8001
      Translates text
      skill translate: Translate - Translates between languages
    (1 agent)

(``skills: none`` when the card lists none.) ``--json`` prints one JSON object per agent
instead: ``{"name", "url", "card"}``, the card as A2A wire JSON. An agent of a file whose
server does not answer is listed with ``unreachable: <why>`` instead of its skills
(``"error"`` in JSON); the listing goes on.

Exit status: 0 listed (even none); 1 the registry could not be read (NATS unreachable);
2 bad input (a missing or malformed file, the ``cluster`` extra not installed). Errors are
one line, ``a2a-actors agents: ...`` (see :mod:`a2a_actors.client._cli.errors`).
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
import msgspec

from a2a_actors.client._cli.commands import opened_registry
from a2a_actors.client._cli.errors import fail
from a2a_actors.client._registry.entries import RegistryEntry
from a2a_actors.client._registry.registry import Registry, StaticRegistry
from a2a_actors.protocol import codec
from a2a_actors.protocol._errors import A2AError

__all__ = ("register", "run")


def register(subparsers: Any) -> None:
    """Add the ``agents`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "agents", help="list the agents of a registry, with their skills"
    )
    parser.add_argument("registry", metavar="nats://HOST:PORT|FILE", help="the registry")
    parser.add_argument("--json", action="store_true", help="one JSON object per agent")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """List the agents of ``args.registry``; the exit status."""
    nats = args.registry.startswith(("nats://", "tls://"))
    try:
        return anyio.run(_list, args, backend="asyncio" if nats else "trio")
    except A2AError as exc:
        fail(args, f"{type(exc).__name__}: {exc.message}")
        return 1
    except ValueError as exc:
        fail(args, str(exc))
        return 2
    except KeyboardInterrupt:
        return 130


async def _list(args: argparse.Namespace) -> int:
    async with opened_registry(args.registry) as registry:
        entries = await _entries(registry)
    count = 0
    for entry in entries:
        count += 1
        if isinstance(entry, tuple):
            name, url, error = entry
            if args.json:
                print(msgspec.json.encode({"name": name, "url": url, "error": error}).decode())
            else:
                print(f"{name}  {url}\n  unreachable: {error}")
            continue
        if args.json:
            obj = {"name": entry.name, "url": entry.url, "card": codec.to_builtins(entry.card)}
            print(msgspec.json.encode(obj).decode())
        else:
            _print_entry(entry)
    if not args.json:
        print(f"({count} agent{'' if count == 1 else 's'})")
    return 0


async def _entries(registry: Registry) -> list[RegistryEntry | tuple[str, str, str]]:
    """The registry's entries; for a static one, an unreachable agent is kept as
    ``(name, url, why)`` rather than ending the listing."""
    if not isinstance(registry, StaticRegistry):
        return list(await registry.list())
    found: list[RegistryEntry | tuple[str, str, str]] = []
    for name, url in registry.urls().items():
        try:
            found.append(await registry.resolve(name))
        except A2AError as exc:
            found.append((name, url, f"{type(exc).__name__}: {exc.message}"))
    return found


def _print_entry(entry: RegistryEntry) -> None:
    card = entry.card
    print(f"{entry.name}  {entry.url}")
    if card.description:
        print(f"  {card.description}")
    if not card.skills:
        print("  skills: none")
    for skill in card.skills:
        print(f"  skill {skill.id}: {skill.name} - {skill.description}")
