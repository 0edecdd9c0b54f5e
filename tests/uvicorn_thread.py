"""An ASGI app on uvicorn in a thread of its own, on 127.0.0.1 with an ephemeral port.

A *sync* context manager, so it suits sync pytest fixtures of any scope under both trio and
asyncio tests: the server has its own asyncio loop in its own thread; start-up is awaited on
a ``threading.Event`` (no sleeps) and shutdown joins the thread.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any, Literal

import uvicorn

__all__ = ["serve_in_thread"]

STARTUP_TIMEOUT_S = 10.0
SHUTDOWN_TIMEOUT_S = 10.0


class _Server(uvicorn.Server):
    """Sets ``ready`` once start-up has finished (successfully or not)."""

    def __init__(self, config: uvicorn.Config, ready: threading.Event) -> None:
        super().__init__(config)
        self._ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets)
        finally:
            self._ready.set()


@contextlib.contextmanager
def serve_in_thread(
    build: Callable[[str], Any],
    *,
    lifespan: Literal["on", "off"] = "on",
    name: str = "uvicorn",
) -> Iterator[str]:
    """Serve ``build(base_url)`` on uvicorn; yields the base URL (``http://127.0.0.1:PORT``).

    Raises:
        RuntimeError: The server did not start, did not stop, or its thread failed.
    """
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY on accepted sockets only when the
    # listening socket says so, and without it every keep-alive request costs ~40 ms
    # (Nagle vs delayed ACK).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.bind(("127.0.0.1", 0))
        base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(
            build(base_url),
            log_level="warning",
            lifespan=lifespan,
            loop="asyncio",
            http="h11",
            ws="none",
            timeout_graceful_shutdown=3,
        )
        ready = threading.Event()
        server = _Server(config, ready)
        errors: list[BaseException] = []

        def target() -> None:
            try:
                server.run(sockets=[sock])
            except BaseException as exc:  # reported to the caller thread
                errors.append(exc)
            finally:
                ready.set()

        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        try:
            if not ready.wait(STARTUP_TIMEOUT_S) or not server.started:
                raise RuntimeError(f"{name} failed to start: {errors!r}")
            yield base_url
        finally:
            server.should_exit = True
            thread.join(SHUTDOWN_TIMEOUT_S)
            if thread.is_alive():  # pragma: no cover - only on a wedged shutdown
                server.force_exit = True
                thread.join(SHUTDOWN_TIMEOUT_S)
            if thread.is_alive():  # pragma: no cover
                raise RuntimeError(f"{name} thread did not stop")
        if errors:  # pragma: no cover
            raise RuntimeError(f"{name} thread failed") from errors[0]
    finally:
        sock.close()
