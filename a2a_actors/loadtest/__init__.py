"""``a2a-actors bench``: a load tester for any A2A 1.0 agent.

The generator (:mod:`a2a_actors.loadtest._engine`) sends pre-built requests
(:mod:`a2a_actors.loadtest._requests`) over raw keep-alive sockets, one ``epoll`` loop per process
(:mod:`a2a_actors.loadtest._worker`), and checks every answer (:mod:`a2a_actors.loadtest._replies`)
as the workload (:mod:`a2a_actors.loadtest._workloads`) expects it; counts and HDR-style histograms
(:mod:`a2a_actors.loadtest._histogram`, :mod:`a2a_actors.loadtest._tally`) come back to the parent,
which measures targets in interleaved rounds (:mod:`a2a_actors.loadtest._runner`), can measure the
generator's own ceiling (:mod:`a2a_actors.loadtest._calibrate`) and reports
(:mod:`a2a_actors.loadtest._report`). :mod:`a2a_actors.loadtest._cli` is the command;
``docs/bench.md`` the user's guide.

This package imports nothing at package level, so a worker process starts quickly.
"""

__all__ = ()
