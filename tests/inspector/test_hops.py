"""The hop tree the inspector reads: recorded children only, bounded, peers as allowed."""

from __future__ import annotations

import datetime as _dt
import json

import httpx
import pytest

from a2a_actors.protocol import codec
from a2a_actors.protocol._errors import A2AError, TaskNotFoundError
from a2a_actors.protocol._models import Task, TaskState, TaskStatus
from a2a_actors.server._config.inspector import InspectorOptions
from a2a_actors.server._observability.inspector.hops import MAX_ANSWER, PeerReader, read_tree
from a2a_actors.server._observability.inspector.views import CORRELATION_URI
from orchestrator._correlation import CORRELATION_URI as ORCHESTRATOR_URI, ChildRecord, HopRecord
from tests.server.helpers import HTTPX_EARLY_EXIT

NOW = _dt.datetime(2026, 12, 1, 12, 0, tzinfo=_dt.UTC)
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def hop(task_id: str, agent: str, depth: int, *children: ChildRecord, parent_url: str = "") -> Task:
    record = HopRecord(
        trace_id=TRACE,
        depth=depth,
        agent=agent,
        started_at=NOW,
        parent_task_id="p" if parent_url else "",
        parent_url=parent_url,
        children=list(children),
    )
    status = TaskStatus(state=TaskState.COMPLETED, timestamp=NOW + _dt.timedelta(seconds=1))
    return Task(
        id=task_id, context_id="c", status=status, metadata={CORRELATION_URI: record.to_metadata()}
    )


def child(task_id: str, agent: str, depth: int, url: str = "") -> ChildRecord:
    return ChildRecord(
        agent=agent,
        task_id=task_id,
        depth=depth,
        url=url,
        local=not url,
        state="TASK_STATE_WORKING",
        started_at=NOW,
    )


def test_the_extension_uri_is_the_orchestrators() -> None:
    assert CORRELATION_URI == ORCHESTRATOR_URI


async def test_children_are_read_where_their_parent_recorded_them_and_never_above() -> None:
    b, c = "http://b.example", "http://c.example"
    tasks = {
        ("", "local-1"): hop("local-1", "editor", 1),
        (b, "remote-1"): hop("remote-1", "archive", 1, child("remote-local", "index", 2)),
        (b, "remote-local"): hop("remote-local", "index", 2, child("deep", "leaf", 3, c)),
        # c's task is never readable: it is shown as its parent recorded it.
    }
    reads: list[tuple[str, str]] = []

    async def read(url: str, task_id: str) -> Task:
        reads.append((url, task_id))
        if (url, task_id) not in tasks:
            raise TaskNotFoundError()
        return tasks[url, task_id]

    root = hop(
        "root",
        "planner",
        0,
        child("local-1", "editor", 1),
        child("remote-1", "archive", 1, b),
        parent_url="http://attacker.example",  # sent by a client: never read
    )
    tree = await read_tree(root, read, agent="served", max_hops=16)
    assert sorted(reads) == sorted(
        [("", "local-1"), (b, "remote-1"), (b, "remote-local"), (c, "deep")]
    )
    assert [n["agent"] for n in tree["children"]] == ["editor", "archive"]
    editor, archive = tree["children"]
    assert editor["local"]
    assert editor["reachable"]
    assert editor["url"] == ""
    assert archive["url"] == b
    assert archive["inspectUrl"] == f"{b}/inspect#task=remote-1"
    index = archive["children"][0]
    assert (index["agent"], index["url"], index["depth"]) == ("index", b, 2)
    leaf = index["children"][0]
    assert leaf["reachable"] is False
    assert (leaf["agent"], leaf["state"], leaf["url"]) == ("leaf", "working", c)
    assert tree["durationMs"] == 1000.0
    assert tree["traceId"] == TRACE


async def test_the_hop_budget_bounds_the_reads() -> None:
    many = [child(f"k{n}", f"a{n}", 1) for n in range(5)]
    reads = []

    async def read(url: str, task_id: str) -> Task:
        reads.append(task_id)
        return hop(task_id, "x", 1)

    tree = await read_tree(hop("root", "r", 0, *many), read, agent="r", max_hops=3)
    assert len(reads) == 2  # the root is one of the three
    assert sorted(n["reachable"] for n in tree["children"]) == [False, False, False, True, True]


def test_peers_are_http_urls_of_the_allow_list() -> None:
    anyone = PeerReader(InspectorOptions(), httpx.AsyncClient())
    assert anyone.allowed("http://10.0.0.7:8001")
    assert not anyone.allowed("file:///etc/passwd")
    assert not anyone.allowed("javascript:alert(1)")
    listed = PeerReader(InspectorOptions(peers=("http://a.example/",)), httpx.AsyncClient())
    assert listed.allowed("http://a.example")
    assert not listed.allowed("http://b.example")
    nobody = PeerReader(InspectorOptions(peers=()), httpx.AsyncClient())
    assert not nobody.allowed("http://a.example")


@HTTPX_EARLY_EXIT  # the answer that is too big is left unread
async def test_a_peer_read_sends_its_headers_follows_no_redirect_and_is_bounded() -> None:
    seen: list[httpx.Request] = []
    task = hop("t1", "archive", 1)

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.host == "moved.example":
            return httpx.Response(307, headers={"Location": "http://169.254.169.254/"})
        if request.url.host == "big.example":
            return httpx.Response(200, content=b" " * (MAX_ANSWER + 1))
        body = {"jsonrpc": "2.0", "id": 1, "result": json.loads(codec.encode(task))}
        return httpx.Response(200, json=body)

    options = InspectorOptions(peer_headers={"http://ok.example": {"X-API-Key": "peer-key"}})
    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
        peers = PeerReader(options, client)
        assert (await peers.get_task("http://ok.example", "t1")).id == "t1"
        sent = seen[-1]
        assert str(sent.url) == "http://ok.example/"
        assert sent.headers["X-API-Key"] == "peer-key"
        assert json.loads(sent.content)["method"] == "GetTask"
        with pytest.raises(A2AError, match="HTTP 307"):
            await peers.get_task("http://moved.example", "t1")
        assert [r.url.host for r in seen].count("169.254.169.254") == 0
        with pytest.raises(A2AError, match="over"):
            await peers.get_task("http://big.example", "t1")
        with pytest.raises(A2AError, match="not the task asked for"):
            await peers.get_task("http://ok.example", "another")
