"""The cluster's feature level (no sockets): where it starts, who may raise it and when, and
what waits for it. A log of release 0.1.0 has no level record and registrations without a
level; its nodes ignore the fields this release adds."""

from __future__ import annotations

import random

import cbor2

from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.features import (
    BASE_LEVEL,
    FEATURE_NAME,
    LATEST_LEVEL,
    FeatureLevel,
    bootstrap_records,
)
from rillet.metadata_quorum.reassignment import MoveRequest
from rillet.metadata_quorum.reassignment_decisions import alter_reassignments
from rillet.metadata_quorum.records import (
    PartitionRecord,
    RegisterBroker,
    TopicRecord,
    decode_entry,
    decode_record,
    encode_entry,
    encode_record,
)
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode

TID = "00000000-0000-4000-8000-000000000001"


def apply_all(state: MetadataState, decision: Decision) -> None:
    if decision.records:
        records = decode_entry(encode_entry(decision.records))
        state.apply_entry(state.last_applied_index + 1, records)


def upgraded_cluster() -> tuple[Controller, MetadataState]:
    """A 0.1.0 cluster (no level record) whose brokers 1 and 2 registered again on this
    release; broker 3 still runs 0.1.0 (its registration states no level)."""
    ctl = Controller(ControllerConfig(9000), random.Random(1))
    state = MetadataState()
    apply_all(state, ctl.register_broker(state, RegisterBroker(3, "i3", "h", 3), 0))
    apply_all(state, Decision([PartitionRecord(TID, 0, [1, 2, 3], [1, 2, 3], 1)]))
    apply_all(state, Decision([TopicRecord("t", TID)]))
    for b in (1, 2):
        record = RegisterBroker(b, f"i{b}", "h", b, max_feature_level=LATEST_LEVEL)
        apply_all(state, ctl.register_broker(state, record, 0))
    return ctl, state


def test_a_new_cluster_starts_at_the_latest_level_an_existing_one_keeps_its_own() -> None:
    fresh = MetadataState()
    assert fresh.feature_level == BASE_LEVEL
    assert bootstrap_records(fresh) == [FeatureLevel(FEATURE_NAME, LATEST_LEVEL)]
    apply_all(fresh, Decision(bootstrap_records(fresh)))
    assert fresh.feature_level == LATEST_LEVEL and bootstrap_records(fresh) == []
    _ctl, old = upgraded_cluster()
    assert old.feature_level == BASE_LEVEL and bootstrap_records(old) == []


def test_the_level_is_raised_only_once_every_registered_node_supports_it() -> None:
    ctl, state = upgraded_cluster()
    refused = ctl.features.raise_level(state, FEATURE_NAME, LATEST_LEVEL)
    assert refused.error == ErrorCode.INVALID_REQUEST and not refused.records
    assert refused.message is not None and "node(s) 3" in refused.message
    assert ctl.features.levels(state) == {1: LATEST_LEVEL, 2: LATEST_LEVEL, 3: BASE_LEVEL}
    # Broker 3 restarts on this release, registered through a 0.1.0 controller (no level in
    # the record): its heartbeats to this controller say what it supports.
    apply_all(state, Decision([RegisterBroker(3, "i3b", "h", 3)]))
    ctl.features.heartbeat(3, state.brokers[3].broker_epoch - 1, LATEST_LEVEL)  # stale epoch
    assert ctl.features.raise_level(state, FEATURE_NAME, LATEST_LEVEL).records == []
    ctl.features.heartbeat(3, state.brokers[3].broker_epoch, LATEST_LEVEL)
    dry = ctl.features.raise_level(state, FEATURE_NAME, LATEST_LEVEL, validate_only=True)
    assert dry.error == ErrorCode.NONE and dry.records == []
    raised = ctl.features.raise_level(state, FEATURE_NAME, LATEST_LEVEL)
    assert raised.records == [FeatureLevel(FEATURE_NAME, LATEST_LEVEL)]
    apply_all(state, raised)
    assert state.feature_level == LATEST_LEVEL
    assert ctl.features.raise_level(state, FEATURE_NAME, LATEST_LEVEL).records == []  # done
    down = ctl.features.raise_level(state, FEATURE_NAME, BASE_LEVEL)
    assert down.error == ErrorCode.INVALID_REQUEST and "never goes down" in str(down.message)
    above = ctl.features.raise_level(state, FEATURE_NAME, LATEST_LEVEL + 1)
    assert "above what the controller supports" in str(above.message)
    assert ctl.features.raise_level(state, "kraft.version", 1).error == ErrorCode.INVALID_REQUEST


def test_reassignment_waits_for_the_level_of_its_records() -> None:
    _ctl, state = upgraded_cluster()
    refused = alter_reassignments(state, [MoveRequest("t", 0, (1, 2))])
    assert refused.error == ErrorCode.UNSUPPORTED_VERSION and not refused.records
    assert "rillet cluster features --upgrade" in str(refused.message)
    apply_all(state, Decision([FeatureLevel(FEATURE_NAME, LATEST_LEVEL)]))
    started = alter_reassignments(state, [MoveRequest("t", 0, (1, 2))])
    assert started.error == ErrorCode.NONE and started.records


def test_a_registration_of_release_0_1_0_reads_and_the_new_field_is_ignorable() -> None:
    """0.1.0 wrote RegisterBroker without the level; it reads this release's record by
    skipping the map key it does not know (its decoder takes only the fields it has)."""
    record = RegisterBroker(1, "i1", "h", 9092, None, "h", 9093, max_feature_level=2)
    doc = cbor2.loads(encode_record(record))
    assert doc["body"]["max_feature_level"] == 2
    del doc["body"]["max_feature_level"]  # as 0.1.0 wrote it
    old = decode_record(cbor2.dumps(doc, canonical=True))
    assert old == RegisterBroker(1, "i1", "h", 9092, None, "h", 9093)
    assert old.max_feature_level == 0  # not stated: the base level


def test_snapshots_keep_the_level_and_add_nothing_below_it() -> None:
    _ctl, state = upgraded_cluster()
    state.broker_max_levels.clear()  # as a 0.1.0 log leaves it
    doc = cbor2.loads(state.to_snapshot())
    assert "feature_level" not in doc and "broker_max_levels" not in doc  # 0.1.0's keys only
    _ctl, state = upgraded_cluster()
    apply_all(state, Decision([FeatureLevel(FEATURE_NAME, LATEST_LEVEL)]))
    restored = MetadataState.from_snapshot(state.to_snapshot())
    assert restored.feature_level == LATEST_LEVEL and restored.feature_level_set
    assert restored.broker_max_levels == {1: LATEST_LEVEL, 2: LATEST_LEVEL}
