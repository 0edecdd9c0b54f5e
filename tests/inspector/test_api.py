"""The inspector's HTTP API on a real server: auth, per-owner isolation, SSE, errors."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.protocol._models import Task, TaskState
from a2a_actors.server import ServerConfig, create_app
from a2a_actors.server._config.trust import JWTOptions
from a2a_actors.server._observability.inspector import InspectorOptions
from tests.server.agents import QUESTION, scenario_agent
from tests.server.helpers import HTTPX_EARLY_EXIT
from tests.trust.keys import AUDIENCE, ISSUER, SigningKey, jwks

from .helpers import ALICE, BOB, KEYS, EventReader, inspected_server

pytestmark = HTTPX_EARLY_EXIT
TIMEOUT = 20.0


async def _task(url: str, text: str, *, key: str | None = None, immediate: bool = False) -> Task:
    async with await A2AClient.connect(url, api_key=key) as client:
        reply = await client.send_message(text, return_immediately=immediate)
    assert isinstance(reply, Task)
    return reply


async def test_the_api_needs_the_credentials_of_the_a2a_endpoints() -> None:
    with anyio.fail_after(TIMEOUT):
        async with inspected_server(api_keys=KEYS) as url, httpx.AsyncClient() as http:
            task = await _task(url, "hello", key="key-alice")
            for path in (
                "/inspect/api/tasks",
                f"/inspect/api/tasks/{task.id}/events",
                f"/inspect/api/tasks/{task.id}/tree",
                "/inspect/api/stream",
            ):
                refused = await http.get(url + path)
                assert refused.status_code == 401, path
                challenge = refused.headers["WWW-Authenticate"]
                assert challenge == 'ApiKey realm="a2a", header="X-API-Key"'
                assert refused.json()["error"]["status"] == "UNAUTHENTICATED"
                wrong = await http.get(url + path, headers={"X-API-Key": "nope"})
                assert wrong.status_code == 401, path
            # The page itself is public (it holds no data) and asks for the key from script.
            page = await http.get(url + "/inspect/")
            assert page.status_code == 200
            assert page.headers["content-type"] == "text/html; charset=utf-8"
            assert "default-src 'none'" in page.headers["Content-Security-Policy"]
            assert 'id="auth-form"' in page.text
            listed = await http.get(url + "/inspect/api/tasks", headers=ALICE)
            assert listed.status_code == 200
            assert [row["id"] for row in listed.json()["tasks"]] == [task.id]
            assert listed.headers["Cache-Control"] == "no-store"


async def test_a_caller_sees_only_its_own_tasks_everywhere() -> None:
    with anyio.fail_after(TIMEOUT):
        async with inspected_server(api_keys=KEYS) as url, httpx.AsyncClient() as http:
            async with http.stream("GET", url + "/inspect/api/stream", headers=BOB) as stream:
                bobs = EventReader(stream)
                assert (await bobs.next()).event == "ready"
                alices = await _task(url, "hello from alice", key="key-alice")
                bob = await _task(url, "hello from bob", key="key-bob")
                # Bob's stream carries his task's events and none of Alice's.
                seen = set()
                while True:
                    event = await bobs.next()
                    seen.add(json.loads(event.data)["row"]["id"])
                    if json.loads(event.data)["row"].get("state") == "completed":
                        break
                assert seen == {bob.id}
            for headers, own, other in ((ALICE, alices, bob), (BOB, bob, alices)):
                rows = (await http.get(url + "/inspect/api/tasks", headers=headers)).json()
                assert [row["id"] for row in rows["tasks"]] == [own.id]
                assert rows["totalSize"] == 1
                for what in ("events", "tree"):
                    path = f"/inspect/api/tasks/{own.id}/{what}"
                    mine = await http.get(url + path, headers=headers)
                    assert mine.status_code == 200
                    theirs = await http.get(
                        url + f"/inspect/api/tasks/{other.id}/{what}", headers=headers
                    )
                    assert theirs.status_code == 404  # as GetTask: unknown, not forbidden
                    assert theirs.json()["error"]["status"] == "NOT_FOUND"


async def test_the_stream_is_sse_ready_then_task_updates_then_pings() -> None:
    with anyio.fail_after(TIMEOUT):
        async with (
            inspected_server(ping_interval=0.05) as url,
            httpx.AsyncClient() as http,
            http.stream("GET", url + "/inspect/api/stream") as stream,
        ):
            assert stream.status_code == 200
            assert stream.headers["content-type"] == "text/event-stream"
            assert stream.headers["cache-control"] == "no-store"
            events = EventReader(stream)
            ready = await events.next()
            assert ready.event == "ready"
            assert json.loads(ready.data) == {"agent": "scenario-agent", "buffer": 256}
            assert events.raw.startswith(b'event: ready\ndata: {"agent":"scenario-agent"')
            task = await _task(url, "input please", immediate=True)
            updates: list[dict[str, Any]] = []
            while not updates or updates[-1]["row"].get("state") != "input-required":
                event = await events.next()
                assert event.event == "task"
                updates.append(json.loads(event.data))
            created, *_, asked = updates
            assert created["entry"]["kind"] == "created"
            assert created["row"]["id"] == task.id
            assert created["row"]["agent"] == "scenario-agent"
            assert asked["entry"] == {
                "kind": "status",
                "at": asked["entry"]["at"],
                "state": "input-required",
                "message": {"role": "agent", "text": QUESTION},
                "version": asked["entry"]["version"],
            }
            assert asked["row"]["lastMessage"] == {"role": "agent", "text": QUESTION}
            while b"\n: ping\n\n" not in events.raw:  # the task waits: the stream is idle
                await events.read_chunk()


async def test_shutdown_ends_an_open_stream_cleanly() -> None:
    # The stream is the StreamHub's: shutdown ends it with a complete answer, instead of
    # leaving it to the server's graceful timeout to cut.
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient() as http:
            async with inspected_server() as url:
                request = http.build_request("GET", url + "/inspect/api/stream")
                response = await http.send(request, stream=True)
                events = EventReader(response)
                assert (await events.next()).event == "ready"
            with pytest.raises(StopAsyncIteration):  # the end, not a RemoteProtocolError
                await events.read_chunk()
            await response.aclose()


async def test_list_filters_by_state_and_pages() -> None:
    with anyio.fail_after(TIMEOUT):
        async with inspected_server() as url, httpx.AsyncClient() as http:
            done = await _task(url, "hello")
            waiting = await _task(url, "input please")  # answered once it waits
            assert waiting.status.state is TaskState.INPUT_REQUIRED
            api = url + "/inspect/api/tasks"
            rows = (await http.get(api, params={"state": "input-required"})).json()["tasks"]
            assert [row["id"] for row in rows] == [waiting.id]
            assert rows[0]["state"] == "input-required"
            rows = (await http.get(api, params={"state": "TASK_STATE_COMPLETED"})).json()["tasks"]
            assert [row["id"] for row in rows] == [done.id]
            first = (await http.get(api, params={"pageSize": "1"})).json()
            assert len(first["tasks"]) == 1
            assert first["totalSize"] == 2
            second = (await http.get(api, params={"pageToken": first["nextPageToken"]})).json()
            assert {r["id"] for r in first["tasks"] + second["tasks"]} == {done.id, waiting.id}
            bad = await http.get(api, params={"state": "sleepy"})
            assert bad.status_code == 400
            assert "unknown state 'sleepy'" in bad.json()["error"]["message"]
            assert (await http.get(api, params={"pageSize": "0"})).status_code == 400


async def test_a_timeline_is_recorded_or_read_from_the_snapshot() -> None:
    with anyio.fail_after(TIMEOUT):
        async with inspected_server() as url, httpx.AsyncClient() as http:
            task = await _task(url, "stream it")
            detail = (await http.get(url + f"/inspect/api/tasks/{task.id}/events")).json()
            assert detail["source"] == "recorded"
            kinds = [(e["kind"], e.get("state"), e.get("text")) for e in detail["events"]]
            assert kinds == [
                ("created", "submitted", None),
                ("status", "working", None),
                ("artifact", None, "alpha "),
                ("artifact", None, "beta "),
                ("artifact", None, "gamma"),
                ("status", "completed", None),
            ]
            versions = [e["version"] for e in detail["events"]]
            assert versions == sorted(versions)
            assert detail["task"]["state"] == "completed"
            assert detail["parent"] is None
            assert detail["children"] == 0


async def test_an_unrecorded_task_has_a_timeline_from_its_snapshot() -> None:
    # max_tasks=1: the first task's events are forgotten once a second one is recorded.
    with anyio.fail_after(TIMEOUT):
        options = InspectorOptions(max_tasks=1)
        async with inspected_server(inspect=options) as url, httpx.AsyncClient() as http:
            first = await _task(url, "hello one")
            await _task(url, "hello two")
            detail = (await http.get(url + f"/inspect/api/tasks/{first.id}/events")).json()
            assert detail["source"] == "snapshot"
            assert [e["kind"] for e in detail["events"]] == ["message", "artifact", "status"]
            assert detail["events"][0]["message"] == {"role": "user", "text": "hello one"}


async def test_other_paths_and_methods() -> None:
    with anyio.fail_after(TIMEOUT):
        async with inspected_server() as url, httpx.AsyncClient() as http:
            redirect = await http.get(url + "/inspect")
            assert redirect.status_code == 308
            assert redirect.headers["Location"] == "inspect/"
            for name, kind in (("inspector.js", "text/javascript"), ("inspector.css", "text/css")):
                found = await http.get(url + f"/inspect/{name}")
                assert found.status_code == 200
                assert found.headers["content-type"].startswith(kind)
            assert (await http.get(url + "/inspect/nothing")).status_code == 404
            assert (await http.get(url + "/inspect/api/nothing")).status_code == 404
            assert (await http.get(url + "/inspect/api/tasks/x/nothing")).status_code == 404
            posted = await http.post(url + "/inspect/api/tasks")
            assert posted.status_code == 405
            assert posted.headers["Allow"] == "GET, HEAD"
            # The rest of the server is untouched.
            card = await http.get(url + "/.well-known/agent-card.json")
            assert card.status_code == 200


async def test_without_inspect_there_is_no_page_and_no_observer() -> None:
    app = create_app(scenario_agent, ServerConfig())
    async with app.test_app() as test_app:
        client = test_app.test_client()
        response = await client.get("/inspect/")
        assert response.status_code == 404
    assert type(app.asgi_app).__name__ == "A2ACore"


@pytest.mark.parametrize("peers", ["http://a", ("ftp://a",)])
def test_bad_peers_are_refused(peers: object) -> None:
    with pytest.raises(ValueError, match="inspector peer"):
        InspectorOptions(peers=peers)  # type: ignore[arg-type]


async def test_jwt_bearer_tokens_work_as_on_the_a2a_endpoints() -> None:
    key = SigningKey.make("k1", "ES256")
    jwt = JWTOptions(jwks=jwks(key), issuer=ISSUER, audience=AUDIENCE)
    alice = {"Authorization": f"Bearer {key.token('alice')}"}
    with anyio.fail_after(TIMEOUT):
        async with inspected_server(jwt=jwt) as url, httpx.AsyncClient() as http:
            async with await A2AClient.connect(url, bearer_token=key.token("alice")) as client:
                task = await client.send_message("hello")
            assert isinstance(task, Task)
            listed = await http.get(url + "/inspect/api/tasks", headers=alice)
            assert [row["id"] for row in listed.json()["tasks"]] == [task.id]
            bobs = {"Authorization": f"Bearer {key.token('bob')}"}
            assert (await http.get(url + "/inspect/api/tasks", headers=bobs)).json()["tasks"] == []
            bad = {"Authorization": "Bearer " + key.token("alice", exp=1)}
            refused = await http.get(url + "/inspect/api/tasks", headers=bad)
            assert refused.status_code == 401
            assert 'error="invalid_token"' in refused.headers["WWW-Authenticate"]
