"""Partition leaders write the markers of decided transactions (Kafka's WriteTxnMarkers).

In Kafka the coordinator sends WriteTxnMarkers to every partition leader. Here the decision
is in the metadata log, which every node follows, so the leaders pull instead: each node
looks at the decided transactions (PrepareCommit, PrepareAbort, PrepareEpochFence) after
every metadata change, writes the marker into each partition of theirs it leads, waits
until the marker is committed (the high watermark passes it), and tells the controller
which partitions are done (TxnMarkersWritten, over the node-authenticated link). The
controller completes the transaction when none is left. Nothing is pushed from the
controller, so a controller failover loses nothing: the next one finds the same decided
transactions in the log, and the leaders report again.

A node writes a transaction's marker into a partition once per leadership of it (a new
leader writes again: a duplicate marker ends nothing, the transaction is already over in
that log).
"""

from __future__ import annotations

import logging

import trio

from rillet.broker.cluster.cluster_auth import ClusterAuth
from rillet.broker.cluster.controller_link import ControllerLink
from rillet.broker.cluster.metadata_view import MetadataView
from rillet.broker.errors import ControllerUnreachable
from rillet.broker.replica.replica_manager import ReplicaManager
from rillet.broker.runtime.injected_faults import NO_FAULTS, InjectedFaults
from rillet.metadata_quorum.txn_coordinator import MarkerTask, pending_markers
from rillet.partition_store.errors import StoreError
from rillet.partition_store.producer_state import InvalidProducerEpoch
from rillet.wire.control_batch import ControlType, Marker
from rillet.wire.error_codes import ErrorCode
from rillet.wire.transaction_messages import TxnMarkersWrittenRequest, TxnTopicPartition

log = logging.getLogger(__name__)

# Decided transactions are looked at again this often without a metadata change (a report
# that did not reach the controller, a leadership that arrived later).
RETRY_INTERVAL_S = 1.0
# How long a marker may take to be committed before this pass gives up on it (the next
# pass writes it again if this node still leads).
COMMIT_WAIT_S = 10.0
# A coordinator epoch in the marker (Kafka's fencing of stale coordinators); here the
# metadata log orders the decisions, so it is always 0.
COORDINATOR_EPOCH = 0

# txn id, producer id, epoch, topic, partition, leader epoch, commit, transaction start. The
# producer id and epoch stay the same across a producer's transactions, so the start and the
# decision tell this transaction's marker from the previous one's: without them a node that
# saw the next decision before the previous one's completion took the new marker for written
# and skipped it (the transactional chaos workload found it: a committed record aborted by
# the next abort marker of its producer).
_Key = tuple[str, int, int, str, int, int, bool, int]


class TxnMarkerWriter:
    def __init__(
        self,
        node_id: int,
        replicas: ReplicaManager,
        view: MetadataView,
        link: ControllerLink,
        auth: ClusterAuth,
        request_timeout_s: float,
        faults: InjectedFaults = NO_FAULTS,
    ) -> None:
        self._node_id = node_id
        self._replicas = replicas
        self._view = view
        self._link = link
        self._auth = auth
        self._timeout_s = request_timeout_s
        self._faults = faults  # only a test's entry point injects any
        self._written: set[_Key] = set()  # markers written in the current leaderships

    async def run(self) -> None:
        while True:
            tasks = pending_markers(self._view.state.transactions)
            self._forget_finished(tasks)
            for task in tasks:
                await self._write(task)
            with trio.move_on_after(RETRY_INTERVAL_S):
                await self._view.follower.wait_applied(self._view.state.last_applied_index + 1)

    def _forget_finished(self, tasks: list[MarkerTask]) -> None:
        live = {
            (t.transactional_id, t.producer_id, t.producer_epoch, t.commit, t.started_ms)
            for t in tasks
        }
        self._written = {k for k in self._written if (*k[:3], *k[6:]) in live}

    async def _write(self, task: MarkerTask) -> None:
        """Write this node's markers of ``task``, wait for them to commit, report them."""
        kind = ControlType.COMMIT if task.commit else ControlType.ABORT
        marker = Marker(task.producer_id, task.producer_epoch, kind, COORDINATOR_EPOCH)
        done: list[TxnTopicPartition] = []
        for p in task.partitions:
            replica = self._replicas.get(p.topic, p.partition)
            if replica is None or not replica.is_leader or replica.deleted:
                continue
            if not task.commit and self._faults.skip_abort_markers:
                done.append(TxnTopicPartition(p.topic, p.partition))
                continue
            key = (
                task.transactional_id,
                task.producer_id,
                task.producer_epoch,
                p.topic,
                p.partition,
                replica.leader_epoch,
                task.commit,
                task.started_ms,
            )
            if key in self._written:
                done.append(TxnTopicPartition(p.topic, p.partition))
                continue
            try:
                result = replica.append_marker_as_leader(marker, self._replicas.clock.now_ms())
            except InvalidProducerEpoch:  # a newer epoch wrote here: this one is over
                done.append(TxnTopicPartition(p.topic, p.partition))
                continue
            except (StoreError, OSError) as exc:
                log.warning(
                    "%s-%d: marker of %s not written: %s",
                    p.topic,
                    p.partition,
                    task.transactional_id,
                    exc,
                )
                continue
            with trio.move_on_after(COMMIT_WAIT_S):
                if await replica.wait_for_high_watermark(
                    result.last_offset + 1, replica.leader_epoch
                ):
                    self._written.add(key)
                    done.append(TxnTopicPartition(p.topic, p.partition))
        # A transaction of group offsets only has no marker to write: reporting none left
        # completes it (it stayed PrepareCommit for ever, and its producer's next
        # InitProducerId waited on it: Kafka Streams' exactly_once_v2 after a restart).
        if done or not task.partitions:
            await self._report(task, done)

    async def _report(self, task: MarkerTask, done: list[TxnTopicPartition]) -> None:
        request = TxnMarkersWrittenRequest(
            self._auth.cluster_id,
            self._auth.token,
            self._node_id,
            task.transactional_id,
            task.producer_id,
            task.producer_epoch,
            done,
            task.started_ms,
        )
        try:
            response = await self._link.call(request, self._timeout_s)
        except ControllerUnreachable as exc:
            log.info("markers of %s not reported: %s", task.transactional_id, exc)
            return
        if response.error_code not in (ErrorCode.NONE, ErrorCode.INVALID_TXN_STATE):
            log.info(
                "markers of %s: the controller answered %s",
                task.transactional_id,
                ErrorCode.from_wire(response.error_code).name,
            )
