"""Repairing a replica whose stored copy is damaged (bit rot), through the controller.

A read or a scrub that finds a batch failing its CRC check reports it on the replica
(``PartitionReplica.report_damage``). From then on nothing at or after that batch is served,
and this task moves the replica towards a repaired state, one safe step at a time:

1. while the replica is in the ISR, it asks the controller to remove it (AlterPartition
   naming the ISR without itself; a leader thereby hands its leadership to another live
   in-sync replica). Its copy stops counting as committed before any byte of it is cut;
2. once the committed metadata shows it out of the ISR, it cuts its log before the damaged
   batch (``PartitionReplica.truncate_damaged``, also done at once by ``set_role``) and the
   replica fetcher re-fetches the rest from the leader, which adds it back to the ISR once it
   has caught up. From the damage to the cut it sends no fetch for the partition, and the
   leader ignores fetch requests that arrived before it left the ISR, so the offset it had
   before the cut can never put it back in the ISR;
3. a leader that is the only in-sync replica keeps its data (no healthy copy is known): it
   answers CORRUPT_MESSAGE for the damaged range, logs at ERROR, and asks again as soon as
   another replica is back in the ISR.

:func:`repair_action` is the decision, pure; :class:`ReplicaRepairer` carries it out.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable

import trio

from rillet.broker.cluster.cluster_auth import ClusterAuth
from rillet.broker.cluster.controller_link import ControllerLink
from rillet.broker.config import NodeConfig
from rillet.broker.errors import ControllerUnreachable
from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replica_manager import ReplicaManager
from rillet.broker.replica.replica_role import ReplicaRole
from rillet.wire.cluster_messages import AlterPartitionRequest, AlterPartitionResponse
from rillet.wire.error_codes import ErrorCode

log = logging.getLogger(__name__)

# A pending repair is looked at again this often (a request lost, metadata not yet applied).
REPAIR_RETRY_S = 1.0


class RepairAction(enum.Enum):
    LEAVE_ISR = "leave the ISR"
    TRUNCATE = "cut the log before the damage"
    KEEP = "keep the data: the only in-sync copy"


def repair_action(role: ReplicaRole) -> RepairAction:
    """The next step for a damaged replica in the committed ``role``.

    Cutting committed data is only safe once other in-sync replicas hold it, i.e. once this
    replica is out of the ISR; the controller refuses to remove the last in-sync replica.
    """
    me = role.node_id
    if me not in role.isr:
        return RepairAction.KEEP if role.is_leader else RepairAction.TRUNCATE
    others = [r for r in role.isr if r != me]
    if not others or (not role.is_leader and role.leader_id not in others):
        return RepairAction.KEEP
    return RepairAction.LEAVE_ISR


class ReplicaRepairer:
    def __init__(
        self,
        config: NodeConfig,
        replicas: ReplicaManager,
        link: ControllerLink,
        auth: ClusterAuth,
        broker_epoch: Callable[[], int | None],
        on_repaired: Callable[[], None] = lambda: None,
    ) -> None:
        """``on_repaired`` is called after a cut (the replica fetchers resume the
        partition: they skip a damaged replica until then)."""
        self._on_repaired = on_repaired
        self._config = config
        self._replicas = replicas
        self._link = link
        self._auth = auth
        self._broker_epoch = broker_epoch
        self._wakeup = trio.Event()
        self._asking: set[PartitionReplica] = set()
        replicas.set_damage_listener(self.wake)

    def wake(self) -> None:
        """A damage was reported, or the metadata changed: look at damaged replicas now."""
        self._wakeup.set()

    async def run(self) -> None:
        """Look at every replica when woken (damage reported, metadata changed), and every
        ``REPAIR_RETRY_S`` at those still damaged (not at thousands of healthy ones)."""
        damaged: list[PartitionReplica] = []
        async with trio.open_nursery() as nursery:
            while True:
                with trio.move_on_after(REPAIR_RETRY_S):
                    await self._wakeup.wait()
                woken = self._wakeup.is_set()
                self._wakeup = trio.Event()
                # Woken by every metadata change: only damaged replicas have a step to take,
                # and a filter costs far less than a step for each of thousands of replicas.
                looked_at = (
                    [r for r in self._replicas.replicas() if r.damage is not None]
                    if woken
                    else damaged
                )
                for replica in looked_at:
                    self._step(replica, nursery)
                damaged = [r for r in looked_at if r.damage is not None and not r.deleted]

    def _step(self, replica: PartitionReplica, nursery: trio.Nursery) -> None:
        role = replica.role
        if replica.damage is None or replica.deleted or role is None:
            return
        if replica.log.damage is None:
            replica.damage = None  # its segment is gone meanwhile (retention, a truncation)
            return
        action = repair_action(role)
        if action is RepairAction.TRUNCATE:
            replica.truncate_damaged()
            self._on_repaired()
        elif action is RepairAction.KEEP:
            self._keep(replica)
        elif replica not in self._asking:
            replica.handover_refused = False  # another in-sync replica exists again
            epoch = self._broker_epoch()
            if epoch is not None:
                self._asking.add(replica)
                nursery.start_soon(self._leave_isr, replica, role, epoch)

    def _keep(self, replica: PartitionReplica) -> None:
        if not replica.handover_refused:
            replica.handover_refused = True
            log.error(
                "%s: no other in-sync replica holds the damaged range: keeping this copy and "
                "answering CORRUPT_MESSAGE for it until another replica is in sync (%s)",
                replica.key,
                replica.damage,
            )

    async def _leave_isr(self, replica: PartitionReplica, role: ReplicaRole, epoch: int) -> None:
        try:
            new_isr = [r for r in role.isr if r != role.node_id]
            log.warning(
                "%s: damaged copy, asking the controller for ISR %s (was %s)%s",
                replica.key,
                new_isr,
                list(role.isr),
                " and a new leader" if role.is_leader else "",
            )
            request = AlterPartitionRequest(
                self._auth.cluster_id,
                self._auth.token,
                self._config.node_id,
                epoch,
                replica.topic_id,
                replica.key.partition,
                role.leader_epoch,
                role.partition_epoch,
                new_isr,
            )
            timeout_s = self._config.quorum.request_timeout_ms / 1000
            try:
                response: AlterPartitionResponse = await self._link.call(request, timeout_s)
            except ControllerUnreachable as exc:
                log.warning("%s: leaving the ISR not decided yet: %s", replica.key, exc)
                return
            if response.error_code == ErrorCode.NOT_ENOUGH_REPLICAS:
                self._keep(replica)
            elif response.error_code != ErrorCode.NONE:
                log.info(
                    "%s: leaving the ISR refused (%s): %s; retrying from newer metadata",
                    replica.key,
                    ErrorCode(response.error_code).name,
                    response.error_message,
                )
        finally:
            self._asking.discard(replica)
