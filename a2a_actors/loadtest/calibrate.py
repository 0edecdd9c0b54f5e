"""``--calibrate``: the generator's own ceiling, measured against a trivial server.

:func:`calibrate` starts :mod:`.trivial` in a subprocess (fixed valid answers for the
workload, no framework), measures it with the same workload, connections and processes
as the real run, always in a closed loop (a ceiling is what the generator reaches when it
never waits), and returns the operations per second it reached. When a target's measured
rate comes close to that ceiling, the generator, not the target, may have set the pace
(:func:`~.report.warnings`). The calibration window is at most 3 s.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from urllib.parse import urlsplit

from .runner import Options, Progress, measure
from .target import BenchError, Endpoint

__all__ = ("calibrate",)

_MAX_WINDOW_S = 3.0


def calibrate(binding: str, options: Options, progress: Progress | None = None) -> float:
    """The operations per second the generator reaches against a trivial server.

    Raises:
        BenchError: The trivial server did not start.
    """
    command = [sys.executable, "-m", "a2a_actors.loadtest.trivial", "--binding", binding]
    command += ["--workload", options.workload]
    server = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().decode().strip()
        parts = urlsplit(url)
        if not parts.hostname or not parts.port:
            raise BenchError(f"the calibration server did not start: {url!r}")
        endpoint = Endpoint(
            name="trivial",
            url=url + "/",
            binding=binding,
            host=parts.hostname,
            port=parts.port,
            path="" if binding == "rest" else "/",
        )
        load = replace(
            options.load,
            rate=None,
            warmup=min(options.load.warmup, 0.5),
            duration=min(options.load.duration, _MAX_WINDOW_S),
        )
        tally = measure(endpoint, replace(options, load=load), "calibration", progress)
    finally:
        server.terminate()
        try:
            server.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.communicate()
    if tally.failed:
        samples = "; ".join(s for samples in tally.samples.values() for s in samples[:1])
        raise BenchError(f"calibration answers failed validation: {samples}")
    return tally.ok / tally.window_s if tally.window_s else 0.0
