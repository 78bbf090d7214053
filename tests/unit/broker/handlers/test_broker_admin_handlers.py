"""Dynamic broker configs, UnregisterBroker, UpdateFeatures and ObserveRaft on a running
controller (handlers/broker_admin.py, features.py, raft_voters.py): each decided on the
controller and answered from the committed state; a node that is not the controller
forwards once; refusals name the setting, the broker or the engine."""

from __future__ import annotations

from pathlib import Path

import trio.testing
from voter_context import answer, voter

from rillet.broker.handlers.broker_admin import (
    handle_alter_broker_configs,
    handle_unregister_broker,
)
from rillet.broker.handlers.features import handle_update_features
from rillet.broker.handlers.raft_voters import handle_observe_raft
from rillet.metadata_quorum.features import FEATURE_NAME, LATEST_LEVEL
from rillet.wire.broker_admin_messages import (
    AlterBrokerConfigsRequest,
    BrokerConfigChange,
    UnregisterBrokerRequest,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.feature_messages import UpdateFeaturesRequest
from rillet.wire.raft_voter_messages import ObserveRaftRequest

RATE = "leader.replication.throttled.rate"


async def test_broker_configs_are_committed_validated_and_forwarded(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path / "v") as v:
        change = BrokerConfigChange(-1, {RATE: "1000"})
        dry = await answer(
            handle_alter_broker_configs(v.ctx, AlterBrokerConfigsRequest([change], True))
        )
        assert dry.results[0].error_code == ErrorCode.NONE and v.state.broker_configs == {}
        done = await answer(handle_alter_broker_configs(v.ctx, AlterBrokerConfigsRequest([change])))
        assert done.results[0].error_code == ErrorCode.NONE
        assert v.state.broker_configs == {-1: {RATE: "1000"}}
        bad = BrokerConfigChange(-1, {"num.io.threads": "8"})
        refused = await answer(handle_alter_broker_configs(v.ctx, AlterBrokerConfigsRequest([bad])))
        assert refused.results[0].error_code == ErrorCode.INVALID_CONFIG
        assert "num.io.threads" in (refused.results[0].error_message or "")
        unknown = BrokerConfigChange(9, {RATE: "5"})
        other = await v.broker_only(tmp_path / "b")  # forwards to the controller
        forwarded = await answer(
            handle_alter_broker_configs(other, AlterBrokerConfigsRequest([unknown]))
        )
        assert forwarded.results[0].error_code == ErrorCode.BROKER_ID_NOT_REGISTERED


async def test_only_a_broker_that_holds_no_replica_is_unregistered(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        await v.live_brokers(1, 2)
        await v.topic("t", 1, replication_factor=2)  # on nodes 1 and 2
        await v.live_brokers(3)
        holds = await answer(handle_unregister_broker(v.ctx, UnregisterBrokerRequest(2)))
        assert holds.error_code == ErrorCode.INVALID_REQUEST
        assert "decommission" in (holds.error_message or "")
        gone = await answer(handle_unregister_broker(v.ctx, UnregisterBrokerRequest(3)))
        assert gone.error_code == ErrorCode.NONE and 3 not in v.state.brokers
        again = await answer(handle_unregister_broker(v.ctx, UnregisterBrokerRequest(3)))
        assert again.error_code == ErrorCode.BROKER_ID_NOT_REGISTERED


async def test_the_feature_level_is_described_and_never_lowered(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        described = await answer(handle_update_features(v.ctx, UpdateFeaturesRequest()))
        assert (described.error_code, described.name) == (ErrorCode.NONE, FEATURE_NAME)
        assert described.level == LATEST_LEVEL  # a new cluster starts there
        lower = await answer(
            handle_update_features(v.ctx, UpdateFeaturesRequest(level=LATEST_LEVEL - 1))
        )
        assert lower.error_code != ErrorCode.NONE
        assert v.state.feature_level == LATEST_LEVEL


async def test_observing_needs_the_raft_leader_of_an_engine_that_has_observers(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path / "v") as v:
        request = ObserveRaftRequest(5, "127.0.0.1:9501")
        # The in-memory quorum of the unit tests has no observers (as pysyncobj).
        assert handle_observe_raft(v.ctx, request).error_code == ErrorCode.UNKNOWN_API
        other = await v.broker_only(tmp_path / "b")  # runs no Raft replica at all
        assert handle_observe_raft(other, request).error_code == ErrorCode.NOT_CONTROLLER
