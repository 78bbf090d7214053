"""Keeping a node's view of the Raft voters current while they change.

* A node that runs a Raft replica without a vote (``quorum.observer``, or a voter removed
  while it runs) asks the leader to send it the metadata log, and asks again every few
  seconds while it is not a voter or knows no leader: the leader keeps its observers in
  memory only, so a new leader learns of them this way. A removed voter whose log never
  got the entry that removed it knows no leader (nobody sends to it): asking brings it the
  entry, and the metadata after it. A voter that hears from a leader does not ask.
* Every node that runs a replica learns the listeners of voters added at run time from the
  configuration entries, so its controller links can reach such a voter when it becomes the
  controller. (A broker-only node knows only the voters of its ``quorum.voters``.)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import trio

from rillet.broker.cluster.controller_link import ControllerLink
from rillet.broker.config import NodeConfig
from rillet.broker.config.quorum_config import parse_address
from rillet.broker.errors import BrokerError, ConfigError
from rillet.raft.quorum import Quorum
from rillet.wire.error_codes import ErrorCode
from rillet.wire.raft_voter_messages import ObserveRaftRequest, RaftVoterResponse

log = logging.getLogger(__name__)

INTERVAL_S = 2.0


def _not_controller(response: RaftVoterResponse) -> int | None:
    return -1 if response.error_code == ErrorCode.NOT_CONTROLLER else None


async def follow_voters(
    config: NodeConfig, quorum: Quorum, links: Sequence[ControllerLink], raft_address: str
) -> None:
    """``raft_address``: this node's Raft port, as the leader reaches it."""
    request = ObserveRaftRequest(config.node_id, raft_address)
    timeout_s = config.quorum.request_timeout_ms / 1000
    while True:
        for node_id, listener in quorum.voter_listeners().items():
            try:
                address = parse_address(listener, f"the listener of voter {node_id}")
            except ConfigError:
                continue
            for link in links:
                link.learn_voter(node_id, address)
        if config.node_id not in quorum.voters or quorum.leadership().leader_id is None:
            try:
                answer = await links[0].call(request, timeout_s, not_controller=_not_controller)
            except BrokerError as exc:
                log.debug("asking the Raft leader for the log: %s", exc)
            else:
                if answer.error_code != ErrorCode.NONE:
                    log.warning("the Raft leader refused to send the log: %s", answer.error_message)
        await trio.sleep(INTERVAL_S)
