"""How the client commands say what went wrong: one line, ``a2a-actors COMMAND: ...``.

Every message of the client commands (``card``, ``send``, ``get``, ``list``, ``cancel``,
``subscribe``, ``agents``) starts with the command, as every ``a2a-actors`` command's does
(:mod:`a2a_actors.cli`); the lines that follow it, if any, are hints, indented by two
spaces. What each failure reads as:

* an A2A error: ``<ErrorClass> (<code>): <message>`` for one the agent answered,
  ``<ErrorClass>: <message>`` for one raised here (``A2AConnectionError``...);
* a TLS handshake that failed: ``TLS handshake with HOST:PORT failed: <why>``; a server that
  answers in plain HTTP is named as such (``the server does not speak TLS (try http://)``);
* a missing extra: ``<what> needs the <extra> extra: pip install 'a2a-actors[<extra>]'``, as
  ``serve`` says it for its flags;
* ``--binding`` naming a binding the agent's card does not offer: which ones it does.
"""

from __future__ import annotations

import argparse
import shlex
import ssl

import httpx

from a2a_actors.client._cli.output import note
from a2a_actors.client._client import A2AClient
from a2a_actors.client._errors import A2AConnectionError
from a2a_actors.client._transports.grpc_binding import GRPC_BINDING
from a2a_actors.protocol._errors import A2AError

__all__ = (
    "GRPC_SCHEMES",
    "check_binding",
    "credentials_hint",
    "describe",
    "fail",
    "grpc_extra",
    "registry_extra",
)

GRPC_SCHEMES = ("grpc://", "grpcs://")

#: OpenSSL's reasons for a handshake answered by something that is not TLS (plain HTTP).
_NOT_TLS = frozenset(
    {"WRONG_VERSION_NUMBER", "PACKET_LENGTH_TOO_LONG", "RECORD_LAYER_FAILURE", "HTTP_REQUEST"}
)
#: How the card's binding names read in a sentence.
_LABELS = {"JSONRPC": "JSON-RPC", "HTTP+JSON": "HTTP+JSON", GRPC_BINDING: "gRPC"}


def fail(args: argparse.Namespace, text: str, *hints: str) -> None:
    """Print ``a2a-actors COMMAND: text`` on stderr, then each hint indented."""
    command = getattr(args, "command", None) or "client"
    note(f"a2a-actors {command}: {text}")
    for hint in hints:
        note(f"  {hint}")


def describe(exc: A2AError) -> str:
    """What an A2A error reads as (see the module docstring)."""
    tls = _tls_failure(exc)
    if tls is not None:
        return tls
    name = type(exc).__name__
    if exc.remote:
        return f"{name} ({exc.code}): {exc.message}"
    return f"{name}: {exc.message}"


def _tls_failure(exc: A2AError) -> str | None:
    """``TLS handshake with HOST:PORT failed: <why>`` when ``exc`` is a connection that
    failed in its TLS handshake; else None."""
    if not isinstance(exc, A2AConnectionError):
        return None
    cause: BaseException | None = exc
    where = ""
    while cause is not None and not isinstance(cause, ssl.SSLError):
        if isinstance(cause, httpx.RequestError) and not where:
            where = _authority(cause)
        cause = cause.__cause__ or cause.__context__
    if cause is None:
        return None
    if isinstance(cause, ssl.SSLCertVerificationError):
        why = cause.verify_message or cause.reason or str(cause)
        why = f"certificate verify failed: {why}"
    elif cause.reason in _NOT_TLS:
        why = "the server does not speak TLS (try http://)"
    else:
        why = str(cause.reason or cause)
    return f"TLS handshake with {where or 'the server'} failed: {why}"


def _authority(error: httpx.RequestError) -> str:
    try:
        url = error.request.url
    except RuntimeError:  # no request attached
        return ""
    port = url.port or (443 if url.scheme == "https" else 80)
    return f"{url.host}:{port}"


def credentials_hint(args: argparse.Namespace) -> str:
    """What to pass after an authentication failure (or that what was passed was refused)."""
    if args.api_key or args.bearer_token:
        return "the agent refused the credentials given (--api-key / --bearer-token)"
    if args.url.startswith(GRPC_SCHEMES):  # no card to point at
        return "this agent needs credentials: pass --api-key KEY or --bearer-token TOKEN"
    card = f"a2a-actors card {shlex.quote(args.url)}"
    return (
        "this agent needs credentials: pass --api-key KEY or --bearer-token TOKEN "
        f"(its card says which: {card})"
    )


def grpc_extra(args: argparse.Namespace) -> str:
    """The missing ``grpc`` extra, named after what asked for gRPC."""
    if args.url.startswith(GRPC_SCHEMES):
        asked = args.url
    elif args.binding == GRPC_BINDING:
        asked = "--binding grpc"
    else:
        asked = "this agent (its card offers only gRPC)"
    return f"{asked} needs the grpc extra: pip install 'a2a-actors[grpc]'"


def registry_extra() -> str:
    """The missing ``cluster`` extra of a NATS registry."""
    return "a NATS registry needs the cluster extra: pip install 'a2a-actors[cluster]'"


def check_binding(client: A2AClient, binding: str | None) -> None:
    """Refuse a client whose card offers no interface of the ``--binding`` asked for (the
    client then falls back to ``POST /tasks/send``, which is not what was asked).

    Raises:
        ValueError: The card has no such interface; the message lists those it has.
    """
    card = client.card
    chosen = client.interface.protocol_binding.upper()  # cards may write it in any case
    if binding is None or card is None or chosen == binding.upper():
        return
    offered = list(
        dict.fromkeys(
            f"{i.protocol_binding} {i.protocol_version}".strip() for i in card.supported_interfaces
        )
    )
    raise ValueError(
        f"the agent's card offers no {_LABELS.get(binding, binding)} interface "
        f"(it offers {', '.join(offered) or 'none'})"
    )
