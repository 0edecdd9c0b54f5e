"""``a2a-actors serve --store sqlite:PATH``: SIGKILL mid-burst, restart, nothing lost."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from a2a_actors.stores._sqlite import RESTART_TEXT

from .helpers import HTTPX_EARLY_EXIT, sse_lines
from .test_cli import ROOT, V1, _first_line

pytestmark = pytest.mark.anyio

GUARD = 120.0


@pytest.fixture
def anyio_backend() -> str:
    return "trio"  # the harness side; the served backend is the --backend flag


async def rpc(http: httpx.AsyncClient, url: str, method: str, params: Any) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = await http.post(f"{url}/", json=body, headers=V1)
    reply = response.json()
    assert "error" not in reply, reply
    return reply["result"]


def send(text: str, n: int, *, task_id: str = "", immediate: bool = False) -> dict[str, Any]:
    message: dict[str, Any] = {"messageId": f"m{n}", "role": "ROLE_USER", "parts": [{"text": text}]}
    if task_id:
        message["taskId"] = task_id
    return {"message": message, "configuration": {"returnImmediately": immediate}}


class Burst:
    """Tasks started concurrently, each followed on its stream until its handler runs."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.working: list[str] = []

    async def start_working(self, http: httpx.AsyncClient, url: str, n: int) -> None:
        """SendStreamingMessage "hang" and read it until the task is WORKING."""
        body = {"jsonrpc": "2.0", "id": n, "method": "SendStreamingMessage"}
        body["params"] = send("hang", n)
        async with (
            http.stream("POST", f"{url}/", json=body, headers=V1) as response,
            sse_lines(response) as lines,
        ):
            assert response.headers["content-type"].startswith("text/event-stream")
            async for line in lines:
                if not line.startswith("data:"):
                    continue
                event = json.loads(line[5:])["result"]
                task = event.get("task") or event.get("statusUpdate")
                if task["status"]["state"] == "TASK_STATE_WORKING":
                    self.working.append(task.get("id") or task["taskId"])
                    break
            else:
                raise AssertionError(f"the stream of burst task {n} ended before it worked")
        # Leaving the stream does not cancel the task; its handler hangs until it is killed.


def serve_command(db: Path, backend: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "a2a_actors.cli",
        "serve",
        "tests.server.durable_agent:agent",
        "--store",
        f"sqlite:{db}",
        "--backend",
        backend,
    ]


@HTTPX_EARLY_EXIT  # each burst stream is left once its task works
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
async def test_sigkill_mid_burst_then_restart_loses_nothing(tmp_path: Path, backend: str) -> None:
    db = tmp_path / "tasks.db"
    observed: dict[str, str] = {}  # task id -> the last state this client saw
    kinds: dict[str, str] = {}
    with anyio.fail_after(GUARD):
        async with (
            await anyio.open_process(serve_command(db, backend), cwd=ROOT) as first,
            httpx.AsyncClient(timeout=30) as http,
        ):
            url = await _first_line(first)
            n = 0
            parked_with_push = ""
            for round_ in range(5):
                for text in ("quick", "park", "hang"):
                    n += 1
                    result = await rpc(
                        http, url, "SendMessage", send(text, n, immediate=text == "hang")
                    )
                    task = result["task"]
                    observed[task["id"]] = task["status"]["state"]
                    kinds[task["id"]] = text
                    if text == "park" and not parked_with_push:
                        parked_with_push = task["id"]
                        config = {
                            "taskId": task["id"],
                            "id": f"hook-{round_}",
                            "url": "http://127.0.0.1:9/hook",
                            "token": "secret-token",
                        }
                        await rpc(http, url, "CreateTaskPushNotificationConfig", config)
            # A burst in flight when the process dies: started concurrently, and killed only
            # once every one of its handlers runs (its stream showed the task WORKING).
            burst = Burst(10)
            async with anyio.create_task_group() as tg:
                for _ in range(burst.size):
                    n += 1
                    tg.start_soon(burst.start_working, http, url, n)
            assert len(burst.working) == burst.size
            query = {"status": "TASK_STATE_WORKING", "pageSize": 100}
            running = (await rpc(http, url, "ListTasks", query))["tasks"]
            assert {t["status"]["state"] for t in running} == {"TASK_STATE_WORKING"}
            assert set(burst.working) <= {t["id"] for t in running}
            first.send_signal(signal.SIGKILL)
            await first.wait()
            for task_id in burst.working:
                observed[task_id] = "TASK_STATE_WORKING"
                kinds[task_id] = "hang"

        async with (
            await anyio.open_process(serve_command(db, backend), cwd=ROOT) as second,
            httpx.AsyncClient(timeout=30) as http,
        ):
            try:
                url = await _first_line(second)
                for task_id, state in observed.items():
                    task = await rpc(http, url, "GetTask", {"id": task_id})
                    now = task["status"]["state"]
                    if kinds[task_id] == "quick":
                        assert now == state == "TASK_STATE_COMPLETED"
                    elif kinds[task_id] == "park":
                        assert now == state == "TASK_STATE_INPUT_REQUIRED"
                    else:  # was running when the process died
                        assert state in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
                        assert now == "TASK_STATE_FAILED"
                        assert task["status"]["message"]["parts"][0]["text"] == RESTART_TEXT
                listed = await rpc(
                    http, url, "ListTaskPushNotificationConfigs", {"taskId": parked_with_push}
                )
                assert [c["id"] for c in listed["configs"]] == ["hook-0"]
                assert "token" not in listed["configs"][0]
                resumed = await rpc(
                    http, url, "SendMessage", send("Paris", n + 1, task_id=parked_with_push)
                )
                status = resumed["task"]["status"]
                assert status["state"] == "TASK_STATE_COMPLETED"
                assert status["message"]["parts"][0]["text"] == "resumed with Paris"
                everything = await rpc(http, url, "ListTasks", {"pageSize": 100})
                for task in everything["tasks"]:  # in-flight ones too: none left running
                    assert task["status"]["state"] in (
                        "TASK_STATE_COMPLETED",
                        "TASK_STATE_INPUT_REQUIRED",
                        "TASK_STATE_FAILED",
                    )
            finally:
                second.send_signal(signal.SIGTERM)
                await second.wait()


async def test_a_corrupt_store_file_is_a_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    db.write_bytes(b"this is not a database" * 100)
    with anyio.fail_after(GUARD):
        result = await anyio.run_process(serve_command(db, "asyncio"), cwd=ROOT, check=False)
    assert result.returncode == 2
    assert result.stdout == b""
    error = result.stderr.decode()
    assert "cannot open the task store" in error
    assert "Traceback" not in error
