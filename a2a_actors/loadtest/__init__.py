"""``a2a-actors bench``: a load tester for any A2A 1.0 agent.

The generator (:mod:`.engine`) sends pre-built requests (:mod:`.requests`) over raw
keep-alive sockets, one ``epoll`` loop per process (:mod:`.worker`), and checks every
answer (:mod:`.replies`) as the workload (:mod:`.workloads`) expects it; counts and
HDR-style histograms (:mod:`.histogram`, :mod:`.tally`) come back to the parent, which
measures targets in interleaved rounds (:mod:`.runner`), can measure the generator's own
ceiling (:mod:`.calibrate`) and reports (:mod:`.report`). :mod:`.cli` is the command;
``docs/bench.md`` the user's guide.

This package imports nothing at package level, so a worker process starts quickly.
"""

__all__ = ()
