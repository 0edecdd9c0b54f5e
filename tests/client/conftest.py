"""Fixtures of the client tests: the agents the shared suite runs against.

The shared suite (``test_suite.py``) is parametrised over :data:`SERVER_KINDS` x binding.
Each kind is a served *scenario agent* with the behaviour documented in
tests/interop/NOTES.md (``input…`` asks a question, ``sleep…`` waits to be canceled,
``stream…`` streams :data:`STREAM_CHUNKS`, ``message…`` answers with a Message, anything
else echoes), its card listing a JSON-RPC and an HTTP+JSON interface at protocol 1.0.

Adding a server is a fixture change: add its name to :data:`SERVER_KINDS` and a branch to
:func:`agent_server` that yields a :class:`ServedScenario` for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.interop.sdk_server import SdkServer, run_sdk_server

#: Servers the shared suite runs against: the official a2a-sdk server (tests/interop) and
#: ours (a2a_actors.server, tests/client/ours.py).
SERVER_KINDS: tuple[str, ...] = ("sdk", "ours")
BINDINGS: tuple[str, ...] = ("JSONRPC", "HTTP+JSON")


@dataclass(frozen=True)
class ServedScenario:
    """A running scenario agent."""

    kind: str
    base_url: str
    #: The name on its card.
    name: str


@pytest.fixture(scope="session")
def sdk() -> Iterator[SdkServer]:
    """The official SDK server with push configs and an extended card."""
    with run_sdk_server() as server:
        yield server


@pytest.fixture(scope="session")
def sdk_plain() -> Iterator[SdkServer]:
    """The official SDK server without push configs or extended card."""
    with run_sdk_server(push=False, extended_card=False) as server:
        yield server


@pytest.fixture(scope="session")
def ours() -> Iterator[str]:
    """Our server (a2a_actors.server) with push configs and an extended card."""
    from tests.client.ours import run_our_server  # imported late: only tests using it need it

    with run_our_server() as url:
        yield url


@pytest.fixture(scope="session", params=SERVER_KINDS)
def agent_server(request: pytest.FixtureRequest) -> ServedScenario:
    """Each server of :data:`SERVER_KINDS`, serving the scenario agent."""
    kind: str = request.param
    if kind == "sdk":
        server: SdkServer = request.getfixturevalue("sdk")
        return ServedScenario("sdk", server.base_url, server.card.name)
    if kind == "ours":
        from tests.client.ours import AGENT_NAME

        url: str = request.getfixturevalue("ours")
        return ServedScenario("ours", url, AGENT_NAME)
    raise AssertionError(f"unknown server kind {kind!r}")  # pragma: no cover


@pytest.fixture(params=BINDINGS)
def binding(request: pytest.FixtureRequest) -> str:
    """Each binding the client speaks."""
    value: str = request.param
    return value
