"""The ``serve`` command's value types for argparse: each returns the value or raises
``argparse.ArgumentTypeError`` with one line that says what was expected (argparse then
exits with status 2 and that line)."""

from __future__ import annotations

import argparse
import math

__all__ = ("count", "port", "positive", "positive_seconds", "seconds")


def port(text: str) -> int:
    """A TCP port, 0..65535 (0: pick a free one)."""
    value = _int(text, "a port number")
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535 (0 picks a free one), not {value}")
    return value


def positive(text: str) -> int:
    """A whole number of at least 1."""
    value = _int(text, "a whole number")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def count(text: str) -> int:
    """A whole number of at least 0."""
    value = _int(text, "a whole number")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, not {value}")
    return value


def seconds(text: str) -> float:
    """A finite number of seconds, at least 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, not {text}")
    return value


def positive_seconds(text: str) -> float:
    """A finite number of seconds, more than 0."""
    value = seconds(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return value


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
