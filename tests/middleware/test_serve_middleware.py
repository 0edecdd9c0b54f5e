"""``a2a-actors serve --middleware MODULE:ATTR``: the chain around the served handler, in
flag order, also around a pipeline (which still brings its delegator); bad values refused."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.protocol import Task
from tests.registry.test_nats import first_line, run_cli

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def anyio_backend() -> str:
    return "trio"  # the harness side; the server is a subprocess


@pytest.mark.parametrize(
    ("target", "sent", "answer"),
    [
        ("tests.registry.helpers:upper", "hi", "[upper:HI]"),
        ("tests.middleware.served:local_pipeline", "abc", "[local:CBA]"),
    ],
)
async def test_served_with_middleware_in_flag_order(target: str, sent: str, answer: str) -> None:
    command = [sys.executable, "-m", "a2a_actors.cli", "serve", target]
    command += ["--middleware", "tests.middleware.served:bracket"]
    command += ["--middleware", "tests.middleware.served:tag"]
    with anyio.fail_after(60):
        async with await anyio.open_process(command, cwd=ROOT) as process:
            try:
                url = await first_line(process)
                async with await A2AClient.connect(url) as client:
                    task = await client.send_message(sent)
            finally:
                process.terminate()
    assert isinstance(task, Task)
    assert task.status.message is not None
    assert task.status.message.text == answer


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("tests.middleware.served:not_callable", "a middleware is an async callable"),
        ("tests.middleware.served:missing", "has no attribute 'missing'"),
        ("nocolon", "expected MODULE:ATTR"),
    ],
)
async def test_bad_middleware_is_refused_before_serving(spec: str, says: str) -> None:
    with anyio.fail_after(60):
        status, out, err = await run_cli(
            "serve", "tests.registry.helpers:upper", "--middleware", spec
        )
    assert status == 2
    assert out == ""
    assert says in err
    assert err.startswith("a2a-actors serve: --middleware")
