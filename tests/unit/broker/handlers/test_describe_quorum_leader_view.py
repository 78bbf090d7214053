"""Kafka's DescribeQuorum asks for the Raft leader's view (handlers/cluster.py): the leader
answers it, another node forwards it there once, and while no leader is known, or when a
forwarded request reaches a node that no longer leads, the answer is NOT_LEADER_OR_FOLLOWER
rather than a view with the voters' log ends unknown. A plain DescribeQuorum still gets the
node's own view (``rillet cluster status`` compares them)."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import trio
import trio.testing
from voter_context import InProcessLink, answer, voter

from rillet.broker.handlers.cluster import (
    QuorumViewAt,
    handle_describe_quorum,
    leader_view_at,
    not_the_leaders_view,
)
from rillet.wire import cluster_messages as cm
from rillet.wire.error_codes import ErrorCode

LEADER_VIEW = cm.DescribeQuorumRequest(leader_view=True)


def test_where_the_leader_s_view_is_answered() -> None:
    here, forward, refuse = QuorumViewAt.HERE, QuorumViewAt.FORWARD, QuorumViewAt.REFUSE
    assert leader_view_at(leads=True, leader_known=True, forwarded=False) is here
    assert leader_view_at(leads=True, leader_known=True, forwarded=True) is here
    assert leader_view_at(leads=False, leader_known=True, forwarded=False) is forward
    assert leader_view_at(leads=False, leader_known=True, forwarded=True) is refuse  # one hop
    assert leader_view_at(leads=False, leader_known=False, forwarded=False) is refuse


def _view(node_id: int, leader_id: int, code: int = ErrorCode.NONE) -> cm.DescribeQuorumResponse:
    return cm.DescribeQuorumResponse(code, node_id, leader_id, 3, [1, 2, 3], 9, [], 0, 0, [])


def test_only_the_leader_s_own_view_is_passed_on() -> None:
    assert not_the_leaders_view(_view(2, 2)) is None
    # A node of the previous release ignores leader_view: its own view, naming the leader.
    assert not_the_leaders_view(_view(1, 2)) == 2
    assert not_the_leaders_view(_view(1, -1, ErrorCode.NOT_LEADER_OR_FOLLOWER)) == -1
    assert not_the_leaders_view(_view(1, 3, ErrorCode.NOT_CONTROLLER)) == 3
    # Any other refusal is the answer (the leader decided it).
    assert not_the_leaders_view(_view(2, 2, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)) is None


async def test_the_leader_answers_its_own_view_and_another_node_forwards_once(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path / "voter") as v:
        await v.live_brokers(1, 2)
        own = await answer(handle_describe_quorum(v.ctx, LEADER_VIEW))
        assert (own.error_code, own.node_id, own.leader_id) == (ErrorCode.NONE, 1, 1)

        node = await v.broker_only(tmp_path / "broker")
        link = cast(InProcessLink, node.metadata.link)
        forwarded = await answer(handle_describe_quorum(node, LEADER_VIEW))
        assert (forwarded.error_code, forwarded.node_id, forwarded.leader_id) == (
            ErrorCode.NONE,
            1,
            1,
        )  # the leader's view, not node 2's
        assert [b.broker_id for b in forwarded.brokers] == [1, 2]
        [sent] = link.calls
        assert (sent.leader_view, sent.forwarded) == (True, True)

        # Forwarded to a node that does not lead: refused, never forwarded again.
        again = await answer(
            handle_describe_quorum(node, cm.DescribeQuorumRequest(leader_view=True, forwarded=True))
        )
        assert again.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert len(link.calls) == 1
        # Without leader_view the node asked answers for itself.
        own = await answer(handle_describe_quorum(node, cm.DescribeQuorumRequest()))
        assert own.node_id == 2


async def test_while_no_leader_is_known_the_answer_is_not_leader_or_follower(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        term = v.cluster.elect(None)
        refused = await answer(handle_describe_quorum(v.ctx, LEADER_VIEW))
        assert (refused.error_code, refused.leader_id, refused.term) == (
            ErrorCode.NOT_LEADER_OR_FOLLOWER,
            -1,
            term,
        )
        assert refused.error_message == "node 1: no Raft leader"
        own = await answer(handle_describe_quorum(v.ctx, cm.DescribeQuorumRequest()))
        assert (own.error_code, own.leader_id) == (ErrorCode.NONE, -1)
