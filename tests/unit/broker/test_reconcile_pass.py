"""The reconciler's decisions, without files: no pass before the broker has caught up, which
replicas a pass installs, replaces or removes, and when the fetchers must rescan."""

from __future__ import annotations

import random

from rillet.broker.replica.reconcile_pass import Install, Open, ReconcilePass, Reconciliation
from rillet.broker.replica.replica_role import TopicPartitionKey
from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.records import RegisterBroker
from rillet.metadata_quorum.state import MetadataState

NODE = 1


def apply_all(state: MetadataState, decision: Decision) -> None:
    assert decision.error == 0, decision.message
    for record in decision.records:
        state.apply(state.last_applied_index + 1, record)


def cluster_with_topic() -> tuple[Controller, MetadataState]:
    ctl = Controller(ControllerConfig(), random.Random(7))
    state = MetadataState()
    for b in (1, 2):
        apply_all(state, ctl.register_broker(state, RegisterBroker(b, f"i{b}", "h", b), 0))
        apply_all(state, ctl.heartbeat(state, b, state.brokers[b].broker_epoch, True, 0))
    apply_all(state, ctl.create_topic(state, "t", 2, 2, {}))
    return ctl, state


def reconciled_once(state: MetadataState) -> tuple[Reconciliation, ReconcilePass]:
    """A core after its first pass, every step done."""
    core = Reconciliation(NODE)
    first = core.begin(state, set(), lambda key: None)
    for step in first.steps:
        core.installed(step.key, step.wanted)
    core.finish(first, state)
    return core, first


def test_no_pass_runs_before_the_broker_has_caught_up() -> None:
    core = Reconciliation(NODE)
    assert not core.pass_due(5)
    assert core.caught_up()  # the first pass runs now
    assert not core.caught_up()  # and only once
    assert core.pass_due(5)


def test_a_first_pass_opens_every_assigned_partition_then_skips_unchanged_ones() -> None:
    _, state = cluster_with_topic()
    core = Reconciliation(NODE)
    first = core.begin(state, set(), lambda key: None)
    assert first.full and first.gone == []
    assert [(s.key, type(s), getattr(s, "replace", None)) for s in first.steps] == [
        (TopicPartitionKey("t", 0), Open, False),
        (TopicPartitionKey("t", 1), Open, False),
    ]
    for step in first.steps:
        core.installed(step.key, step.wanted)
        assert core.role(step.wanted.partition).leader_epoch == step.wanted.partition.leader_epoch
    assert core.finish(first, state)  # a full pass: the fetchers rescan
    assert core.reconciled_index == state.last_applied_index
    topic_id = first.steps[0].wanted.topic.topic_id
    again = core.begin(state, {s.key for s in first.steps}, lambda key: topic_id)
    assert not again.full and again.steps == [] and again.gone == []
    assert not core.finish(again, state)  # nothing changed: no rescan


def test_a_changed_partition_is_installed_again_and_a_foreign_topic_id_replaced() -> None:
    ctl, state = cluster_with_topic()
    core, first = reconciled_once(state)
    topic = state.topic_by_name("t")
    assert topic is not None
    apply_all(state, ctl.tick(state, 10**9))  # broker 2 silent: fenced, out of the ISRs
    hosted = {s.key for s in first.steps}
    changed = core.begin(
        state, hosted, lambda key: "an older topic" if key.partition else topic.topic_id
    )
    assert [(type(s), s.key.partition, getattr(s, "replace", None)) for s in changed.steps] == [
        (Install, 0, None),
        (Open, 1, True),
    ]


def test_a_partition_no_longer_assigned_is_removed() -> None:
    ctl, state = cluster_with_topic()
    core, first = reconciled_once(state)
    topic = state.topic_by_name("t")
    assert topic is not None
    apply_all(state, ctl.delete_topic(state, "t"))
    gone = core.begin(state, {s.key for s in first.steps}, lambda key: topic.topic_id)
    assert gone.gone == [TopicPartitionKey("t", 0), TopicPartitionKey("t", 1)]
    for key in gone.gone:
        core.removing(key)
    assert core.finish(gone, state)
