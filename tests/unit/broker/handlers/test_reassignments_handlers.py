"""Partition reassignment and leader election (handlers/reassignments.py): a move starts on
the controller and is listed from the committed state until it completes; bad replica lists,
unknown partitions and cancelling what is not moving are refused per partition; an
election the partition does not need says so; another node forwards once."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing
from broker_context import middle
from voter_context import answer, voter

from rillet.broker.handlers.reassignments import (
    handle_alter_reassignments,
    handle_elect_leaders,
    handle_list_reassignments,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.reassignment_messages import (
    AlterReassignmentsRequest,
    ElectLeadersRequest,
    ListReassignmentsRequest,
    PartitionMove,
    TopicPartitions,
)

PREFERRED = 0


async def test_a_move_starts_is_listed_and_bad_moves_are_refused(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        await v.live_brokers(1, 2)
        await v.topic("t", 2, replication_factor=1)
        topic_id = v.state.topic_ids["t"]
        leader = v.state.partitions[(topic_id, 0)].leader
        target = 2 if leader == 1 else 1
        moves = [
            PartitionMove("t", 0, [target]),
            PartitionMove("t", 1, [1, 1]),
            PartitionMove("ghost", 0, [1]),
            PartitionMove("t", 1, None),
        ]
        started = await answer(handle_alter_reassignments(v.ctx, AlterReassignmentsRequest(moves)))
        assert started.error_code == ErrorCode.NONE
        assert [(r.topic, r.partition, r.error_code) for r in started.results] == [
            ("t", 0, ErrorCode.NONE),
            ("t", 1, ErrorCode.INVALID_REPLICA_ASSIGNMENT),
            ("ghost", 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
            ("t", 1, ErrorCode.INVALID_REQUEST),  # named twice
        ]
        idle = await answer(
            handle_alter_reassignments(
                v.ctx, AlterReassignmentsRequest([PartitionMove("t", 1, None)])
            )
        )
        assert [r.error_code for r in idle.results] == [ErrorCode.NO_REASSIGNMENT_IN_PROGRESS]
        listed = handle_list_reassignments(v.ctx, ListReassignmentsRequest(None))
        assert listed.error_code == ErrorCode.NONE
        assert [(s.topic, s.partition, s.adding_replicas, s.removing_replicas)
                for s in listed.reassignments] == [("t", 0, [target], [leader])]  # fmt: skip
        only_1 = handle_list_reassignments(
            v.ctx, ListReassignmentsRequest([TopicPartitions("t", [1])])
        )
        assert only_1.reassignments == []
        broker = await v.broker_only(tmp_path / "broker")
        cancelled = await answer(
            handle_alter_reassignments(
                broker, AlterReassignmentsRequest([PartitionMove("t", 0, None)])
            )
        )
        assert [r.error_code for r in cancelled.results] == [ErrorCode.NONE]
        assert handle_list_reassignments(v.ctx, ListReassignmentsRequest(None)).reassignments == []
    alone = middle(tmp_path / "alone").ctx
    refused = await answer(
        handle_alter_reassignments(alone, AlterReassignmentsRequest([PartitionMove("t", 0, [1])]))
    )
    assert refused.error_code == ErrorCode.NOT_CONTROLLER


async def test_elections_answer_per_partition_and_refuse_unknown_types(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        await v.live_brokers(1)
        await v.topic("t", 1)
        asked = [TopicPartitions("t", [0, 5])]
        elected = await answer(handle_elect_leaders(v.ctx, ElectLeadersRequest(PREFERRED, asked)))
        assert elected.error_code == ErrorCode.NONE
        assert [(r.partition, r.error_code) for r in elected.results] == [
            (0, ErrorCode.ELECTION_NOT_NEEDED),
            (5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ]
        unknown = await answer(handle_elect_leaders(v.ctx, ElectLeadersRequest(7, asked)))
        assert (unknown.error_code, unknown.results) == (ErrorCode.INVALID_REQUEST, [])
        broker = await v.broker_only(tmp_path / "broker")
        forwarded = await answer(
            handle_elect_leaders(broker, ElectLeadersRequest(PREFERRED, asked))
        )
        assert [r.error_code for r in forwarded.results] == [
            ErrorCode.ELECTION_NOT_NEEDED,
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ]
    alone = middle(tmp_path / "alone").ctx
    refused = await answer(handle_elect_leaders(alone, ElectLeadersRequest(PREFERRED, asked)))
    assert refused.error_code == ErrorCode.NOT_CONTROLLER
