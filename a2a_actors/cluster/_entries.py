"""A task's key in the tasks bucket: its stored record, who holds it, and who may replace it.

Each key of the tasks bucket (:mod:`~a2a_actors.cluster._task_store`) holds an
:class:`Entry`: the :class:`~a2a_actors.stores._base.StoredTask` and its *holder*, the node
incarnation (:class:`Holder`: node id and lease epoch) whose actor runs the task, or None
for a task nobody runs (settled, or waiting to be resumed anywhere).

:func:`replaces` is the one rule every conditional write decides by, whoever writes:

* **versions never go back** (the TaskStore contract);
* **a final record keeps its state**: a write that would change the state of a
  COMPLETED, FAILED, CANCELED or REJECTED task is refused, so when a cancel races a
  completion, or two cancels race, the first final state stored is the only one, and a
  task once CANCELED never changes again. Only the final task's holder may still write it
  (a metadata update of the same state); a final task nobody holds never changes at all;
* **fencing**: a write made as another holder than the stored one (None included) is
  refused unless it says ``take_over`` (what settling a lost node's tasks and resuming an
  interrupted task elsewhere do). So an owner that lost its lease and wakes up late
  cannot overwrite what the cluster did in the meantime, and a node that comes back with
  the same id (a new epoch) does not own its old incarnation's tasks.
"""

from __future__ import annotations

import msgspec

from a2a_actors.cluster._object_refs import Refs
from a2a_actors.protocol import codec
from a2a_actors.protocol._state import is_terminal
from a2a_actors.stores._base import StoredTask

__all__ = ("Entry", "Holder", "decode_entry", "replaces")


class Holder(msgspec.Struct, frozen=True):
    """The node incarnation that runs a task's actor: node id and lease epoch."""

    node_id: str
    epoch: int


class Entry(msgspec.Struct, frozen=True):
    """One key's value: the stored task and its holder.

    ``objects`` is set only on a value as stored whose large pieces are in the object
    store (:mod:`~a2a_actors.cluster._object_refs`): ``record`` then holds placeholders,
    and the task store restores them before handing the entry to anyone. Unset, it is not
    encoded at all, so an ordinary task's value is what it always was.
    """

    record: StoredTask
    holder: Holder | None = None
    objects: Refs | msgspec.UnsetType = msgspec.UNSET

    @property
    def refs(self) -> Refs:
        """The references to the object store this value carries (empty: none)."""
        objects = self.objects
        return () if isinstance(objects, msgspec.UnsetType) else objects


_ENTRY = msgspec.json.Decoder(Entry)


def decode_entry(data: bytes) -> Entry:
    """A key's value as :meth:`~a2a_actors.cluster._task_store.NatsTaskStore.commit`
    encodes it, in one pass.

    ``codec.decode`` would take its slow path (ProtoJSON spellings) for every entry: the
    holder's ``node_id`` looks like a proto field name. That path remains for anything
    the typed decoder refuses.
    """
    try:
        return _ENTRY.decode(data)
    except msgspec.ValidationError:
        return codec.decode(data, Entry)


def replaces(stored: Entry, new: Entry, *, take_over: bool = False) -> bool:
    """Whether ``new`` may replace ``stored`` (the rule of the module docstring).

    A live record is written as its holder (None included: a store without a holder
    writes tasks nobody holds) or by someone taking it over; a final one only by its
    holder, keeping its state, whatever the version or ``take_over``.
    """
    old, record = stored.record, new.record
    if record.version < old.version:
        return False
    state = old.task.status.state
    if is_terminal(state):
        same_holder = stored.holder is not None and stored.holder == new.holder
        return same_holder and record.task.status.state is state
    return take_over or stored.holder == new.holder
