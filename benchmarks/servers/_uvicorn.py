"""The uvicorn launcher the script servers here share (``sdk_echo.py``, ``sdk_executor_echo.py``,
``pydantic_echo.py``).

They import it as a sibling (``from _uvicorn import run_printing_url``), which works when run
as scripts (``python benchmarks/servers/x.py`` puts this folder first on ``sys.path``); the
ones also imported as ``benchmarks.servers.*`` modules do so inside ``main()``.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import uvicorn

__all__ = ("run_printing_url",)


class _Server(uvicorn.Server):
    """Prints the base URL once startup has succeeded."""

    def __init__(self, config: uvicorn.Config, url: str) -> None:
        super().__init__(config)
        self._url = url

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            print(self._url, flush=True)


def run_printing_url(build_app: Callable[[str], Any], host: str) -> int:
    """Serve ``build_app(base_url)`` with uvicorn on ``host`` and a free port until stopped.

    Prints one line on stdout, the base URL (``http://host:port``), once uvicorn accepts
    requests; stops on SIGTERM or SIGINT (uvicorn's own handlers). uvicorn runs with its
    defaults (``loop="auto"``, ``http="auto"``) and without an access log. Returns 0.
    """
    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY on accepted sockets only when the listening
    # socket says so; without it every keep-alive request waits ~40 ms (Nagle/delayed ACK).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    bound_host, port = sock.getsockname()[:2]
    url = f"http://{bound_host}:{port}"
    config = uvicorn.Config(
        build_app(url),
        log_level="warning",
        access_log=False,
        lifespan="on",
        backlog=1024,
        timeout_graceful_shutdown=1,
    )
    server = _Server(config, url)
    server.run(sockets=[sock])
    return 0
