"""How long a client command may take: ``--timeout``, the default bounds, and exit 124.

A :class:`Deadline` is made once per command from ``--timeout`` (or none). Each step the
command takes runs in :meth:`Deadline.bound`, under what is left of ``--timeout``, or,
without one, under the step's own default (``None``: no bound). Past it the step raises
:class:`TimedOut`, which names what the command was waiting for; the CLI prints it and
exits :data:`TIMED_OUT`.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator
from contextlib import contextmanager

import anyio

__all__ = ("DEFAULT_BOUND", "INTERRUPTED", "TIMED_OUT", "Deadline", "TimedOut", "timeout_seconds")

#: Exit status after a timeout (as ``timeout(1)``) and after Ctrl-C.
TIMED_OUT = 124
INTERRUPTED = 130
#: Seconds that finding an agent (registry, card) and a quick call may take without
#: ``--timeout``.
DEFAULT_BOUND = 10.0


class TimedOut(Exception):
    """A step of a command did not end in time; the text says which and how to wait longer."""


def timeout_seconds(text: str) -> float:
    """The ``--timeout`` argument: seconds, more than 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
    return value


class Deadline:
    """The end of a command given ``--timeout`` (``None``: only the steps' own bounds).

    Made inside the command's event loop (it reads the loop's clock).
    """

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self._end = math.inf if timeout is None else anyio.current_time() + timeout

    def remaining(self) -> float | None:
        """Seconds left of ``--timeout`` (never negative), or None without one."""
        if self.timeout is None:
            return None
        return max(self._end - anyio.current_time(), 0.0)

    @contextmanager
    def bound(self, waiting_for: str, *, default: float | None = None) -> Iterator[None]:
        """Run the block within what is left of ``--timeout``, else within ``default``.

        Raises:
            TimedOut: The block did not end in time; it names ``waiting_for``.
        """
        left = self.remaining()
        limit = left if left is not None else default
        if limit is None:
            yield
            return
        with anyio.move_on_after(limit) as scope:
            yield
        if scope.cancelled_caught:
            if self.timeout is not None:
                raise TimedOut(f"no answer within {self.timeout:g} s (--timeout) for {waiting_for}")
            raise TimedOut(
                f"no answer within {limit:g} s for {waiting_for} (--timeout SECONDS waits longer)"
            )
