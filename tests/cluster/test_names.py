"""Cluster names: tokens that isolate agents sharing one NATS, and task keys that are
one-to-one for any task id."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from a2a_actors.cluster._names import ClusterNames, cluster_token, task_id_of_key, task_key


def test_a_plain_name_is_its_own_token_and_others_get_a_slug_and_a_hash() -> None:
    assert cluster_token("echo_agent-2") == "echo_agent-2"
    fancy = cluster_token("Echo Agent!")
    assert fancy.startswith("echo-agent-")
    assert len(fancy) == len("echo-agent-") + 8
    assert cluster_token("Echo Agent?") != fancy  # punctuation alone keeps them apart
    assert cluster_token("x" * 49).startswith("x" * 32 + "-")
    assert cluster_token("Ünïcode") != cluster_token("Ünïcodé")
    with pytest.raises(ValueError, match="empty"):
        cluster_token("")


def test_every_name_carries_the_token() -> None:
    names = ClusterNames.for_cluster("Echo Agent")
    token = names.token
    assert names.tasks_bucket == f"A2A_{token}_tasks"
    assert names.nodes_bucket == f"A2A_{token}_nodes"
    assert names.push_bucket == f"A2A_{token}_push"
    assert names.events_stream == f"A2A_{token}_events"
    assert names.events_subjects == f"a2a.{token}.ev.>"
    assert names.events_subject("t-1") == f"a2a.{token}.ev.t-1"
    assert names.inbox_subject("n1") == f"a2a.{token}.inbox.n1"


@given(st.text(min_size=1))
def test_task_keys_are_valid_and_one_to_one(task_id: str) -> None:
    key = task_key(task_id)
    assert all(c.isascii() and (c.isalnum() or c in "-_=") for c in key)
    assert task_id_of_key(key) == task_id


def test_keys_that_are_not_tasks() -> None:
    assert task_id_of_key("meta.tail") is None
    assert task_id_of_key("=!!") is None
    with pytest.raises(ValueError, match="empty"):
        task_key("")
