"""``a2a-actors serve`` as a subprocess: ``--metrics`` behind the key, traces from OTEL_*.

No code change and no flag for traces: the standard variables point the server at a real
OTLP/HTTP receiver started here, and its spans arrive when the server stops.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
from prometheus_client.parser import text_string_to_metric_families

from a2a_actors.client import A2AClient
from a2a_actors.protocol._models import Task, TaskState
from tests.observability.otlp import exported_spans, otlp_environment
from tests.push.receiver import receiver

ROOT = Path(__file__).resolve().parents[2]
GUARD = 90.0


@asynccontextmanager
async def _cli_server(env: dict[str, str], *args: str) -> AsyncIterator[str]:
    """``python -m a2a_actors.cli serve ARGS`` with ``env``; its URL line; SIGTERM, exit 0."""
    command = [sys.executable, "-m", "a2a_actors.cli", "serve", *args]
    async with await anyio.open_process(command, cwd=ROOT, env=env) as process:
        try:
            assert process.stdout is not None
            data = b""
            while b"\n" not in data:
                try:
                    data += await process.stdout.receive()
                except anyio.EndOfStream:
                    assert process.stderr is not None
                    errors = b"".join([chunk async for chunk in process.stderr])
                    raise AssertionError(f"the server exited: {errors.decode()}") from None
            yield data.decode().strip()
            process.send_signal(signal.SIGTERM)
            assert await process.wait() == 0
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()


async def test_serve_metrics_flag_and_traces_from_the_environment() -> None:
    with anyio.fail_after(GUARD):
        async with receiver() as collector:
            env = otlp_environment(collector.base_url, "cli-echo")
            args = ("examples.echo:agent", "--api-key", "s3cret", "--metrics")
            async with _cli_server(env, *args) as url, httpx.AsyncClient() as http:
                assert (await http.get(f"{url}/metrics")).status_code == 401
                async with await A2AClient.connect(url, api_key="s3cret") as client:
                    task = await client.send_message("hello")
                assert isinstance(task, Task)
                assert task.status.state is TaskState.COMPLETED
                scraped = await http.get(f"{url}/metrics", headers={"X-API-Key": "s3cret"})
                assert scraped.status_code == 200
            requests = list(collector.requests)
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(scraped.text)
        for sample in family.samples
    }
    sent = (("binding", "jsonrpc"), ("code", "OK"), ("method", "SendMessage"))
    assert samples[("a2a_requests_total", sent)] == 1
    assert samples[("a2a_tasks_finished_total", (("state", "completed"),))] == 1
    exported = exported_spans(requests)
    assert {e.service for e in exported} == {"cli-echo"}
    names = sorted(e.span.name for e in exported)
    assert names == ["a2a.task", "lf.a2a.v1.A2AService/SendMessage"]
