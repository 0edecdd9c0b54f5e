"""The client commands' flags: the ones every command takes, and their value types.

Each value type returns the value or raises ``argparse.ArgumentTypeError`` with one line
saying what was expected (the command then exits 2 with it). The ``url`` argument is an
``http(s)://`` base URL with a host, a ``grpc(s)://HOST:PORT`` endpoint, or an agent's name
(no ``:``) looked up in a registry; ``--binding`` takes ``jsonrpc``, ``rest`` (or
``HTTP+JSON``) or ``grpc``, in any case, and gives the card's name of the binding.
"""

from __future__ import annotations

import argparse

import httpx

from a2a_actors.client._call_arguments import task_state
from a2a_actors.client._cli.deadline import DEFAULT_BOUND, timeout_seconds
from a2a_actors.client._cli.output import state_name
from a2a_actors.client._registry.registry import REGISTRY_ENV
from a2a_actors.client._transports.grpc_binding import GRPC_BINDING
from a2a_actors.protocol._headers import MAX_IDEMPOTENCY_KEY_LENGTH, valid_idempotency_key
from a2a_actors.protocol._models import TaskState

__all__ = ("common_flags", "count", "idempotency_key", "task_state_flag")


#: ``--binding`` values: the short names, and the card's own names as well.
_BINDINGS = {
    "jsonrpc": "JSONRPC",
    "rest": "HTTP+JSON",
    "http+json": "HTTP+JSON",
    "grpc": GRPC_BINDING,
}


def _base_url(text: str) -> str:
    """The ``url`` argument: an http(s) URL with a host, a ``grpc(s)://host:port`` endpoint,
    or an agent's name (no ``:``)."""
    if text and ":" not in text:
        return text  # a name, looked up in the registry (see cli._call)
    try:
        url = httpx.URL(text)
    except httpx.InvalidURL as exc:
        raise argparse.ArgumentTypeError(f"malformed URL {text!r} ({exc})") from None
    if (
        url.scheme not in ("http", "https", "grpc", "grpcs")
        or not url.host
        or (url.scheme.startswith("grpc") and url.port is None)
    ):
        raise argparse.ArgumentTypeError(
            "expected the agent's base URL, such as http://127.0.0.1:8000 "
            f"(or a gRPC endpoint, grpc://127.0.0.1:50051); got {text!r}"
        )
    return text


def _binding(text: str) -> str:
    """The ``--binding`` argument: jsonrpc, rest or grpc (any case; or HTTP+JSON)."""
    binding = _BINDINGS.get(text.lower())
    if binding is None:
        raise argparse.ArgumentTypeError(f"unknown binding {text!r}; one of: jsonrpc, rest, grpc")
    return binding


def task_state_flag(text: str) -> TaskState:
    """The ``--status`` argument: a task state, by any of its names."""
    try:
        state = task_state(text)
    except ValueError:
        state = TaskState.UNSPECIFIED
    if state is TaskState.UNSPECIFIED:
        known = ", ".join(state_name(s) for s in TaskState if s is not TaskState.UNSPECIFIED)
        raise argparse.ArgumentTypeError(f"unknown task state {text!r}; one of: {known}")
    return state


def idempotency_key(text: str) -> str:
    """The ``--idempotency-key`` argument: what a server accepts as one."""
    if not valid_idempotency_key(text):
        raise argparse.ArgumentTypeError(
            f"an idempotency key is 1 to {MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters"
        )
    return text


def count(text: str) -> int:
    """A whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number, 0 or more; got {text!r}")
    return value


def common_flags() -> argparse.ArgumentParser:
    """The flags every client command takes (a parent parser): the URL, the registry,
    credentials, ``--verify``, ``--binding``, ``--json`` and ``--timeout``."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "url",
        type=_base_url,
        help="the agent's base URL (its card is discovered), or its name with --registry",
    )
    common.add_argument(
        "--registry",
        metavar="nats://HOST:PORT|FILE",
        default=None,
        help=f"find the agent by name in this registry (default: ${REGISTRY_ENV})",
    )
    common.add_argument("--api-key", help="API key, placed as the card's apiKey scheme says")
    common.add_argument("--bearer-token", help="token sent as 'Authorization: Bearer …'")
    common.add_argument(
        "--verify",
        metavar="JWKS",
        help="refuse the agent (exit 3) unless its card is signed by a key of this JWKS "
        "(a file or URL)",
    )
    common.add_argument(
        "--binding",
        type=_binding,
        metavar="jsonrpc|rest|grpc",
        help="speak this binding only (default: the card's choice: JSON-RPC, then REST; "
        "gRPC when the card prefers it or offers nothing else)",
    )
    common.add_argument("--json", action="store_true", help="print wire JSON, one per line")
    common.add_argument(
        "--timeout",
        type=timeout_seconds,
        metavar="SECONDS",
        help=f"give up after SECONDS, finding the agent included (exit 124; default: "
        f"{DEFAULT_BOUND:g} s to find the agent and for card, get and list); a task sent "
        "keeps running",
    )
    return common
