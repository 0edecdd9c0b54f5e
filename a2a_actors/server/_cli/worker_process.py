"""One worker of ``a2a-actors serve --workers N`` (see :mod:`a2a_actors.server._cli.workers`).

``python -m a2a_actors.server._cli.worker_process`` reads the ``serve`` command's parsed
arguments, pickled by its parent, from stdin, and runs the command with them: one node of
the parent's cluster on the socket it inherited. On Linux it first asks the kernel to
SIGTERM it when its parent dies, so a parent killed outright leaves no worker behind.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import pickle
import signal
import sys

from a2a_actors.server._cli.serve import run

__all__ = ("main",)

_PR_SET_PDEATHSIG = 1


def main() -> int:
    """Run the ``serve`` command as the parent asked; its exit status."""
    args: argparse.Namespace = pickle.load(sys.stdin.buffer)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != args.worker_parent:  # it died before the request took effect
            return 1
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
