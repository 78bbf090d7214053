"""The cluster-internal apis a voter serves (handlers/cluster.py): broker registration and
heartbeats, ISR changes, producer id blocks, the metadata log for broker-only nodes, and
DescribeQuorum. Each change is decided by the running controller; each refuses a request
without the cluster's token, and a node that is not the controller answers NOT_CONTROLLER."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing
from broker_context import middle
from voter_context import Voter, answer, voter

from rillet.broker.handlers.cluster import (
    handle_allocate_producer_ids,
    handle_alter_partition,
    handle_broker_heartbeat,
    handle_broker_registration,
    handle_describe_quorum,
    handle_metadata_fetch,
)
from rillet.metadata_quorum.records import decode_entry
from rillet.raft.quorum import Snapshot
from rillet.wire import cluster_messages as cm
from rillet.wire.error_codes import ErrorCode

WRONG_TOKEN = b"\0" * 32


def registration(
    v: Voter, broker_id: int, incarnation: str = "inc", token: bytes | None = None
) -> cm.BrokerRegistrationRequest:
    cluster_id, auth = v.auth()
    return cm.BrokerRegistrationRequest(
        cluster_id, auth if token is None else token, broker_id, incarnation, "h", 9092
    )


def heartbeat(
    v: Voter, broker_id: int, epoch: int, shutting_down: bool = False, token: bytes | None = None
) -> cm.BrokerHeartbeatRequest:
    cluster_id, auth = v.auth()
    return cm.BrokerHeartbeatRequest(
        cluster_id, token or auth, broker_id, epoch, 0, True, shutting_down
    )


async def test_registration_gives_an_epoch_and_a_wrong_token_is_refused(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        first = await answer(handle_broker_registration(v.ctx, registration(v, 2)))
        assert (first.error_code, first.controller_id) == (ErrorCode.NONE, 1)
        assert first.broker_epoch == v.state.brokers[2].broker_epoch > 0
        again = await answer(handle_broker_registration(v.ctx, registration(v, 2)))
        assert again.broker_epoch == first.broker_epoch  # a retry of the same incarnation
        restarted = await answer(handle_broker_registration(v.ctx, registration(v, 2, "inc2")))
        assert restarted.broker_epoch > first.broker_epoch
        refused = handle_broker_registration(v.ctx, registration(v, 3, token=WRONG_TOKEN))
        assert isinstance(refused, cm.BrokerRegistrationResponse)
        assert refused.error_code == ErrorCode.AUTHENTICATION_FAILED
        assert 3 not in v.state.brokers
        elsewhere = middle(tmp_path / "broker")  # no controller runs there
        answered = await answer(handle_broker_registration(elsewhere.ctx, registration(v, 3)))
        assert answered.error_code == ErrorCode.NOT_CONTROLLER


async def test_a_heartbeat_unfences_a_stale_epoch_is_refused_and_shutdown_fences(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        epoch = (await answer(handle_broker_registration(v.ctx, registration(v, 2)))).broker_epoch
        fenced_before = v.state.brokers[2].fenced
        beat = await answer(handle_broker_heartbeat(v.ctx, heartbeat(v, 2, epoch)))
        assert (beat.error_code, beat.fenced, beat.controller_id) == (ErrorCode.NONE, False, 1)
        assert (fenced_before, v.state.brokers[2].fenced) == (True, False)
        stale = await answer(handle_broker_heartbeat(v.ctx, heartbeat(v, 2, epoch - 1)))
        assert stale.error_code == ErrorCode.UNKNOWN_MEMBER_ID
        refused = handle_broker_heartbeat(v.ctx, heartbeat(v, 2, epoch, token=WRONG_TOKEN))
        assert isinstance(refused, cm.BrokerHeartbeatResponse)
        assert refused.error_code == ErrorCode.AUTHENTICATION_FAILED
        leaving = await answer(handle_broker_heartbeat(v.ctx, heartbeat(v, 2, epoch, True)))
        assert leaving.error_code == ErrorCode.NONE and leaving.fenced
        assert v.state.brokers[2].fenced


async def test_an_isr_change_is_checked_against_the_leaders_epochs(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        await v.live_brokers(1, 2)
        await v.topic("t", 1, replication_factor=2)
        topic_id = v.state.topic_ids["t"]
        p = v.state.partitions[(topic_id, 0)]
        assert sorted(p.isr) == [1, 2]
        leader = p.leader
        epoch = v.state.brokers[leader].broker_epoch
        cluster_id, auth = v.auth()

        def alter(
            broker_epoch: int, partition_epoch: int, token: bytes = auth
        ) -> cm.AlterPartitionRequest:
            return cm.AlterPartitionRequest(
                cluster_id, token, leader, broker_epoch, topic_id, 0, p.leader_epoch,
                partition_epoch, [leader],
            )  # fmt: skip

        shrunk = await answer(handle_alter_partition(v.ctx, alter(epoch, p.partition_epoch)))
        assert (shrunk.error_code, shrunk.isr) == (ErrorCode.NONE, [leader])
        assert shrunk.partition_epoch == v.state.partitions[(topic_id, 0)].partition_epoch
        assert shrunk.partition_epoch > p.partition_epoch
        stale = await answer(handle_alter_partition(v.ctx, alter(epoch, p.partition_epoch)))
        assert stale.error_code == ErrorCode.INVALID_REQUEST  # the partition epoch moved on
        unknown = await answer(handle_alter_partition(v.ctx, alter(epoch + 100, 0)))
        assert unknown.error_code == ErrorCode.UNKNOWN_MEMBER_ID
        refused = handle_alter_partition(v.ctx, alter(epoch, 0, WRONG_TOKEN))
        assert isinstance(refused, cm.AlterPartitionResponse)
        assert refused.error_code == ErrorCode.AUTHENTICATION_FAILED


async def test_producer_id_blocks_never_overlap_and_need_the_current_epoch(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        await v.live_brokers(2)
        epoch = v.state.brokers[2].broker_epoch
        cluster_id, auth = v.auth()
        asked = cm.AllocateProducerIdsRequest(cluster_id, auth, 2, epoch)
        first = await answer(handle_allocate_producer_ids(v.ctx, asked))
        second = await answer(handle_allocate_producer_ids(v.ctx, asked))
        assert first.error_code == second.error_code == ErrorCode.NONE
        assert first.block_size > 0
        assert second.first_producer_id == first.first_producer_id + first.block_size
        assert v.state.next_producer_id == second.first_producer_id + second.block_size
        stale = cm.AllocateProducerIdsRequest(cluster_id, auth, 2, epoch - 1)
        refused = await answer(handle_allocate_producer_ids(v.ctx, stale))
        assert (refused.error_code, refused.block_size) == (ErrorCode.UNKNOWN_MEMBER_ID, 0)
        wrong = cm.AllocateProducerIdsRequest(cluster_id, WRONG_TOKEN, 2, epoch)
        unauthenticated = handle_allocate_producer_ids(v.ctx, wrong)
        assert isinstance(unauthenticated, cm.AllocateProducerIdsResponse)
        assert unauthenticated.error_code == ErrorCode.AUTHENTICATION_FAILED


async def test_the_metadata_log_is_served_by_voters_only(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        await v.live_brokers(2)
        cluster_id, auth = v.auth()
        log_end = v.state.last_applied_index
        fetched = await answer(
            handle_metadata_fetch(v.ctx, cm.MetadataFetchRequest(cluster_id, auth, 0))
        )
        assert fetched.error_code == ErrorCode.NONE
        assert [e.index for e in fetched.entries] == list(range(1, log_end + 1))
        assert [e.data for e in fetched.entries] == [e.data for e in v.cluster.log]
        decode_entry(fetched.entries[-1].data)  # real metadata records
        limited = await answer(
            handle_metadata_fetch(v.ctx, cm.MetadataFetchRequest(cluster_id, auth, 1, 2))
        )
        assert [e.index for e in limited.entries] == [2, 3]
        start = trio.current_time()
        waited = await answer(
            handle_metadata_fetch(
                v.ctx, cm.MetadataFetchRequest(cluster_id, auth, v.cluster.commit_index, 10, 300)
            )
        )
        assert waited.error_code == ErrorCode.NONE  # a long poll that ends empty
        assert trio.current_time() - start >= 0.3 or waited.entries
        state = v.state
        v.cluster.member(1).save_snapshot(Snapshot(log_end, v.cluster.term, state.to_snapshot()))
        behind = await answer(
            handle_metadata_fetch(v.ctx, cm.MetadataFetchRequest(cluster_id, auth, 1))
        )  # compacted away: the whole state instead
        assert (behind.error_code, behind.entries) == (ErrorCode.NONE, [])
        assert behind.snapshot == state.to_snapshot()
        assert behind.snapshot_index == state.last_applied_index >= log_end
        wrong = cm.MetadataFetchRequest(cluster_id, WRONG_TOKEN, 0)
        refused = handle_metadata_fetch(v.ctx, wrong)
        assert isinstance(refused, cm.MetadataFetchResponse)
        assert refused.error_code == ErrorCode.AUTHENTICATION_FAILED
    broker_only = middle(tmp_path / "broker").ctx
    its_auth = broker_only.metadata.auth
    not_voter = handle_metadata_fetch(
        broker_only, cm.MetadataFetchRequest(its_auth.cluster_id, its_auth.token, 0)
    )
    assert isinstance(not_voter, cm.MetadataFetchResponse)
    assert not_voter.error_code == ErrorCode.NOT_CONTROLLER


async def test_describe_quorum_reports_the_committed_cluster(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        await v.live_brokers(1, 2)
        await v.topic("t", 3)
        described = await answer(handle_describe_quorum(v.ctx, cm.DescribeQuorumRequest(True)))
        assert (described.error_code, described.node_id, described.leader_id) == (
            ErrorCode.NONE,
            1,
            1,
        )
        assert described.voters == [1] and described.term == v.cluster.term
        assert [(b.broker_id, b.fenced) for b in described.brokers] == [(1, False), (2, False)]
        assert (described.topics, described.partitions) == (1, 3)
        assert described.applied_index == v.state.last_applied_index
        assert described.state_sha256 == v.ctx.metadata.state_sha256()
        plain = await answer(handle_describe_quorum(v.ctx, cm.DescribeQuorumRequest()))
        assert plain.state_sha256 == ""
    not_voter = await answer(
        handle_describe_quorum(middle(tmp_path / "b").ctx, cm.DescribeQuorumRequest())
    )
    assert (not_voter.leader_id, not_voter.term) == (-1, -1)  # no quorum here: nothing known
