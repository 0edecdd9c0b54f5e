"""A one-line progress bar, drawn only on a terminal.

:meth:`TerminalProgress.for_stream` returns None when the stream is not a TTY (a pipe, a
file, CI logs), so redirected output never holds carriage-return noise.
"""

from __future__ import annotations

from typing import TextIO

__all__ = ("TerminalProgress",)

_WIDTH = 30


class TerminalProgress:
    """Redraws ``label [#####-----] 50%`` in place; a callable ``(label, fraction)``."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._drawn = 0

    @classmethod
    def for_stream(cls, stream: TextIO) -> TerminalProgress | None:
        """A progress bar on ``stream``, or None when it is not a terminal."""
        isatty = getattr(stream, "isatty", None)
        return cls(stream) if isatty is not None and isatty() else None

    def __call__(self, label: str, fraction: float) -> None:
        """Draw ``label`` at ``fraction`` (0..1) done."""
        fraction = min(1.0, max(0.0, fraction))
        filled = round(fraction * _WIDTH)
        line = f"{label} [{'#' * filled}{'-' * (_WIDTH - filled)}] {100 * fraction:3.0f}%"
        self._stream.write("\r" + line.ljust(self._drawn))
        self._stream.flush()
        self._drawn = len(line)

    def clear(self) -> None:
        """Erase the bar (before the results are printed)."""
        if self._drawn:
            self._stream.write("\r" + " " * self._drawn + "\r")
            self._stream.flush()
            self._drawn = 0
