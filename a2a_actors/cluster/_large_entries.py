"""The tasks bucket's values of any size: large pieces to the object store and back.

The task store (:mod:`~a2a_actors.cluster._task_store`) encodes every
:class:`~a2a_actors.cluster._entries.Entry` as it always did and compares its size with
:attr:`LargeEntries.threshold` (that comparison is all a value of ordinary size costs); a
larger one goes through :meth:`LargeEntries.strip`, which moves its large pieces to the
object store (:class:`~a2a_actors.cluster._offload.Offloader`): it is stored with
placeholders and its references (``Entry.objects``). Everything the
store hands out goes through :meth:`LargeEntries.resolve` (one entry) or
:meth:`LargeEntries.resolve_page` (a ListTasks page) first, so no reader ever sees a
placeholder; entries without references pass through untouched.

**ListTasks pages are bounded in object bytes.** A page is resolved record by record, and
ends before the first record whose objects would take the page past ``page_bytes`` (4 MiB,
the Supervisor's ``max_page_bytes`` default; one record at least, however large), its
token going on from the last record kept: a page of 100 tasks with a 32 MB artifact each
is not read into memory at once. The Supervisor cuts pages by their JSON the same way, so
a client sees pages of the same kind either way.
"""

from __future__ import annotations

from collections.abc import Callable

from a2a_actors.cluster._entries import Entry
from a2a_actors.cluster._object_refs import Refs
from a2a_actors.cluster._offload import Offloader
from a2a_actors.protocol import codec
from a2a_actors.protocol._errors import InternalError
from a2a_actors.runtime._queries import DEFAULT_MAX_PAGE_BYTES
from a2a_actors.stores._base import StoredTask, TaskPage, encode_page_token, sort_key

__all__ = ("LargeEntries",)


class LargeEntries:
    """Encodes entries for the tasks bucket and resolves them back (see the module
    docstring).

    Args:
        objects: The node's offloader.
        page_bytes: Object bytes one ListTasks page resolves at most (one record at least).
    """

    def __init__(self, objects: Offloader, *, page_bytes: int = DEFAULT_MAX_PAGE_BYTES) -> None:
        self.objects = objects
        self._page_bytes = page_bytes

    @property
    def threshold(self) -> int:
        """An entry encoded larger than this must go through :meth:`strip` before it is
        written."""
        return self.objects.threshold

    async def strip(self, entry: Entry, data: bytes) -> tuple[Entry, bytes]:
        """``entry`` (encoded as ``data``, larger than :attr:`threshold`) as stored, with
        its large pieces in the object store and their references in ``objects``, and its
        bytes (at most the threshold).

        Raises:
            PayloadTooLargeError: A piece is larger than the object limit, the object
                store is full, or what must stay inline is still too large; nothing of
                the entry is written.
            ClusterUnavailableError: NATS did not answer in time.
        """
        objects = self.objects
        record = entry.record
        stripped, refs = await objects.strip(record.task.id, record, len(data))
        stored = Entry(stripped, entry.holder, refs) if refs else entry
        data = codec.encode(stored)
        if len(data) > objects.threshold:
            raise objects.too_large(f"task {record.task.id}", len(data))
        return stored, data

    async def resolve(self, entry: Entry) -> Entry:
        """``entry`` with its placeholders filled (``entry`` itself when it has none).

        Raises:
            KeyError: An object is missing (the task was deleted meanwhile).
            InternalError: An object does not match its digest or its reference.
            ClusterUnavailableError: NATS did not answer in time.
        """
        refs = entry.refs
        if not refs:
            return entry
        return Entry(await self.restore(entry.record, refs), entry.holder)

    async def restore(self, record: StoredTask, refs: Refs) -> StoredTask:
        """``record`` with the placeholders ``refs`` names filled.

        Raises:
            KeyError: An object is missing (the task was deleted meanwhile).
            InternalError: An object does not match its digest or its reference.
            ClusterUnavailableError: NATS did not answer in time.
        """
        try:
            return await self.objects.restore(record, refs)
        except ValueError as exc:
            damaged = f"task {record.task.id}: a stored object is damaged: {exc}"
            raise InternalError(damaged) from exc

    async def resolve_page(self, page: TaskPage, refs_of: Callable[[str], Refs]) -> TaskPage:
        """``page`` (of records as stored, ``refs_of`` giving each one's references) with
        every record resolved, cut before the record whose objects would pass the page's
        bound (see the module docstring). A record whose objects are gone (its task was
        deleted meanwhile) is left out.

        Raises:
            InternalError: An object does not match its digest or its reference.
            ClusterUnavailableError: NATS did not answer in time.
        """
        records: list[StoredTask] = []
        loaded = 0
        for record in page.records:
            refs = refs_of(record.task.id)
            if refs:
                size = sum(ref.size for ref in {ref.name: ref for ref in refs}.values())
                if records and loaded + size > self._page_bytes:
                    token = encode_page_token(sort_key(records[-1]))
                    return TaskPage(tuple(records), token, page.total_size)
                try:
                    record = await self.restore(record, refs)
                except KeyError:
                    continue
                loaded += size
            records.append(record)
        return TaskPage(tuple(records), page.next_page_token, page.total_size)
