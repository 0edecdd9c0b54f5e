"""Publication: the changes of one task, stored and then published (a part of its actor).

Theory of operation
-------------------
Every change to a task follows one path, in this order:

1. it is applied to the task's ``TaskMachine`` (which raises, changing nothing, if it is
   illegal) and the wire event it produced is *queued* with the version it produced;
2. :meth:`Publication.flush` saves the machine's latest snapshot in the store;
3. only then is that snapshot made the *published* one (what GetTask, ListTasks and new
   subscribers read) and the queued events handed, in order, to the subscribers
   (:class:`~a2a_actors.runtime._fanout.Fanout`) and to the observers.

So whatever a reader, subscriber or push receiver observed is already in the store. A
flush interrupted by cancellation or a store error leaves its events queued; the next
flush delivers them after storing a newer snapshot, so nobody sees a gap.

Provisional tasks: a new task starts *uncommitted*: counted as live, but neither stored
nor visible (not to get, list, cancel, subscribe, nor to observers). It is committed, its
Task snapshot queued as its first event, right before its first change, or earlier when
the supervisor must expose it (:meth:`Publication.commit`: return-immediately requests,
waiting for a running slot). If the handler's first output is a Message
(:meth:`Publication.reply`), the task is never committed: the message goes to the
requester, a stream gets one ``message`` event, and the task is discarded. A reply after
the commit completes the task with that message.

Waiting: callers that wait for an outcome (a blocking SendMessage, a CancelTask, a resumed
request) register an ``anyio.Event`` that every publish sets and re-check their own
condition; no Event exists while nobody waits.

Ending: once the final state is published, or the task is discarded, the publication ends,
exactly once: every subscription ends, every waiter wakes and the environment's
``task_ended`` is told.

Resuming (:mod:`~a2a_actors.runtime._replay`): the fanout of a streamed task records its
events; when an event settles the task (every subscription then ends), that history is
handed to the environment's ``settled`` histories and the fanout is let go, so a parked
task holds neither. :meth:`Publication.resume` replays what a cut stream missed.

Only the actor's own task changes the task (``emit_*``, ``reply``, ``update_metadata``,
``terminate``, ``flush``); any task reads, subscribes and waits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.lowlevel
import msgspec

from a2a_actors.protocol._models import Artifact, Message, StreamResponse, Task, TaskState, utc_now
from a2a_actors.protocol._state import SETTLED_STATES, TERMINAL_STATES
from a2a_actors.runtime._environment import WriteLostError
from a2a_actors.runtime._fanout import Fanout, FanoutStatistics, Subscription
from a2a_actors.runtime._replay import EventHistory
from a2a_actors.stores._base import StoredTask

if TYPE_CHECKING:
    from a2a_actors.protocol._state import TaskMachine
    from a2a_actors.runtime._environment import ActorEnvironment

__all__ = ("Publication",)

_S = TaskState
_NO_FANOUT = FanoutStatistics(0, 0)

#: A queued event: the task version it produced, the event, whether it settles the task.
_Queued = tuple[int, StreamResponse, bool]


class Publication:
    """The stored-then-published state of one task (see the module docstring).

    Args:
        machine: The task's state machine; only the actor's task changes it.
        owner: The caller that owns the task.
        env: Where the task is stored and who observes it.
    """

    __slots__ = (
        "_committed",
        "_ended",
        "_fanout",
        "_lost",
        "_pending",
        "_published",
        "_published_version",
        "_reply",
        "_waiters",
        "env",
        "machine",
        "owner",
        "private",
    )

    def __init__(self, machine: TaskMachine, owner: str | None, env: ActorEnvironment) -> None:
        self.machine = machine
        self.owner = owner
        self.env = env
        self._fanout: Fanout | None = None
        self._waiters: list[anyio.Event] | None = None
        # Events queued for the next publish; no list while none is (a parked task holds none).
        self._pending: list[_Queued] | None = None
        self._published: Task | None = None
        self._published_version = 0
        self._reply: Message | None = None
        self._committed = False
        self._ended = False
        self._lost = False
        #: What the agent keeps with the task unseen by clients (stored with every write).
        self.private: dict[str, Any] | None = None

    # -- reading (any task) ----------------------------------------------------------

    @property
    def task_id(self) -> str:
        """The task's id."""
        return self.machine.task_id

    @property
    def committed(self) -> bool:
        """Whether the task is committed (stored and visible, or about to be)."""
        return self._committed

    @property
    def published(self) -> Task | None:
        """The last published snapshot; None while the task is provisional."""
        return self._published

    @property
    def published_version(self) -> int:
        """The version of :attr:`published` (0 while provisional)."""
        return self._published_version

    @property
    def reply_message(self) -> Message | None:
        """The Message the handler answered with instead of a task, if it did."""
        return self._reply

    @property
    def lost(self) -> bool:
        """Whether another writer's record won (see :meth:`flush`): the task ended here."""
        return self._lost

    @property
    def ended(self) -> bool:
        """Whether the task's final state was published (or the task was discarded)."""
        return self._ended

    def fanout_statistics(self) -> FanoutStatistics:
        """Current subscribers, and how many were dropped since the task last settled
        (its fanout is let go then, see :mod:`~a2a_actors.runtime._replay`)."""
        fanout = self._fanout
        return fanout.statistics() if fanout is not None else _NO_FANOUT

    def subscribe(self, mode: Literal["snapshot", "resync", "all"]) -> Subscription:
        """Add a subscriber (see :meth:`Fanout.subscribe`).

        ``"snapshot"``: the published snapshot first, then every later event (the task
        must be visible). ``"resync"``: the snapshot as of the next event, then every
        later event. ``"all"``: every event from now on (a new task's creator: its Task
        comes first).
        """
        fanout = self._fanout
        if fanout is None:
            if mode == "all":  # a new task's first subscriber: nothing to take back
                window = self.env.resume_window
                history = EventHistory(window, 0) if window else None
                fanout = self._fanout = Fanout(self.machine.task_id, history)
            else:
                fanout = self._open_fanout()
        capacity = self.env.subscriber_buffer
        if mode == "snapshot":
            assert self._published is not None
            return fanout.subscribe(
                capacity, snapshot=self._published, version=self._published_version
            )
        return fanout.subscribe(capacity, resync=mode == "resync")

    def resume(self, after: int) -> Subscription | None:
        """A subscription that yields every event newer than version ``after`` (no
        snapshot), then every later event, ending like the stream it resumes (after the
        first event that settles the task); None when those events are not all retained
        (see :mod:`~a2a_actors.runtime._replay`) or ``after`` is newer than the task."""
        published = self._published_version
        if self._published is None or after > published:
            return None
        fanout = self._fanout
        if fanout is None:
            fanout = self._open_fanout()
        if after == published:
            replay: list[tuple[int, StreamResponse, bool]] | None = []
        else:
            history = fanout.history
            replay = history.after(after) if history is not None else None
            if replay is None:
                return None
        return fanout.subscribe(self.env.subscriber_buffer, version=after, replay=replay)

    def _open_fanout(self) -> Fanout:
        """The fanout of a visible task, recording into the history it had when it last
        settled (if nothing changed since) or a new one."""
        env = self.env
        history: EventHistory | None = None
        if env.resume_window:
            version = self._published_version
            history = env.settled.take(self.machine.task_id, version)
            if history is None:
                history = EventHistory(env.resume_window, version)
        fanout = self._fanout = Fanout(self.machine.task_id, history)
        return fanout

    async def wait_settled(self, after_version: int = 0) -> None:
        """Wait until a snapshot newer than ``after_version`` is published in a settled
        state, or the handler replied with a Message, or the task ended."""
        while not (
            self._ended
            or self._reply is not None
            or (
                self._published is not None
                and self._published_version > after_version
                and self._published.status.state in SETTLED_STATES
            )
        ):
            await self._wait_publish()

    async def wait_published(self, after_version: int) -> None:
        """Wait until a snapshot newer than ``after_version`` is published (or the end)."""
        while not (self._ended or self._published_version > after_version):
            await self._wait_publish()

    async def wait_ended(self) -> None:
        """Wait until the task's final state is published (or it was discarded)."""
        while not self._ended:
            await self._wait_publish()

    async def _wait_publish(self) -> None:
        event = anyio.Event()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(event)
        await event.wait()

    # -- changing (the actor's own task) -------------------------------------------------

    async def emit_status(
        self,
        state: TaskState,
        *,
        message: Message | None = None,
        metadata: dict[str, Any] | None = None,
        checkpoint: bool = True,
    ) -> None:
        """Move the task to ``state``, then store and publish it.

        With ``checkpoint`` (agent actions) this ends with a checkpoint; the change is
        recorded even if the checkpoint then raises the cancellation.

        Raises:
            IllegalTransitionError: The machine refused; nothing changed.
        """
        machine = self.machine
        pre = None if self._committed else (machine.version, machine.snapshot())
        event = machine.set_status(state, timestamp=utc_now(), message=message, metadata=metadata)
        if pre is not None:
            self._stage_commit(*pre)
        final = state in SETTLED_STATES
        self._queue((machine.version, StreamResponse(status_update=event), final))
        await self.flush()
        if checkpoint:
            await anyio.lowlevel.checkpoint()

    async def emit_artifact(
        self,
        artifact: Artifact,
        *,
        append: bool = False,
        last_chunk: bool = False,
        metadata: dict[str, Any] | None = None,
        checkpoint: bool = True,
        flush: bool = True,
    ) -> None:
        """Add an artifact (or a chunk of one), then store and publish it.

        Ends with a checkpoint unless ``checkpoint`` is false (see :meth:`emit_status`).
        Without ``flush`` the change is only queued, for the next flush to store and
        publish with whatever follows it (the runtime's own run of changes that nothing
        can observe in between: a handler's returned artifacts, then its completion).

        Raises:
            IllegalTransitionError: The machine refused; nothing changed.
        """
        machine = self.machine
        pre = None if self._committed else (machine.version, machine.snapshot())
        event = machine.add_artifact(
            artifact, append=append, last_chunk=last_chunk, metadata=metadata
        )
        if pre is not None:
            self._stage_commit(*pre)
        self._queue((machine.version, StreamResponse(artifact_update=event), False))
        if flush:
            await self.flush()
        if checkpoint:
            await anyio.lowlevel.checkpoint()

    async def reply(self, message: Message) -> None:
        """Answer with a Message: discards a provisional task, else completes the task.

        Raises:
            IllegalTransitionError: The task already ended; nothing changed.
        """
        if self._committed:
            await self.emit_status(_S.COMPLETED, message=message)
            return
        machine = self.machine
        machine.set_status(_S.COMPLETED, timestamp=utc_now())  # refuses a second answer
        if message.context_id != machine.context_id or message.task_id:
            message = msgspec.structs.replace(message, context_id=machine.context_id, task_id="")
        self._reply = message
        if self._fanout is not None:
            self._fanout.publish(
                machine.version,
                StreamResponse(message=message),
                final=True,
                snapshot=machine.snapshot(),
                snapshot_version=machine.version,
            )
        self.end()

    async def update_private(self, values: Mapping[str, Any]) -> None:
        """Merge ``values`` into :attr:`private` and store it with the task (no event, no
        new version: the task as clients see it did not change). Stored at once when the
        task is committed, else with its first write.

        Raises:
            WriteLostError: The store holds another writer's record instead.
        """
        private = {**(self.private or {}), **values}
        if self._committed and self._published is not None:
            record = StoredTask(self._published, self.owner, self._published_version, private)
            try:
                await self.env.store.save(record)
            except WriteLostError as lost:
                self._yield_to(lost.stored)
                raise
        self.private = private
        await anyio.lowlevel.checkpoint()

    async def update_metadata(self, values: Mapping[str, Any]) -> None:
        """Merge ``values`` into the task metadata, then store it (no event is sent)."""
        self.machine.update_metadata(dict(values))
        if self._committed:
            await self.flush()
        await anyio.lowlevel.checkpoint()

    def terminate(
        self, state: TaskState, message: Message | None, metadata: Mapping[str, Any] | None = None
    ) -> None:
        """Queue a final state (CANCELED or FAILED) decided by the runtime, not the agent;
        :meth:`flush` stores and publishes it. Commits a provisional task first.

        Raises:
            TaskNotCancelableError, IllegalTransitionError: The task is already terminal.
        """
        machine = self.machine
        if not self._committed:
            self._stage_commit(machine.version, machine.snapshot())
        if state is _S.CANCELED:
            event = machine.cancel(timestamp=utc_now(), message=message)
            if metadata:
                event = msgspec.structs.replace(event, metadata=dict(metadata))
        else:
            event = machine.set_status(state, timestamp=utc_now(), message=message)
        self._queue((machine.version, StreamResponse(status_update=event), True))

    # -- storing and publishing (the actor's own task) ---------------------------------

    async def commit(self) -> None:
        """Make a provisional task visible: store it and publish its Task snapshot."""
        if not self._committed:
            self._stage_commit(self.machine.version, self.machine.snapshot())
            await self.flush()

    def restore(self, snapshot: Task, version: int, private: dict[str, Any] | None = None) -> None:
        """Start from a task that is already stored and visible (a restored task)."""
        self._committed = True
        self._published = snapshot
        self._published_version = version
        self.private = private

    def _stage_commit(self, version: int, snapshot: Task) -> None:
        self._committed = True
        self._queue((version, StreamResponse(task=snapshot), False))

    def _queue(self, item: _Queued) -> None:
        pending = self._pending
        if pending is None:
            self._pending = [item]
        else:
            pending.append(item)

    async def flush(self) -> None:
        """Store the latest snapshot, then publish it and the queued events.

        Raises:
            WriteLostError: The store holds another writer's record instead; it was
                published to local readers and the publication ended.
        """
        machine = self.machine
        version = machine.version
        snapshot = machine.snapshot()
        try:
            await self.env.store.save(StoredTask(snapshot, self.owner, version, self.private))
        except WriteLostError as lost:
            self._yield_to(lost.stored)
            raise
        self._publish(snapshot, version)

    def _yield_to(self, stored: StoredTask) -> None:
        """Another writer's record won (a cluster node cancelled, settled or took over the
        task): local readers and subscribers get that record, what this actor queued is
        dropped unpublished, and the publication ends (the actor writes nothing more)."""
        if self._ended:
            return
        self._lost = True
        self._pending = None
        if stored.version >= self._published_version:  # the machine is not used again
            self._published = stored.task
            self._published_version = stored.version
            if self._fanout is not None:
                event = StreamResponse(task=stored.task)
                self.env.dropped_subscribers += self._fanout.publish(
                    stored.version,
                    event,
                    final=True,
                    snapshot=stored.task,
                    snapshot_version=stored.version,
                )
        self.end()

    async def flush_pending(self) -> None:
        """:meth:`flush` if any event is queued."""
        if self._pending:
            await self.flush()

    def discard_unstored(self) -> None:
        """Forget every change since the last published snapshot (the store refused it, so
        no reader saw it): the machine returns to that snapshot and queued events are
        dropped. A task committed but never stored returns to its creation (its Task
        snapshot stays queued, its first event still); a provisional one is left alone."""
        published = self._published
        if published is not None:
            if self.machine.version > self._published_version:
                self.machine.rollback(published, self._published_version)
                self._pending = None
            return
        pending = self._pending
        if pending and (creation := pending[0][1].task) is not None:  # _stage_commit's
            self.machine.rollback(creation, pending[0][0])
            self._pending = [pending[0]]

    def publish_unstored(self) -> None:
        """Publish the latest snapshot without storing it (the store failed), so that no
        waiter hangs; only for a committed task that did not yield to another writer."""
        if self._committed and not self._ended:
            self._publish(self.machine.snapshot(), self.machine.version)

    def _publish(self, snapshot: Task, version: int) -> None:
        if version < self._published_version:
            # A later flush (of the same handler's concurrent action) stored and published
            # a newer snapshot, with every queued event, while this one awaited the store.
            return
        self._published = snapshot
        self._published_version = version
        pending = self._pending
        if pending is not None:
            env = self.env
            fanout = self._fanout
            observed = bool(env.observers)
            final = False
            for event_version, event, final in pending:
                if fanout is not None:
                    env.dropped_subscribers += fanout.publish(
                        event_version,
                        event,
                        final=final,
                        snapshot=snapshot,
                        snapshot_version=version,
                    )
                if observed:
                    update = event.status_update
                    terminal = update is not None and update.status.state in TERMINAL_STATES
                    env.notify(
                        self.machine.task_id,
                        self.owner,
                        event,
                        terminal=terminal,
                        version=event_version,
                    )
            self._pending = None
            if final and fanout is not None:
                # Every subscription just ended: the history goes to the settled ones and
                # the fanout goes (a parked task holds neither).
                self._fanout = None
                if fanout.history is not None:
                    env.settled.keep(self.machine.task_id, fanout.history, version)
        if snapshot.status.state in TERMINAL_STATES:
            self.end()
        else:
            self._wake()

    def end(self) -> None:
        """Mark the task ended (idempotent): streams end, waiters wake, the environment's
        ``task_ended`` is told."""
        if self._ended:
            return
        self._ended = True
        if self._fanout is not None:
            self._fanout.end_all()
        self.env.task_ended(self, self._committed)
        self._wake()

    def _wake(self) -> None:
        waiters = self._waiters
        if waiters:
            self._waiters = None
            for event in waiters:
                event.set()
