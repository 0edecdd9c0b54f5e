"""Unit tests of the server's pieces that need no app: checks, auth, skills, push configs,
card validators, and the SSE writer."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from a2a_actors.protocol._errors import (
    ContentTypeNotSupportedError,
    InvalidParamsError,
    ServerBusyError,
    TaskNotFoundError,
    UnauthenticatedError,
    UnsupportedOperationError,
)
from a2a_actors.protocol._models import Message, Part, Role, StreamResponse
from a2a_actors.protocol._requests import AuthenticationInfo, TaskPushNotificationConfig
from a2a_actors.protocol._sse import SSEParser
from a2a_actors.runtime import SubscriberDropped
from a2a_actors.server import MemoryPushConfigStore, ServerConfig, create_app, service_of
from a2a_actors.server._addresses import authority
from a2a_actors.server._auth.credentials import Authenticator, principal_for_secret
from a2a_actors.server._card import RenderedCard
from a2a_actors.server._checks import (
    HTTPRefusal,
    check_content_type,
    is_legacy,
    is_supported_v1,
    read_body,
    requested_extensions,
    requested_version,
)
from a2a_actors.server._events import EventStream
from a2a_actors.server._http.responses import Encoding, Message as ASGIMessage
from a2a_actors.server._http.sse import StreamCall, StreamFactory, StreamHub
from a2a_actors.server._push_configs import PushConfigs
from a2a_actors.server._skills import SkillFileError, load_skills, parse_front_matter

pytestmark = pytest.mark.anyio


# -- checks ------------------------------------------------------------------------------------


def test_content_types() -> None:
    for ok in (
        None,
        "",
        "application/json",
        "Application/JSON; charset=utf-8",
        "application/a2a+json",
        "application/vnd.x+json",
    ):
        check_content_type(ok)
    for bad in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; b=1"):
        with pytest.raises(ContentTypeNotSupportedError):
            check_content_type(bad)


def test_versions() -> None:
    assert requested_version({}, {}) == "0.3"
    assert requested_version({"A2A-Version": " "}, {}) == "0.3"
    assert requested_version({}, {"A2A-Version": "1.0"}) == "1.0"
    assert requested_version({"A2A-Version": "1.1"}, {"A2A-Version": "0.3"}) == "1.1"
    assert [v for v in ("1", "1.0", "1.1", "1.0.3") if is_supported_v1(v)] == [
        "1",
        "1.0",
        "1.1",
        "1.0.3",
    ]
    assert not any(is_supported_v1(v) for v in ("2.0", "0.3", "abc", "1.x", "", "01.0a"))
    assert is_legacy("0.3")
    assert is_legacy("0.3.0")
    assert not is_legacy("0.2")
    assert not is_legacy("1.0")


def test_extensions_header_lines() -> None:
    assert requested_extensions(["a, b", " c ,", "", "a"]) == {"a", "b", "c"}
    assert requested_extensions([]) == frozenset()


class _Chunks:
    def __init__(self, *chunks: bytes) -> None:
        self._chunks = list(chunks)
        self.read = 0

    def __aiter__(self) -> _Chunks:
        return self

    async def __anext__(self) -> bytes:
        if not self._chunks:
            raise StopAsyncIteration
        self.read += 1
        return self._chunks.pop(0)


async def test_read_body_limits() -> None:
    with anyio.fail_after(5):
        await _read_body_limits()


async def _read_body_limits() -> None:
    assert await read_body(None, _Chunks(b"ab", b"cd"), 4) == b"abcd"
    body = _Chunks(b"ab")
    with pytest.raises(HTTPRefusal) as refused:
        await read_body(10, body, 4)
    assert refused.value.status == 413
    assert body.read == 0  # refused on Content-Length alone
    body = _Chunks(b"abc", b"de", b"never read")
    with pytest.raises(HTTPRefusal):
        await read_body(None, body, 4)
    assert body.read == 2


# -- auth ----------------------------------------------------------------------------------------


def test_authenticator() -> None:
    auth = Authenticator(
        ServerConfig(
            api_keys={"k1": "one", "k2": "two"}, bearer_tokens={"t": "tee"}, api_key_header="X-Key"
        )
    )
    assert auth.enabled
    assert auth.authenticate({"X-Key": "k2"}) == "two"
    assert auth.authenticate({"Authorization": "Bearer t"}) == "tee"
    assert auth.authenticate({"X-Key": "nope", "Authorization": "bearer  t "}) == "tee"
    for headers in ({}, {"X-Key": "k3"}, {"X-API-Key": "k1"}, {"Authorization": "Token t"}):
        with pytest.raises(UnauthenticatedError):
            auth.authenticate(headers)
    anonymous = Authenticator(ServerConfig())
    assert not anonymous.enabled
    assert anonymous.authenticate({"X-API-Key": "anything"}) is None
    assert anonymous.security_schemes() == {}
    assert principal_for_secret("apikey", "k1") == principal_for_secret("apikey", "k1")
    assert "k1" not in principal_for_secret("apikey", "k1")


# -- skills --------------------------------------------------------------------------------------


def test_front_matter_subset() -> None:
    text = (
        "---\n"
        "name: 'Quoted'\n"
        "description: |\n"
        "  line one\n"
        "  line two\n"
        "tags:\n"
        "  - a\n"
        '  - "b"\n'
        "# a comment\n"
        "examples: [x, 'y z']\n"
        "---\n"
        "body\n"
    )
    assert parse_front_matter(text) == {
        "name": "Quoted",
        "description": "line one\nline two",
        "tags": ["a", "b"],
        "examples": ["x", "y z"],
    }
    assert parse_front_matter("no front matter") == {}
    with pytest.raises(SkillFileError):
        parse_front_matter("---\nname: x\n")


def test_skill_folder_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_skills(tmp_path / "missing")
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "SKILL.md").write_text("---\nname: x\n---\n", encoding="utf-8")
    with pytest.raises(SkillFileError, match="description"):
        load_skills(tmp_path)
    (tmp_path / "s" / "SKILL.md").write_text(
        "---\ndescription: d\ntags: a, b\n---\n", encoding="utf-8"
    )
    (skill,) = load_skills(tmp_path / "s")
    assert (skill.id, skill.name, skill.tags) == ("s", "s", ("a", "b"))


# -- push configs --------------------------------------------------------------------------------


async def test_push_config_rules() -> None:
    with anyio.fail_after(5):
        configs = PushConfigs(MemoryPushConfigStore(), max_per_task=3)
        secret = TaskPushNotificationConfig(
            url="https://h.example",
            token="tok",
            authentication=AuthenticationInfo(scheme="Bearer", credentials="cred"),
        )
        created = await configs.create("t1", secret)
        assert created.id
        assert created.task_id == "t1"
        assert created.token == ""
        assert created.authentication == AuthenticationInfo(scheme="Bearer")
        stored = await configs.store.get("t1", created.id)
        assert stored is not None
        assert stored.token == "tok"
        assert stored.authentication is not None
        assert stored.authentication.credentials == "cred"
        other = await configs.create("t1", secret)
        assert other.id != created.id
        await configs.create("t1", TaskPushNotificationConfig(url="https://x", id="named"))
        with pytest.raises(InvalidParamsError):
            await configs.create("t1", TaskPushNotificationConfig(url="https://x", id="fourth"))
        await configs.create("t2", TaskPushNotificationConfig(url="https://x", id="named"))

        first = await configs.list("t1", page_size=2)
        assert len(first.configs) == 2
        second = await configs.list("t1", page_size=2, page_token=first.next_page_token)
        assert [c.id for c in second.configs] == ["named"]
        assert second.next_page_token == ""
        with pytest.raises(InvalidParamsError):
            await configs.list("t1", page_token="garbage!")
        with pytest.raises(TaskNotFoundError):
            await configs.get("t1", "missing")
        await configs.delete("t1", "named")
        await configs.delete("t1", "named")
        await configs.delete("never", "never")
        assert [c.id for c in (await configs.list("t2")).configs] == ["named"]


# -- card validators ------------------------------------------------------------------------------


def test_rendered_card_matches() -> None:
    card = RenderedCard(b"{}", 'W/"abc"', "Mon, 30 Nov 2026 05:00:00 GMT", "public, max-age=1")
    assert card.matches('W/"abc"', None)
    assert card.matches('"abc"', None)
    assert card.matches("*", None)
    assert not card.matches('"abd"', None)
    assert card.matches(None, "Mon, 30 Nov 2026 06:00:00 GMT")
    assert not card.matches(None, "Mon, 30 Nov 2026 04:00:00 GMT")
    assert not card.matches('"x"', "Mon, 30 Nov 2026 06:00:00 GMT")  # If-None-Match wins
    assert not card.matches(None, "garbage")


# -- the SSE writer ------------------------------------------------------------------------------


def _event(text: str) -> StreamResponse:
    return StreamResponse(
        message=Message(message_id=text, role=Role.AGENT, parts=(Part(text=text),))
    )


class _Unbuffered:
    """An :class:`EventStream` over an async iterator: no versions, nothing buffered."""

    version = None

    def __init__(self, events: AsyncIterator[StreamResponse]) -> None:
        self._events = events

    def __aiter__(self) -> _Unbuffered:
        return self

    async def __anext__(self) -> StreamResponse:
        return await anext(self._events)

    def ready(self) -> bool:
        return False

    def next_nowait(self) -> None:
        return None


def _factory(*items: StreamResponse | BaseException, fail_on_enter: BaseException | None = None):  # type: ignore[no-untyped-def]
    @asynccontextmanager
    async def factory() -> AsyncIterator[EventStream]:
        if fail_on_enter is not None:
            raise fail_on_enter

        async def events() -> AsyncIterator[StreamResponse]:
            for item in items:
                if isinstance(item, BaseException):
                    raise item
                yield item

        yield _Unbuffered(events())

    return factory


TEST_ENCODING = Encoding(
    lambda _id, e: json.dumps({"ok": e.payload.message_id}).encode(),  # type: ignore[attr-defined]
    lambda _id, err: json.dumps({"code": err.code}).encode(),
    lambda err: 299,
)


async def _sent(
    hub: StreamHub, factory: StreamFactory, encoding: Encoding = TEST_ENCODING
) -> list[ASGIMessage]:
    """The ASGI messages of one stream served (in a cancel scope of its own)."""
    sent: list[ASGIMessage] = []

    async def send(message: ASGIMessage) -> None:
        sent.append(message)

    async def receive() -> ASGIMessage:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")  # pragma: no cover

    with anyio.CancelScope() as scope:
        await hub.serve(StreamCall(factory, encoding, 1, {}), receive, send, scope)
    return sent


async def _serve(
    hub: StreamHub, factory: StreamFactory, encoding: Encoding = TEST_ENCODING
) -> tuple[int, bytes, list[bytes]]:
    """Serve one whole stream: its status, its content type, and its body chunks."""
    start, *rest = await _sent(hub, factory, encoding)
    assert start["type"] == "http.response.start"
    assert rest[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    return start["status"], dict(start["headers"])[b"content-type"], [m["body"] for m in rest]


def _events(chunks: list[bytes]) -> list[tuple[str, str]]:
    parser = SSEParser()
    return [(e.event, e.data) for chunk in chunks for e in parser.feed(chunk)]


async def test_stream_errors_before_and_after_the_first_event() -> None:
    hub = StreamHub()
    json_type = b"application/json"
    with anyio.fail_after(5):
        status, kind, body = await _serve(hub, _factory(_event("a")))  # not attached: busy
        assert (status, kind, json.loads(b"".join(body))) == (299, json_type, {"code": -32050})
        async with anyio.create_task_group() as tg:
            hub.attach(tg)
            for factory, code in [
                (_factory(fail_on_enter=TaskNotFoundError()), -32001),
                (_factory(UnsupportedOperationError("first")), -32004),
                (_factory(RuntimeError("bug")), -32603),
            ]:
                status, kind, body = await _serve(hub, factory)
                assert (status, kind, json.loads(b"".join(body))) == (
                    299,
                    json_type,
                    {"code": code},
                )

            status, kind, body = await _serve(
                hub, _factory(_event("a"), _event("b"), TaskNotFoundError())
            )
            assert (status, kind) == (200, b"text/event-stream")
            assert _events(body) == [
                ("message", '{"ok": "a"}'),
                ("message", '{"ok": "b"}'),
                ("error", '{"code": -32001}'),
            ]
            dropped = SubscriberDropped("t", 3, 1)
            _, _, body = await _serve(hub, _factory(_event("a"), dropped))
            assert _events(body)[-1] == ("error", '{"code": -32050}')

            status, kind, body = await _serve(hub, _factory())
            assert (status, kind, _events(body)) == (200, b"text/event-stream", [])
            assert hub.open_streams == 0
            tg.cancel_scope.cancel()  # the coarse timer of the watchers


async def test_hub_close_ends_open_streams() -> None:
    hub = StreamHub()
    gate = anyio.Event()
    first = anyio.Event()

    @asynccontextmanager
    async def endless() -> AsyncIterator[EventStream]:
        async def events() -> AsyncIterator[StreamResponse]:
            yield _event("first")
            first.set()
            await gate.wait()
            yield _event("never")  # pragma: no cover

        yield _Unbuffered(events())

    results: list[list[ASGIMessage]] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            hub.attach(tg)

            async def serve() -> None:
                results.append(await _sent(hub, endless))

            tg.start_soon(serve)
            await first.wait()
            assert hub.open_streams == 1
            hub.close()
            await anyio.wait_all_tasks_blocked()
            assert hub.open_streams == 0
            status, _, body = await _serve(hub, endless)
            assert (status, json.loads(b"".join(body))) == (299, {"code": -32050})
    # cut short, with no end: the server closes the connection
    [(start, first_chunk)] = results
    assert start["status"] == 200
    assert _events([first_chunk["body"]]) == [("message", '{"ok": "first"}')]


async def test_hub_tracks_streams_served_in_their_own_task() -> None:
    hub = StreamHub()
    scope = anyio.CancelScope()
    assert isinstance(hub.track(scope), ServerBusyError)  # not attached: refused
    assert hub.open_streams == 0
    ran: list[str] = []

    async def helper(cancel: anyio.CancelScope) -> None:
        with cancel:
            ran.append("started")
            await anyio.sleep_forever()
        ran.append("stopped")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            hub.attach(tg)
            assert hub.track(scope) is None
            assert hub.open_streams == 1
            stop = anyio.CancelScope()
            hub.start_soon(helper, stop)
            await anyio.wait_all_tasks_blocked()
            stop.cancel()
            hub.close()  # cancels every tracked stream
            assert scope.cancel_called
            hub.untrack(scope)
            hub.untrack(scope)  # idempotent
            assert hub.open_streams == 0
            hub.start_soon(helper, anyio.CancelScope())  # closed: nothing starts
        assert ran == ["started", "stopped"]


# -- config and app --------------------------------------------------------------------------------


def test_config_validation() -> None:
    for bad in (
        {"max_body_bytes": 0},
        {"ping_interval": 0},
        {"rest_prefix": "rest"},
        {"rest_prefix": "/"},
        {"public_url": "ftp://x"},
    ):
        with pytest.raises(ValueError):
            ServerConfig(**bad)
    config = ServerConfig(api_keys={"k": "p"})
    assert config.auth_enabled
    assert config.extended_card_needs_auth
    assert not config.replace(extended_card_requires_auth=False).extended_card_needs_auth
    assert not config.extended_card_declared
    assert config.replace(declare_extended_card=True).extended_card_declared


def test_create_app_outside_an_event_loop_and_service_of() -> None:
    from quart import Quart

    from .agents import scenario_agent

    app = create_app(scenario_agent)  # no loop running: an asyncio (Quart) app
    assert type(app) is Quart
    assert service_of(app).agent is scenario_agent
    trio_app = create_app(scenario_agent, backend="trio")
    assert type(trio_app).__name__ == "QuartTrio"
    with pytest.raises(TypeError):
        service_of(Quart("other"))
    with pytest.raises(TypeError):
        create_app(42)


async def test_a_stream_cancelled_while_entering_leaves_the_runtime_context() -> None:
    hub = StreamHub()
    entered = anyio.Event()
    exited: list[bool] = []

    @asynccontextmanager
    async def slow() -> AsyncIterator[EventStream]:
        entered.set()
        try:
            await anyio.sleep_forever()
        finally:
            exited.append(True)
        yield _Buffered()  # pragma: no cover

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            hub.attach(tg)
            async with anyio.create_task_group() as servers:

                async def server() -> None:
                    assert await _sent(hub, slow) == []  # cancelled: nothing sent

                servers.start_soon(server)
                await entered.wait()
                hub.close()  # as at shutdown
            assert exited == [True]
            assert hub.open_streams == 0
            hub.attach(tg)  # the hub serves again
            _, _, body = await _serve(hub, _factory(_event("a")))
            assert _events(body) == [("message", '{"ok": "a"}')]
            tg.cancel_scope.cancel()


class _Buffered:
    """An event stream with ``next_nowait`` (like a runtime Subscription), never ``ready``."""

    version = None

    def __init__(self, *batches: tuple[StreamResponse, ...]) -> None:
        self._batches = list(batches)
        self._buffer: list[StreamResponse] = []

    def __aiter__(self) -> _Buffered:
        return self

    async def __anext__(self) -> StreamResponse:
        await anyio.lowlevel.checkpoint()
        if not self._buffer:
            if not self._batches:
                raise StopAsyncIteration
            self._buffer.extend(self._batches.pop(0))
        return self._buffer.pop(0)

    def next_nowait(self) -> StreamResponse | None:
        return self._buffer.pop(0) if self._buffer else None

    def ready(self) -> bool:
        return False


async def test_buffered_events_go_out_in_one_chunk() -> None:
    hub = StreamHub()
    source = _Buffered((_event("a"),), (_event("b"), _event("c"), _event("d")), (_event("e"),))

    @asynccontextmanager
    async def factory() -> AsyncIterator[EventStream]:
        yield source

    encoding = Encoding(
        lambda _id, e: e.payload.message_id.encode(),  # type: ignore[attr-defined]
        lambda _id, err: b"error",
        lambda err: 200,
    )
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            hub.attach(tg)
            _, _, body = await _serve(hub, factory, encoding)
            tg.cancel_scope.cancel()
    parser = SSEParser()
    chunks = [[e.data for e in parser.feed(chunk)] for chunk in body if chunk]
    assert [data for chunk in chunks for data in chunk] == ["a", "b", "c", "d", "e"]
    assert ["b", "c", "d"] in chunks or ["a", "b", "c", "d"] in chunks
    assert hub.open_streams == 0


@pytest.mark.parametrize(
    ("host", "port", "written"),
    [("127.0.0.1", 8000, "127.0.0.1:8000"), ("::1", 8000, "[::1]:8000"), ("h", "50051", "h:50051")],
)
def test_an_address_puts_an_ipv6_host_in_brackets(host: str, port: int | str, written: str) -> None:
    assert authority(host, port) == written
