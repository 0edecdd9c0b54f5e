"""Where a cluster keeps what: bucket, stream and subject names, and task id encoding.

Pure and I/O-free. Every name carries the cluster's *token*, so agents sharing one NATS
are isolated: a node of cluster ``a`` never reads, writes or subscribes to a name of
cluster ``b`` (a task id of one is unknown to the other).

========================  =============================  ==================================
What                      Name                           Carries
========================  =============================  ==================================
tasks KV bucket           ``A2A_<token>_tasks``          one key per task: its StoredTask
nodes KV bucket           ``A2A_<token>_nodes``          one key per node: its lease
push KV bucket            ``A2A_<token>_push``           one key per task: its push configs
idempotency KV bucket     ``A2A_<token>_idem``           one key per idempotency key: its send
object store bucket       ``A2A_<token>_objects``        large task content, ``<key>/<digest>``
events stream             ``A2A_<token>_events``         every published event, by task
event subject             ``a2a.<token>.ev.<key>``       the events of one task, in order
owner inbox subject       ``a2a.<token>.inbox.<node>``   cancel and input for that owner
========================  =============================  ==================================

A task id becomes a key (and a subject token) as itself when it is made of letters,
digits, ``-`` and ``_`` (the UUIDs the runtime generates), and otherwise as ``=`` followed
by its unpadded base64url form. ``=`` never occurs in the first form, so the encoding is
one-to-one.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import re

__all__ = ("ClusterNames", "cluster_token", "task_id_of_key", "task_key")

_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,48}")
_NOT_TOKEN = re.compile(r"[^a-z0-9]+")
_PLAIN = re.compile(r"[A-Za-z0-9_-]+")


def cluster_token(name: str) -> str:
    """The token of cluster ``name`` (the agent's card name, or ``--cluster-name``).

    A name that is already a token (1-48 letters, digits, ``-``, ``_``) is used as it is;
    any other becomes a lowercase slug of it plus 8 hex digits of its SHA-256, so that two
    names differing only in punctuation or case stay apart.

    Raises:
        ValueError: ``name`` is empty.
    """
    if not name:
        raise ValueError("a cluster name must not be empty")
    if _TOKEN.fullmatch(name):
        return name
    slug = _NOT_TOKEN.sub("-", name.lower()).strip("-")[:32] or "cluster"
    return f"{slug}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def task_key(task_id: str) -> str:
    """The KV key and subject token of ``task_id`` (see the module docstring).

    Raises:
        ValueError: ``task_id`` is empty.
    """
    if not task_id:
        raise ValueError("a task id must not be empty")
    if _PLAIN.fullmatch(task_id):
        return task_id
    return "=" + base64.urlsafe_b64encode(task_id.encode()).decode().rstrip("=")


def task_id_of_key(key: str) -> str | None:
    """The task id whose :func:`task_key` is ``key``; None for a key that is not a task's.

    A key with a ``.`` (which no task key has) is the cluster's own bookkeeping.
    """
    if "." in key or not key:
        return None
    if not key.startswith("="):
        return key
    body = key[1:]
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_", validate=True)
        task_id = raw.decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    return task_id or None


def _node_token(node_id: str) -> str:
    if not _PLAIN.fullmatch(node_id):
        raise ValueError(f"a node id is letters, digits, '-' and '_' only: {node_id!r}")
    return node_id


@dataclasses.dataclass(frozen=True, slots=True)
class ClusterNames:
    """The names of one cluster (see the module docstring).

    Attributes:
        token: The cluster's token (:func:`cluster_token`).
    """

    token: str

    @classmethod
    def for_cluster(cls, name: str) -> ClusterNames:
        """The names of the cluster called ``name``."""
        return cls(cluster_token(name))

    @property
    def tasks_bucket(self) -> str:
        """The KV bucket of task snapshots."""
        return f"A2A_{self.token}_tasks"

    @property
    def nodes_bucket(self) -> str:
        """The KV bucket of node leases."""
        return f"A2A_{self.token}_nodes"

    @property
    def push_bucket(self) -> str:
        """The KV bucket of push-notification configs."""
        return f"A2A_{self.token}_push"

    @property
    def idempotency_bucket(self) -> str:
        """The KV bucket of the sends' idempotency keys."""
        return f"A2A_{self.token}_idem"

    @property
    def objects_bucket(self) -> str:
        """The Object Store bucket of large task content (:mod:`a2a_actors.cluster._offload`)."""
        return f"A2A_{self.token}_objects"

    @property
    def events_stream(self) -> str:
        """The stream of every task's events."""
        return f"A2A_{self.token}_events"

    @property
    def events_subjects(self) -> str:
        """The subject filter of :attr:`events_stream`."""
        return f"a2a.{self.token}.ev.>"

    def events_subject(self, task_id: str) -> str:
        """The subject carrying ``task_id``'s events."""
        return f"a2a.{self.token}.ev.{task_key(task_id)}"

    def inbox_subject(self, node_id: str) -> str:
        """The request subject of node ``node_id``'s inbox.

        Raises:
            ValueError: ``node_id`` is not letters, digits, ``-`` and ``_``.
        """
        return f"a2a.{self.token}.inbox.{_node_token(node_id)}"
