"""Partition leaders ask the controller to shrink or expand their ISR (AlterPartition).

A periodic pass over the partitions this node leads asks each leader core
(:class:`~rillet.broker.replica.replication.leader_state.LeaderState`) for the change it wants, and
sends each proposal to the controller in its own task. The leader keeps computing the high
watermark over the maximal ISR until the change is committed and reconciled back into it
(``on_committed``); a refusal or a lost answer clears the proposal so the next pass
proposes again from the committed state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import trio

from rillet.broker.cluster.cluster_auth import ClusterAuth
from rillet.broker.cluster.controller_link import ControllerLink
from rillet.broker.config import NodeConfig
from rillet.broker.errors import ControllerUnreachable
from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replica_manager import ReplicaManager
from rillet.broker.replica.replication.isr_proposal_step import (
    IsrProposalCycle,
    ProposalSettled,
    ProposalSettlement,
    proposal_due,
)
from rillet.broker.replica.replication.leader_state import IsrProposal
from rillet.broker.runtime.loop_slices import TimeSlicer
from rillet.wire.cluster_messages import AlterPartitionRequest
from rillet.wire.error_codes import ErrorCode

log = logging.getLogger(__name__)

# Expansion should follow a follower catching up promptly; a pass is a loop over the
# partitions this node leads, with no I/O unless a change is due.
ISR_CHECK_INTERVAL_MS = 200
# ISR proposals in flight at once: a node leading thousands of partitions whose followers
# all fall behind (or catch up) together must not start thousands of controller calls,
# each with its own tasks and timers, in one pass. The controller commits concurrent ones
# together, many per Raft entry.
MAX_PROPOSALS_IN_FLIGHT = 64


class IsrManager:
    def __init__(
        self,
        config: NodeConfig,
        replicas: ReplicaManager,
        link: ControllerLink,
        auth: ClusterAuth,
        broker_epoch: Callable[[], int | None],
        hears_controller: Callable[[], bool] = lambda: True,
    ) -> None:
        """``hears_controller``: False while this broker's heartbeats go unanswered (it may
        be the one cut off): no ISR removals are proposed then, only additions."""
        self._config = config
        self._replicas = replicas
        self._link = link
        self._auth = auth
        self._broker_epoch = broker_epoch
        self._hears_controller = hears_controller
        self._settlement = ProposalSettlement()

    async def run(self) -> None:
        lag_max_ms = self._config.replication.replica_lag_time_max_ms
        interval_s = min(ISR_CHECK_INTERVAL_MS, lag_max_ms // 2) / 1000
        in_flight = trio.Semaphore(MAX_PROPOSALS_IN_FLIGHT)
        async with trio.open_nursery() as nursery:
            while True:
                await trio.sleep(interval_s)
                epoch = self._broker_epoch()
                if epoch is None:
                    continue
                now = self._replicas.clock.steady_ms()
                deaf = not self._hears_controller()  # maybe cut off: no removals
                # A pass over thousands of leaders held the loop for 12 ms a step on average,
                # up to 82 ms (10,000 partitions): yield every slice of loop time.
                slicer = TimeSlicer()
                for replica in self._replicas.replicas():
                    await slicer.step()
                    if replica.leader is None or replica.deleted:
                        continue
                    if in_flight.value == 0:
                        break  # the next pass proposes the rest, from the committed state
                    proposal = proposal_due(replica, now, lag_max_ms, may_remove=not deaf)
                    if proposal is not None:
                        await in_flight.acquire()
                        nursery.start_soon(
                            self._propose_and_release, in_flight, replica, proposal, epoch
                        )

    async def _propose_and_release(
        self,
        in_flight: trio.Semaphore,
        replica: PartitionReplica,
        proposal: IsrProposal,
        epoch: int,
    ) -> None:
        try:
            await self._propose(replica, proposal, epoch)
        finally:
            in_flight.release()

    async def _propose(self, replica: PartitionReplica, proposal: IsrProposal, epoch: int) -> None:
        """One :class:`IsrProposalCycle` over the controller link (whose own retries are a
        :class:`~rillet.broker.cluster.controller_call.ControllerCall`)."""
        timeout_s = self._config.quorum.request_timeout_ms / 1000
        cycle = IsrProposalCycle.begin(replica, proposal, self._settlement)
        if cycle is None:
            return
        log.info(
            "%s: asking for ISR %s (was %s)", replica.key, list(proposal.isr), list(cycle.old_isr)
        )
        request = AlterPartitionRequest(
            self._auth.cluster_id,
            self._auth.token,
            self._config.node_id,
            epoch,
            replica.topic_id,
            replica.key.partition,
            cycle.leader_epoch,
            proposal.partition_epoch,
            list(proposal.isr),
        )
        try:
            outcome = await self._link.call_outcome(request, timeout_s)
        except ControllerUnreachable as exc:
            log.warning("%s: ISR change not decided: %s", replica.key, exc)
            cycle.finish(None)
            return
        response = outcome.response
        assert response is not None  # no answer raises
        settled = cycle.finish(
            response.error_code, response.partition_epoch, outcome.after_unanswered
        )
        if settled is ProposalSettled.REFUSED:
            log.info(
                "%s: ISR change refused (%s): %s",
                replica.key,
                ErrorCode(response.error_code).name,
                response.error_message,
            )
