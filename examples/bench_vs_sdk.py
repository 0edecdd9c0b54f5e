"""Our echo agent against the official a2a-sdk's, side by side, with ``a2a-actors bench``.

    python examples/bench_vs_sdk.py                       # send, 3 rounds of 5 s
    python examples/bench_vs_sdk.py --workload stream --concurrency 64 --chart vs.png

Starts two servers on 127.0.0.1 (port 0), each in its own process: ``a2a-actors serve
examples.echo:agent`` and the SDK's echo agent on uvicorn (``benchmarks/servers/sdk_echo.py``,
the SDK is a dev dependency). Then runs ``a2a-actors bench ours=URL sdk=URL`` with the
options given (default ``--rounds 3 --duration 5``), so both are measured in interleaved
rounds by the same generator, and stops both servers. On a machine with spare cores, pin
the servers and the generator apart (``taskset``) for steadier numbers: see docs/bench.md.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

__all__ = ("main",)

ROOT = Path(__file__).resolve().parent.parent
SERVERS = {
    "ours": [sys.executable, "-m", "a2a_actors.cli", "serve", "examples.echo:agent", "--port", "0"],
    "sdk": [sys.executable, str(ROOT / "benchmarks" / "servers" / "sdk_echo.py")],
}
DEFAULT_OPTIONS = ["--rounds", "3", "--duration", "5"]


@contextmanager
def running(command: list[str]) -> Iterator[str]:
    """Run a server that prints its base URL on stdout; yields the URL, then stops it."""
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("http://"):
                yield line.strip()
                return
        raise RuntimeError(f"{command} exited without serving")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main(argv: list[str] | None = None) -> int:
    """Serve both agents, bench them side by side; the bench's exit status."""
    options = (sys.argv[1:] if argv is None else argv) or DEFAULT_OPTIONS
    with ExitStack() as stack:
        urls = {name: stack.enter_context(running(cmd)) for name, cmd in SERVERS.items()}
        targets = [f"{name}={url}" for name, url in urls.items()]
        bench = [sys.executable, "-m", "a2a_actors.cli", "bench", *targets, *options]
        return subprocess.run(bench, cwd=ROOT, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
