"""Controller decisions on brokers: UnregisterBroker only once no partition names the
broker; dynamic broker configs committed as one whole-map record, kept in snapshots."""

from __future__ import annotations

from rillet.metadata_quorum.broker_admin import (
    alter_broker_configs,
    partitions_on,
    unregister_broker,
)
from rillet.metadata_quorum.features import (
    BASE_LEVEL,
    FEATURE_NAME,
    LATEST_LEVEL,
    FeatureLevel,
)
from rillet.metadata_quorum.records import (
    BrokerConfigsRecord,
    PartitionReassignment,
    PartitionRecord,
    RegisterBroker,
    TopicRecord,
    UnregisterBroker,
)
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode


def _state() -> MetadataState:
    s = MetadataState()
    for b in (1, 2, 3, 4):
        s.apply(b, RegisterBroker(b, f"i{b}", "h", 9000 + b))
    s.apply(10, PartitionRecord("tid", 0, [1, 2, 3], [1, 2, 3], 1))
    s.apply(11, TopicRecord("t", "tid"))
    s.apply(12, FeatureLevel(FEATURE_NAME, LATEST_LEVEL))  # this release's cluster
    return s


def _commit(s: MetadataState, records: list) -> None:  # type: ignore[type-arg]
    s.apply_entry(s.last_applied_index + 1, records)


def test_a_broker_holding_replicas_is_not_unregistered() -> None:
    s = _state()
    d = unregister_broker(s, 3)
    assert d.error == ErrorCode.INVALID_REQUEST and not d.records
    assert d.message is not None and "t-0" in d.message and "decommission" in d.message
    assert unregister_broker(s, 9).error == ErrorCode.BROKER_ID_NOT_REGISTERED


def test_a_broker_only_being_added_still_holds_a_replica() -> None:
    s = _state()
    _commit(s, [PartitionReassignment("tid", 0, [4, 2, 3, 1], [1, 2, 3], 1, [4], [1])])
    assert partitions_on(s, 4) == [("t", 0)]
    assert unregister_broker(s, 4).error == ErrorCode.INVALID_REQUEST


def test_an_empty_broker_is_unregistered_with_its_settings() -> None:
    s = _state()
    _commit(s, alter_broker_configs(s, 4, {"leader.replication.throttled.rate": "10"}).records)
    assert s.broker_configs == {4: {"leader.replication.throttled.rate": "10"}}
    d = unregister_broker(s, 4)
    assert d.error == ErrorCode.NONE
    assert d.records == [UnregisterBroker(4, 4), BrokerConfigsRecord(4, {})]
    _commit(s, d.records)
    assert 4 not in s.brokers and s.broker_configs == {}


def test_broker_configs_for_the_default_and_registered_brokers_only() -> None:
    s = _state()
    rate = {"follower.replication.throttled.rate": "5"}
    assert alter_broker_configs(s, 7, rate).error == ErrorCode.BROKER_ID_NOT_REGISTERED
    d = alter_broker_configs(s, -1, rate)
    assert d.records == [BrokerConfigsRecord(-1, rate)]
    _commit(s, d.records)
    assert alter_broker_configs(s, -1, rate).records == []  # the same map again: nothing
    again = MetadataState.from_snapshot(s.to_snapshot())
    assert again.broker_configs == {-1: rate}
    assert again.to_snapshot() == s.to_snapshot()


def test_broker_configs_wait_for_the_feature_level_that_carries_them() -> None:
    s = MetadataState()  # a log of the previous release: no feature level record
    s.apply(1, RegisterBroker(1, "i1", "h", 9001))
    assert s.feature_level == BASE_LEVEL
    d = alter_broker_configs(s, -1, {"leader.replication.throttled.rate": "10"})
    assert d.error == ErrorCode.UNSUPPORTED_VERSION and not d.records
    assert d.message is not None and "rillet cluster features --upgrade" in d.message
