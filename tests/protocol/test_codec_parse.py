"""codec.parse: the one untyped JSON parse of wire bodies, with one error for all that is
not JSON (the readers that use it answer -32700 / a malformed-response error from it)."""

from __future__ import annotations

import msgspec
import pytest

from a2a_actors.protocol import codec
from a2a_actors.protocol._models import Message


def test_parse_gives_builtins_that_convert_reads() -> None:
    raw = b'{"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}'
    parsed = codec.parse(raw)
    assert parsed["parts"] == [{"text": "hi"}]
    assert codec.convert(parsed, Message).text == "hi"
    assert codec.parse(raw.decode()) == parsed  # str in, the same


@pytest.mark.parametrize(
    "bad",
    [b"{", b"\xff\xfe{}", b"[" * 100_000 + b"]" * 100_000, b"", b"{'a': 1}"],
    ids=["truncated", "not UTF-8", "nested too deeply", "empty", "not JSON"],
)
def test_whatever_is_not_json_is_one_decode_error(bad: bytes) -> None:
    with pytest.raises(msgspec.DecodeError):
        codec.parse(bad)
