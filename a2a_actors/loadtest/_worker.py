"""One generator process: ``python -m a2a_actors.loadtest._worker``.

The parent (:mod:`a2a_actors.loadtest._runner`) talks to it over its standard streams, one JSON line
each way:

1. stdin: the plan, ``{"endpoint", "message", "workload", "load", "id_prefix"}``;
2. stdout: ``{"ready": true}`` once every connection is open, or ``{"fatal": "…"}`` (and
   exit status 1) when they cannot be;
3. stdin: ``{"begin_at": T}``, the wall-clock time at which every process starts;
4. stdout: the :class:`~a2a_actors.loadtest._tally.Tally` of the window, as JSON.

Keeping the plan in JSON (not pickles) keeps the worker independent of how it is started.
"""

from __future__ import annotations

import json
import ssl
import sys
from typing import Any, TextIO

from a2a_actors.loadtest._engine import Engine, Load
from a2a_actors.loadtest._requests import RequestBuilder
from a2a_actors.loadtest._target import Endpoint
from a2a_actors.loadtest._workloads import WORKLOADS
from a2a_actors.protocol import codec
from a2a_actors.protocol._models import Message

__all__ = ("main", "plan", "serve")


def plan(
    endpoint: Endpoint, message: Message, workload: str, load: Load, id_prefix: str
) -> dict[str, Any]:
    """The plan line of one worker."""
    return {
        "endpoint": endpoint.to_json(),
        "message": codec.to_builtins(message),
        "workload": workload,
        "load": {
            "connections": load.connections,
            "concurrency": load.concurrency,
            "rate": load.rate,
            "warmup": load.warmup,
            "duration": load.duration,
            "timeout": load.timeout,
            "phase": load.phase,
        },
        "id_prefix": id_prefix,
    }


def _say(out: TextIO, obj: object) -> None:
    out.write(json.dumps(obj, separators=(",", ":")) + "\n")
    out.flush()


def serve(stdin: TextIO, stdout: TextIO) -> int:
    """Run one worker over ``stdin`` / ``stdout`` (see the module docstring)."""
    data = json.loads(stdin.readline())
    endpoint = Endpoint.from_json(data["endpoint"])
    message = codec.convert(data["message"], Message)
    builder = RequestBuilder(endpoint, message, id_prefix=data["id_prefix"])
    workload = WORKLOADS[data["workload"]]
    binding = endpoint.binding
    engine = Engine(
        endpoint.host,
        endpoint.port,
        Load(**data["load"]),
        lambda seq: workload.flow(builder, binding, seq),
        tls=ssl.create_default_context() if endpoint.tls else None,
    )
    try:
        engine.open()
    except OSError as exc:
        engine.close()
        _say(stdout, {"fatal": f"cannot connect to {endpoint.host}:{endpoint.port}: {exc}"})
        return 1
    _say(stdout, {"ready": True})
    line = stdin.readline()
    if not line:  # the parent gave up
        engine.close()
        return 1
    try:
        tally = engine.run(float(json.loads(line)["begin_at"]))
    finally:
        engine.close()
    _say(stdout, tally.to_json())
    return 0


def main() -> int:
    """The process entry point."""
    return serve(sys.stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
