"""Tests for the sans-I/O SSE framing module."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError

import pytest
from hypothesis import given, settings, strategies as st

from a2a_actors.protocol._sse import (
    SSEEvent,
    SSEParser,
    SSEProtocolError,
    encode_comment,
    encode_event,
)


def parse(stream: bytes, **kwargs: int) -> list[SSEEvent]:
    parser = SSEParser(**kwargs)
    return parser.feed(stream) + parser.close()


def parse_chunks(chunks: list[bytes]) -> list[SSEEvent]:
    parser = SSEParser()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return events + parser.close()


# --- encoding: golden bytes -------------------------------------------------------------


def test_encode_single_line_json() -> None:
    payload = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"kind": "task"}})
    assert encode_event(payload) == b"data: " + payload.encode() + b"\n\n"


def test_encode_with_event() -> None:
    assert encode_event('{"a":1}', event="error") == b'event: error\ndata: {"a":1}\n\n'


def test_encode_all_fields() -> None:
    got = encode_event("x", event="update", id="42", retry=3000)
    assert got == b"event: update\nid: 42\nretry: 3000\ndata: x\n\n"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("a\nb", b"data: a\ndata: b\n\n"),
        ("a\r\nb", b"data: a\ndata: b\n\n"),
        ("a\rb", b"data: a\ndata: b\n\n"),
        ("a\n\nb\n", b"data: a\ndata: \ndata: b\ndata: \n\n"),
        ("", b"data: \n\n"),
        (b"caf\xc3\xa9", b"data: caf\xc3\xa9\n\n"),
        ("café", b"data: caf\xc3\xa9\n\n"),
        (b"x\r\ny", b"data: x\ndata: y\n\n"),
    ],
)
def test_encode_data_lines(data: str | bytes, expected: bytes) -> None:
    assert encode_event(data) == expected


def test_encode_empty_id_clears() -> None:
    assert encode_event("x", id="") == b"id: \ndata: x\n\n"


@pytest.mark.parametrize("bad", ["a\nb", "a\rb", "a\r\nb", "a\0b", "\n"])
@pytest.mark.parametrize("field", ["event", "id"])
def test_encode_rejects_bad_event_and_id(field: str, bad: str) -> None:
    with pytest.raises(ValueError, match=field):
        encode_event("x", **{field: bad})  # type: ignore[arg-type]


def test_encode_rejects_negative_retry() -> None:
    with pytest.raises(ValueError, match="retry"):
        encode_event("x", retry=-1)


def test_encode_comment() -> None:
    assert encode_comment() == b": \n\n"
    assert encode_comment("ping") == b": ping\n\n"
    assert encode_comment("a\nb") == b": a\n: b\n\n"
    assert parse(encode_comment("a\r\nb")) == []


# --- parsing ----------------------------------------------------------------------------


def test_event_dataclass() -> None:
    ev = SSEEvent("d")
    assert (ev.data, ev.event, ev.id, ev.retry) == ("d", "message", None, None)
    assert not hasattr(ev, "__dict__")
    with pytest.raises(FrozenInstanceError):
        ev.data = "x"  # type: ignore[misc]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_line_endings(eol: bytes) -> None:
    stream = eol.join([b"event: a", b"data: 1", b"data: 2", b"", b"data: 3", b"", b""])
    assert parse(stream) == [SSEEvent("1\n2", "a"), SSEEvent("3")]


def test_mixed_line_endings() -> None:
    assert parse(b"data: 1\rdata: 2\r\ndata: 3\n\r\n") == [SSEEvent("1\n2\n3")]


def test_crlf_split_across_chunks() -> None:
    chunks = [b"data: a\r", b"\n\r", b"\ndata: b\r", b"\n", b"\r", b"\n"]
    assert parse_chunks(chunks) == [SSEEvent("a"), SSEEvent("b")]


def test_bare_cr_then_lf_in_next_chunk_is_one_terminator() -> None:
    # "\r" + "\n" is a single CRLF; a blank line needs a further terminator.
    parser = SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\n") == []
    assert parser.feed(b"") == []
    assert parser.feed(b"\r") == [SSEEvent("a")]
    assert parser.feed(b"\n\n") == []  # LF completes the CRLF; next LF is an empty line


def test_cr_then_empty_chunk_then_lf() -> None:
    assert parse_chunks([b"data: a\r", b"", b"\n", b"\n"]) == [SSEEvent("a")]


def test_bom_stripped_at_start_only() -> None:
    bom = b"\xef\xbb\xbf"
    assert parse(bom + b"data: a\n\n") == [SSEEvent("a")]
    assert parse_chunks([bom[:1], bom[1:2], bom[2:] + b"data: a\n\n"]) == [SSEEvent("a")]
    # A second BOM (or a BOM later in the stream) is part of the field name: ignored field.
    assert parse(bom + bom + b"data: a\n\n") == []
    assert parse(b"data: a\n\n" + bom + b"data: b\n\n") == [SSEEvent("a")]


def test_comments_ignored() -> None:
    stream = b": hello\n:\ndata: a\n: mid-event comment\ndata: b\n\n:only comment\n\n"
    assert parse(stream) == [SSEEvent("a\nb")]


def test_field_without_colon() -> None:
    # "data" alone appends an empty line; "event" alone sets an empty type -> "message".
    assert parse(b"data\n\n") == [SSEEvent("")]
    assert parse(b"data\ndata\n\n") == [SSEEvent("\n")]
    assert parse(b"event: x\nevent\ndata: a\n\n") == [SSEEvent("a", "message")]


def test_single_optional_space_after_colon() -> None:
    assert parse(b"data:a\n\n") == [SSEEvent("a")]
    assert parse(b"data: a\n\n") == [SSEEvent("a")]
    assert parse(b"data:  a \n\n") == [SSEEvent(" a ")]
    assert parse(b"data:\ta\n\n") == [SSEEvent("\ta")]
    assert parse(b"data:x:y\n\n") == [SSEEvent("x:y")]
    assert parse(b"event:  sp\ndata: a\n\n") == [SSEEvent("a", " sp")]


def test_field_names_are_case_sensitive_and_unknown_ignored() -> None:
    stream = b"Data: no\nfoo: bar\ndata : no\nEVENT: x\ndata: yes\n\n"
    assert parse(stream) == [SSEEvent("yes")]


def test_event_type_resets_after_dispatch() -> None:
    stream = b"event: a\ndata: 1\n\ndata: 2\n\n"
    assert parse(stream) == [SSEEvent("1", "a"), SSEEvent("2", "message")]


def test_event_without_data_not_dispatched_and_resets_type() -> None:
    stream = b"event: a\n\ndata: 1\n\nevent: b\nid: 9\nretry: 5\n\n"
    parser = SSEParser()
    assert parser.feed(stream) == [SSEEvent("1")]
    assert parser.last_event_id == "9"
    assert parser.retry == 5


def test_id_persists_and_resets() -> None:
    stream = b"id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: 2\ndata: d\n\n"
    assert parse(stream) == [
        SSEEvent("a", id="1"),
        SSEEvent("b", id="1"),
        SSEEvent("c", id=None),
        SSEEvent("d", id="2"),
    ]


def test_last_event_id_updates_only_on_dispatch() -> None:
    parser = SSEParser()
    assert parser.last_event_id is None
    parser.feed(b"id: 7\ndata: a\n")
    assert parser.last_event_id is None
    assert parser.feed(b"\n") == [SSEEvent("a", id="7")]
    assert parser.last_event_id == "7"
    parser.feed(b"id: 8\ndata: b\n")
    assert parser.close() == []
    assert parser.last_event_id == "7"


def test_id_with_nul_ignored() -> None:
    stream = b"id: 1\n\nid: a\x00b\ndata: x\n\n"
    parser = SSEParser()
    assert parser.feed(stream) == [SSEEvent("x", id="1")]
    assert parser.last_event_id == "1"


def test_retry() -> None:
    parser = SSEParser()
    stream = b"retry: 1000\ndata: a\n\nretry: 12x\ndata: b\n\nretry: -1\nretry:\nretry: +5\n\n"
    assert parser.feed(stream) == [SSEEvent("a", retry=1000), SSEEvent("b")]
    assert parser.retry == 1000
    parser.feed(b"retry: 250\ndata: c\n\n")
    assert parser.retry == 250
    # Non-ASCII digits are not digits for SSE; absurdly long values are ignored.
    assert parse(b"retry: \xd9\xa1\ndata: d\n\n") == [SSEEvent("d")]
    assert parse(b"retry: " + b"9" * 5000 + b"\ndata: d\n\n") == [SSEEvent("d")]


def test_trailing_event_without_blank_line_discarded() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n\ndata: b\n") == [SSEEvent("a")]
    assert parser.close() == []
    assert parse(b"data: a\n\ndata: b") == [SSEEvent("a")]
    assert parse(b"data: a\r") == []


def test_feed_after_close_raises() -> None:
    parser = SSEParser()
    parser.close()
    with pytest.raises(RuntimeError):
        parser.feed(b"data: a\n\n")


def test_invalid_utf8_replaced() -> None:
    stream = b"event: \xff\ndata: a\xffb\ndata: \xe2\x82\nid: \xc3\n\n"
    assert parse(stream) == [SSEEvent("a\ufffdb\n\ufffd", "\ufffd", "\ufffd")]


def test_utf8_split_across_chunks() -> None:
    encoded = "data: 日本語 ✓\n\n".encode()
    chunks = [encoded[i : i + 1] for i in range(len(encoded))]
    assert parse_chunks(chunks) == [SSEEvent("日本語 ✓")]


def test_empty_data_lines_joined() -> None:
    assert parse(b"data:\ndata:\ndata:\n\n") == [SSEEvent("\n\n")]
    assert parse(b"data: a\ndata:\n\n") == [SSEEvent("a\n")]


def test_many_events_in_one_chunk() -> None:
    stream = b"".join(encode_event(str(i), id=str(i)) for i in range(1000))
    events = parse(stream)
    assert [e.data for e in events] == [str(i) for i in range(1000)]
    assert events[-1].id == "999"


# --- limits -----------------------------------------------------------------------------


def test_max_event_bytes_rejects_oversized_event() -> None:
    parser = SSEParser(max_event_bytes=1024)
    line = b"data: " + b"x" * 100 + b"\n"  # 101 buffered bytes per line
    for _ in range(10):
        assert parser.feed(line) == []
    with pytest.raises(SSEProtocolError):
        parser.feed(line)
    with pytest.raises(SSEProtocolError):
        parser.feed(b"\n")  # a failed parser stays failed


def test_max_event_bytes_rejects_unterminated_line() -> None:
    parser = SSEParser(max_event_bytes=1000)
    parser.feed(b"data: " + b"x" * 900)
    with pytest.raises(SSEProtocolError, match="max_event_bytes"):
        parser.feed(b"x" * 200)


def test_max_event_bytes_single_chunk() -> None:
    with pytest.raises(SSEProtocolError):
        parse(encode_event("x" * 2000), max_event_bytes=1000)
    with pytest.raises(ValueError, match="max_event_bytes"):
        parse(b": " + b"c" * 2000, max_event_bytes=1000)


def test_max_event_bytes_is_per_event() -> None:
    stream = encode_event("x" * 600) * 50
    assert len(parse(stream, max_event_bytes=1000)) == 50
    assert len(parse_chunks([stream[i : i + 7] for i in range(0, len(stream), 7)])) == 50


def test_invalid_max_event_bytes() -> None:
    with pytest.raises(ValueError, match="positive"):
        SSEParser(max_event_bytes=0)


def test_long_line_in_tiny_chunks_is_linear() -> None:
    # Quadratic re-scanning would make this take minutes; linear parsing takes a moment.
    size = 200_000
    parser = SSEParser()
    assert parser.feed(b"data: ") == []
    for _ in range(size):
        parser.feed(b"y")
    assert parser.feed(b"\r") == []
    assert parser.feed(b"\n\n") == [SSEEvent("y" * size)]


# --- interoperability -------------------------------------------------------------------

# Shaped like the output of the official a2a-sdk REST transport (sse-starlette): CRLF line
# endings, timestamped ping comments and an `event: error` frame when the stream fails.
SDK_STREAM = (
    b'data: {"task":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_SUBMITTED"}}}'
    b"\r\n\r\n"
    b": ping - 2026-11-30 09:41:07.123456+00:00\r\n\r\n"
    b'data: {"statusUpdate":{"taskId":"t-1","contextId":"c-1",'
    b'"status":{"state":"TASK_STATE_WORKING","message":{"role":"ROLE_AGENT",'
    b'"parts":[{"text":"h\xc3\xa9llo"}]}}}}\r\n\r\n'
    b": ping - 2026-11-30 09:41:22.125001+00:00\r\n\r\n"
    b'event: error\r\ndata: {"error":{"code":500,"status":"INTERNAL",'
    b'"message":"unknown exception"}}\r\n\r\n'
)


def test_official_sdk_stream() -> None:
    for chunks in (
        [SDK_STREAM],
        [SDK_STREAM[i : i + 1] for i in range(len(SDK_STREAM))],
        [SDK_STREAM[i : i + 13] for i in range(0, len(SDK_STREAM), 13)],
    ):
        events = parse_chunks(chunks)
        assert [e.event for e in events] == ["message", "message", "error"]
        assert json.loads(events[0].data)["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
        update = json.loads(events[1].data)["statusUpdate"]
        assert update["status"]["message"]["parts"][0]["text"] == "héllo"
        assert json.loads(events[2].data)["error"]["status"] == "INTERNAL"
        assert all(e.id is None and e.retry is None for e in events)


# --- properties -------------------------------------------------------------------------

_line_text = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\0"))
_event_args = st.fixed_dictionaries(
    {"data": st.text()},
    optional={
        "event": _line_text.filter(bool),
        "id": _line_text,
        "retry": st.integers(min_value=0, max_value=10**12),
    },
)
_stream_items = st.lists(st.one_of(_event_args, st.text().map(encode_comment)), max_size=12)


def _encode_and_expect(items: list[dict[str, object] | bytes]) -> tuple[bytes, list[SSEEvent]]:
    wire: list[bytes] = []
    expected: list[SSEEvent] = []
    last_id: str | None = None
    for item in items:
        if isinstance(item, bytes):
            wire.append(item)
            continue
        data, event, id_, retry = item["data"], item.get("event"), item.get("id"), item.get("retry")
        assert isinstance(data, str)
        assert event is None or isinstance(event, str)
        assert id_ is None or isinstance(id_, str)
        assert retry is None or isinstance(retry, int)
        wire.append(encode_event(data, event=event, id=id_, retry=retry))
        if id_ is not None:
            last_id = id_ or None
        normalized = data.replace("\r\n", "\n").replace("\r", "\n")
        expected.append(SSEEvent(normalized, event or "message", last_id, retry))
    return b"".join(wire), expected


@settings(max_examples=300, deadline=None)
@given(items=_stream_items, eol=st.sampled_from([b"\n", b"\r\n", b"\r"]), data=st.data())
def test_split_anywhere_matches_whole(
    items: list[dict[str, object] | bytes], eol: bytes, data: st.DataObject
) -> None:
    stream, expected = _encode_and_expect(items)
    stream = stream.replace(b"\n", eol)  # the encoder only emits LF; the data has no CR/LF
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=20)))
    if eol == b"\r\n":  # make sure CRLFs get split between the CR and the LF
        cuts += [i + 1 for i in range(len(stream)) if stream[i : i + 2] == b"\r\n"][:5]
        cuts.sort()
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    assert parse(stream) == expected
    assert parse_chunks(chunks) == expected


@given(items=_stream_items)
def test_round_trip(items: list[dict[str, object] | bytes]) -> None:
    stream, expected = _encode_and_expect(items)
    parser = SSEParser()
    assert parser.feed(stream) == expected
    assert parser.last_event_id == (expected[-1].id if expected else None)


@given(st.binary(max_size=300), st.data())
def test_arbitrary_bytes_never_raise_and_chunking_is_irrelevant(
    blob: bytes, data: st.DataObject
) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(blob)), max_size=10)))
    chunks = [blob[a:b] for a, b in zip([0, *cuts], [*cuts, len(blob)], strict=True)]
    assert parse_chunks(chunks) == parse(blob)
