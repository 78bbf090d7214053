"""The controller's decisions, as a sans-I/O core that runs on the Raft leader.

Every method takes the committed metadata state and the time as arguments and returns the
records to propose (plus an answer for the caller); nothing here touches the network, the
disk or the clock. The driver proposes the records, waits until they are committed and
applied, and only then asks for the next decision, so decisions always see the state their
records will land on. Broker liveness is a lease: a broker that has not heartbeated within
``broker_session_timeout_ms`` is fenced, and partitions it led get a new leader from their
ISR, never from outside it unless the topic allows unclean election.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from rillet.metadata_quorum.acl_registry import AclCreated, AclRemoved
from rillet.metadata_quorum.assignment import AssignmentError, assign_replicas
from rillet.metadata_quorum.broker_leases import NO_ANSWER_HEARD, BrokerLeases, HeardAnswer
from rillet.metadata_quorum.classic_group_coordinator import ClassicGroupCoordinator
from rillet.metadata_quorum.classic_group_protocol import ClassicGroupConfig
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.entry_split import DEFAULT_MAX_RECORDS_PER_BATCH
from rillet.metadata_quorum.feature_decisions import FeatureSupport
from rillet.metadata_quorum.group_coordinator import GroupCoordinator
from rillet.metadata_quorum.reassignment import complete_move, with_isr
from rillet.metadata_quorum.reassignment_decisions import (
    advance_moves,
    unclean_allowed,
)
from rillet.metadata_quorum.records import (
    NO_LEADER,
    FenceBroker,
    MetadataRecord,
    PartitionChange,
    PartitionRecord,
    ProducerIds,
    RegisterBroker,
    RemoveTopic,
    TopicConfigsRecord,
    TopicRecord,
    UnfenceBroker,
)
from rillet.metadata_quorum.scram_registry import RemoveUserScramCredential, UserScramCredential
from rillet.metadata_quorum.state import MetadataState, PartitionState
from rillet.metadata_quorum.txn_coordinator import TxnConfig, expire_idle, expire_timed_out
from rillet.wire.acls import AclBinding
from rillet.wire.error_codes import ErrorCode

# Producer ids handed to a broker at a time (one metadata record per block, like KIP-730).
PRODUCER_ID_BLOCK_SIZE = 1000


@dataclass(frozen=True, slots=True)
class ControllerConfig:
    broker_session_timeout_ms: int = 9_000
    default_unclean_election: bool = False
    # Move leadership back to each partition's preferred (first) replica once it is live and
    # in sync again, checked this often (Kafka's auto.leader.rebalance.enable).
    auto_leader_rebalance: bool = True
    leader_rebalance_interval_ms: int = 10_000
    # A broker whose heartbeat connection to this controller closed (its process died: the
    # kernel closes its sockets) is fenced unless it heartbeats again within this grace,
    # instead of after a whole session timeout. A network partition closes nothing: the
    # session timeout still bounds that case.
    connection_lost_grace_ms: int = 500
    # A new controller waits this long (at most the session timeout) for each broker's
    # first heartbeat: brokers find the new controller within a few backoff steps, and a
    # broker that died with the previous controller must not keep its leaderships for a
    # whole session.
    # A new controller waits this long for each broker's first heartbeat (at most the
    # session timeout). Kafka waits a whole session; less makes failover of partitions led
    # by a broker that died with the controller faster, at the risk of fencing live brokers
    # that are slow to find the new controller.
    new_controller_grace_ms: int = 3_000
    # However the sessions stand, a new controller gives live brokers this long to find it
    # (they re-announce within a heartbeat interval of learning the new Raft leader).
    reannounce_window_ms: int = 1_000
    classic_groups: ClassicGroupConfig = field(default_factory=ClassicGroupConfig)
    # How often brokers heartbeat: a broker's lease runs a session from the last exchange
    # known to have gone both ways, plus one interval (the next heartbeat's echo of it).
    broker_heartbeat_interval_ms: int = 250
    # Records per Raft entry: a larger decision is split (entry_split; Kafka's controller
    # caps its record batches likewise).
    max_records_per_batch: int = DEFAULT_MAX_RECORDS_PER_BATCH


class Controller:
    """Leader-only controller state (heartbeat deadlines) plus pure decision functions."""

    def __init__(self, config: ControllerConfig, rng: random.Random) -> None:
        self.leases = BrokerLeases(config)  # broker liveness (broker_leases.py)
        self.config = config
        self._rng = rng
        # The last scan for moves off dead brokers that found none: of which state object,
        # at which applied index and with which live brokers (see _move_off_dead_brokers).
        self._clean_scan_state: MetadataState | None = None
        self._clean_scan_mark: tuple[int, frozenset[int]] = (-1, frozenset())
        self._next_rebalance_ms = 0
        # A split topic creation its predecessor did not finish leaves partitions of no
        # topic: the first tick removes them (the creator was told it failed).
        self._remove_pending_topics = False
        self.groups = GroupCoordinator()  # consumer groups, decided alongside
        self.classic_groups = ClassicGroupCoordinator(config.classic_groups)  # JoinGroup/SyncGroup
        self.features = FeatureSupport()  # the levels brokers state (feature_decisions.py)

    @property
    def config(self) -> ControllerConfig:
        return self._config

    @config.setter
    def config(self, config: ControllerConfig) -> None:
        """Replaced whole (tests do): the leases read the same settings."""
        self._config = config
        self.leases.config = config

    def on_become_leader(
        self,
        state: MetadataState,
        now_ms: int,
        last_contact_ms: int | None = None,
        previous_leader: int | None = None,
    ) -> None:
        """A new controller gives every registered broker a grace period to heartbeat.

        ``last_contact_ms``: no later than the last time the quorum heard from the previous
        leader (None: unknown). A broker silent since then — the previous controller's own
        node, paused or cut off with it — has had its session running since that moment, so
        its lease ends a session after it, not a whole grace after this activation; but
        never before live brokers had ``reannounce_window_ms`` to find this controller.

        ``previous_leader``: the node that led the quorum before (given with
        ``last_contact_ms``). Its broker may still reach this controller while hearing
        nothing (a node cut off one way stops leading because it hears no acknowledgement,
        yet its heartbeats keep arriving). Until it echoes one of this controller's answers,
        its last two-way exchange is taken to be ``last_contact_ms``, not the arrival of its
        first heartbeat here: a deaf former controller is fenced a session after it went
        deaf, as any deaf broker is, rather than a session after this activation."""
        self.leases.begin_term(state, now_ms, last_contact_ms, previous_leader)
        self._clean_scan_state = None  # a predecessor may have left moves undone: look
        self._next_rebalance_ms = now_ms + self.config.leader_rebalance_interval_ms
        self._remove_pending_topics = True
        self.groups.on_become_leader(state, now_ms)

    # -- brokers --------------------------------------------------------------------------

    def register_broker(
        self, state: MetadataState, record: RegisterBroker, now_ms: int
    ) -> Decision:
        current = state.brokers.get(record.broker_id)
        self.leases.registered(record.broker_id, now_ms)
        if current is not None and current.incarnation_id == record.incarnation_id:
            return Decision([])  # a retried registration: already done
        # A new incarnation is a restart the controller may not have noticed yet: the broker
        # could still lead partitions and sit in their ISRs, and its log may have lost an
        # unsynced or damaged tail. Leadership and ISR move off it in the same Raft entry as
        # its registration, so when it has caught up to its broker epoch it never acts as
        # the leader of its previous incarnation — followers would truncate committed
        # records to its shorter log and consumers would reset their positions.
        # Moves first, registration last: when the decision spans several entries
        # (entry_split), the broker epoch is the index of the last one, after every move.
        return Decision([*self._move_off_broker(state, record.broker_id), record])

    def connection_lost(
        self, state: MetadataState, broker_id: int, broker_epoch: int, now_ms: int
    ) -> None:
        """The broker's heartbeat connection closed: expire its lease after a short grace
        unless it heartbeats again (leader-only state, no records)."""
        broker = state.brokers.get(broker_id)
        if broker is None or broker.broker_epoch != broker_epoch or broker.fenced:
            return
        self.leases.end_soon(broker_id, now_ms + self.config.connection_lost_grace_ms)

    def next_lease_end_ms(self, state: MetadataState) -> int | None:
        """When the first lease of an unfenced broker ends (None: no lease runs). The driver
        ticks then, so a silent broker is fenced when its session ends rather than at the
        next regular tick (up to a tick interval later)."""
        return self.leases.next_end_ms(state)

    def awaiting_first_heartbeat(self, state: MetadataState, now_ms: int) -> list[int]:
        """Unfenced brokers this controller has not heard from yet, while their grace runs:
        the driver probes their listeners (a new controller's blind spot)."""
        return self.leases.awaiting_first_heartbeat(state, now_ms)

    def listener_refused(
        self, state: MetadataState, broker_id: int, broker_epoch: int, now_ms: int
    ) -> None:
        """A connection to the broker's listener was refused: no process serves there (a
        killed broker's ports close at once; a paused or cut-off one still accepts or times
        out), so its lease ends now instead of after the new controller's grace or the
        lost-connection grace (leader-only state, no records). A restarted broker has a new
        epoch: the refusal seen for its old one ends nothing."""
        broker = state.brokers.get(broker_id)
        if broker is None or broker.broker_epoch != broker_epoch or broker.fenced:
            return
        self.leases.end_soon(broker_id, now_ms)

    def heartbeat_arrived(
        self,
        state: MetadataState,
        broker_id: int,
        broker_epoch: int,
        now_ms: int,
        heard: HeardAnswer = NO_ANSWER_HEARD,
    ) -> None:
        """A heartbeat of ``broker_id`` reached this controller (leader-only state, no records).

        Liveness is taken when the heartbeat arrives, not when its decision runs: decisions
        wait for one another's commits, and a slow commit must not make every broker look
        silent (the next tick would fence them all). The lease runs a session from the last
        exchange known to have gone both ways (``_lease_end_ms``).
        """
        broker = state.brokers.get(broker_id)
        if broker is None or broker.broker_epoch != broker_epoch:
            return
        self.leases.renew(broker_id, now_ms, heard)

    @property
    def answer_key(self) -> int:
        """Stamped on this term's heartbeat answers (brokers echo it)."""
        return self.leases.answer_key

    def answered(self, broker_id: int, now_ms: int, arrived_ms: int | None = None) -> None:
        """A heartbeat answer stamped ``now_ms`` goes to ``broker_id`` (see
        :meth:`BrokerLeases.answered`)."""
        self.leases.answered(broker_id, now_ms, arrived_ms)

    def heartbeat(
        self,
        state: MetadataState,
        broker_id: int,
        broker_epoch: int,
        caught_up: bool,
        now_ms: int,
        heard: HeardAnswer = NO_ANSWER_HEARD,
    ) -> Decision:
        """A fenced broker that has caught up is unfenced, but only while it hears this
        controller's answers (a broker cut off one way must not lead again)."""
        broker = state.brokers.get(broker_id)
        if broker is None or broker.broker_epoch != broker_epoch:
            return Decision([], ErrorCode.UNKNOWN_MEMBER_ID, "stale or unknown broker epoch")
        lease_end = self.leases.renew(broker_id, now_ms, heard)
        if broker.fenced and caught_up and lease_end > now_ms:
            records: list[MetadataRecord] = [UnfenceBroker(broker_id, broker_epoch)]
            records += self._elect_where_possible(state, extra_live={broker_id})
            return Decision(records)
        return Decision([])

    def tick(self, state: MetadataState, now_ms: int) -> Decision:
        """Fence brokers whose lease expired and move leadership and ISR off every broker
        that is not live.

        The reconciliation covers all partitions, not only those of brokers expiring now: a
        previous controller may have committed a FenceBroker and lost the partition changes
        that should have followed it.
        """
        expired = self.leases.expired(state, now_ms)
        live = set(state.unfenced_brokers()) - set(expired)
        if self._remove_pending_topics:
            self._remove_pending_topics = False
            pending = [RemoveTopic(t) for t in state.pending_topic_ids()]
            if pending:
                return Decision(list(pending))
        # Moves before fences: split into several entries (entry_split), no prefix shows a
        # fenced broker still leading.
        records: list[MetadataRecord] = self._move_off_dead_brokers(state, live)
        records += [FenceBroker(b, state.brokers[b].broker_epoch) for b in expired]
        if not records:  # alone: each completion is computed on the committed state
            records += advance_moves(state)
        if not records and self.config.auto_leader_rebalance and now_ms >= self._next_rebalance_ms:
            self._next_rebalance_ms = now_ms + self.config.leader_rebalance_interval_ms
            records += self.preferred_leaders(state).records
        if not records:  # broker changes first: the groups re-target on the next tick
            records += self.groups.tick(state, now_ms).records
            # Classic groups depend on neither: their deadlines are kept in the same tick.
            records += self.classic_groups.tick(state, now_ms).records
            # Hung transactions are aborted (their producer fenced), unused ids forgotten.
            records += expire_timed_out(state.transactions, now_ms)
            records += expire_idle(state.transactions, TxnConfig(), now_ms)
        return Decision(records)

    def controlled_shutdown(
        self, state: MetadataState, broker_id: int, broker_epoch: int
    ) -> Decision:
        """A broker stopping cleanly: fence it now and move its leaderships, instead of
        leaving its partitions leaderless for a whole session timeout."""
        broker = state.brokers.get(broker_id)
        if broker is None or broker.broker_epoch != broker_epoch:
            return Decision([], ErrorCode.UNKNOWN_MEMBER_ID, "stale or unknown broker epoch")
        self.leases.forget(broker_id)
        records = self._move_off_broker(state, broker_id)  # moves before the fence
        if not broker.fenced:
            records.append(FenceBroker(broker_id, broker_epoch))
        return Decision(records)

    def _move_off_broker(self, state: MetadataState, broker_id: int) -> list[MetadataRecord]:
        """Leaderships and ISR places off ``broker_id`` (and off every broker not live)."""
        return self._move_off_dead_brokers(state, set(state.unfenced_brokers()) - {broker_id})

    def _move_off_dead_brokers(self, state: MetadataState, live: set[int]) -> list[MetadataRecord]:
        """Leadership and ISR moves off brokers not in ``live``, found by a scan of every
        partition. A scan that found nothing is not repeated until the state or the live
        brokers change: the result depends on nothing else, and at 10,000 partitions ten
        scans a second were a few percent of the controller node's loop."""
        mark = (state.last_applied_index, frozenset(live))
        if state is self._clean_scan_state and mark == self._clean_scan_mark:
            return []
        out: list[PartitionChange] = []
        # Unsorted (sorting 10,000 keys ten times a second costs more than the scan); only
        # the few changes found are put in order.
        for key, p in state.partitions.items():
            if (p.leader != NO_LEADER and p.leader not in live) or any(
                r not in live for r in p.isr
            ):
                change = self._reassign(state, key[0], p, live)
                if change is not None:
                    out.append(PartitionChange(key[0], key[1], change[0], change[1]))
        out.sort(key=lambda c: (c.topic_id, c.partition))
        if not out:  # changes found are looked for again until their entry is applied
            self._clean_scan_state, self._clean_scan_mark = state, mark
        return list(out)

    # -- partitions -----------------------------------------------------------------------

    def _unclean_allowed(self, state: MetadataState, topic_id: str) -> bool:
        return unclean_allowed(state, topic_id, self.config.default_unclean_election)

    def _reassign(
        self, state: MetadataState, topic_id: str, p: PartitionState, live: set[int]
    ) -> tuple[int | None, list[int] | None] | None:
        """New (leader, isr) when some of the partition's brokers are no longer live."""
        isr = [r for r in p.isr if r in live]
        if not isr:
            # The last in-sync replica stays in the ISR: it holds every committed record.
            isr = list(p.isr)
        leader = p.leader if p.leader in live else None
        if leader is None:
            candidates = [r for r in p.replicas if r in live and r in isr]
            if not candidates and self._unclean_allowed(state, topic_id):
                candidates = [r for r in p.replicas if r in live]
                isr = candidates[:1]
            leader = candidates[0] if candidates else NO_LEADER
        new_isr = isr if list(p.isr) != isr else None
        new_leader = leader if leader != p.leader else None
        if new_leader is None and new_isr is None:
            return None
        return new_leader, new_isr

    def _elect_where_possible(
        self, state: MetadataState, extra_live: set[int]
    ) -> list[MetadataRecord]:
        live = set(state.unfenced_brokers()) | extra_live
        out: list[MetadataRecord] = []
        for (topic_id, partition), p in sorted(state.partitions.items()):
            if p.leader == NO_LEADER:
                change = self._reassign(state, topic_id, p, live)
                if change is not None and change[0] not in (None, NO_LEADER):
                    out.append(PartitionChange(topic_id, partition, change[0], change[1]))
        return out

    def alter_partition(
        self,
        state: MetadataState,
        topic_id: str,
        partition: int,
        leader_id: int,
        leader_epoch: int,
        partition_epoch: int,
        new_isr: list[int],
    ) -> Decision:
        """An ISR change asked for by the partition leader, checked against its epochs.

        A replica whose copy is damaged (bit rot) may also ask to leave the ISR: a follower
        names the ISR without itself; a leader does the same and gives up leadership to
        another live in-sync replica (refused when there is none: its copy is the only one
        known to hold every committed record). ``leader_id`` is the asking broker.
        """
        p = state.partitions.get((topic_id, partition))
        if p is None:
            return Decision([], ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if leader_epoch != p.leader_epoch:
            return Decision([], ErrorCode.FENCED_LEADER_EPOCH, "not the current leader")
        if partition_epoch != p.partition_epoch:
            return Decision([], ErrorCode.INVALID_REQUEST, "stale partition epoch")
        if leader_id != p.leader and leader_id in new_isr:
            return Decision([], ErrorCode.FENCED_LEADER_EPOCH, "not the current leader")
        live = set(state.unfenced_brokers())
        if leader_id not in new_isr:
            return self._leave_isr(topic_id, partition, p, leader_id, new_isr, live)
        if leader_id not in new_isr or any(r not in p.replicas or r not in live for r in new_isr):
            return Decision(
                [], ErrorCode.INVALID_REQUEST, "ISR must hold the leader and live replicas"
            )
        if sorted(new_isr) == sorted(p.isr):
            return Decision([])
        if leader_id == self.leases.suspect and not set(p.isr) <= set(new_isr):
            # The previous quorum leader's node, not yet heard echoing this controller: it
            # may be the one cut off (a leader that hears nothing sees its followers stop
            # fetching). Shrunk to itself, the ISR would leave no replica to elect when it
            # is fenced. Its own rule (no removals while unanswered) counted its heartbeats
            # to itself as answered until it stopped leading the quorum.
            return Decision(
                [],
                ErrorCode.INVALID_REQUEST,
                "no ISR removal from a broker that has not heard this controller yet",
            )
        # The ISR change that brings a move's last target replica in sync completes it.
        done = complete_move(topic_id, partition, with_isr(p, new_isr), live)
        if done is not None:
            return Decision([done])
        return Decision([PartitionChange(topic_id, partition, None, sorted(new_isr))])

    def _leave_isr(
        self,
        topic_id: str,
        partition: int,
        p: PartitionState,
        replica: int,
        new_isr: list[int],
        live: set[int],
    ) -> Decision:
        """A replica asks to leave the ISR (its copy failed a CRC check)."""
        if replica not in p.replicas:
            return Decision([], ErrorCode.FENCED_LEADER_EPOCH, "not the current leader")
        remaining = sorted(r for r in p.isr if r != replica)
        if sorted(new_isr) != remaining:
            return Decision([], ErrorCode.INVALID_REQUEST, "may only remove itself from the ISR")
        if replica not in p.isr:
            return Decision([])
        if replica != p.leader:
            if p.leader not in remaining:
                return Decision([], ErrorCode.INVALID_REQUEST, "the ISR must keep its leader")
            return Decision([PartitionChange(topic_id, partition, None, remaining)])
        successors = [r for r in p.replicas if r in remaining and r in live]
        if not successors:
            return Decision(
                [], ErrorCode.NOT_ENOUGH_REPLICAS, "no other live in-sync replica to lead"
            )
        return Decision([PartitionChange(topic_id, partition, successors[0], remaining)])

    def allocate_producer_ids(
        self, state: MetadataState, broker_id: int, broker_epoch: int
    ) -> Decision:
        """The next block of producer ids for a broker to hand to idempotent producers."""
        broker = state.brokers.get(broker_id)
        if broker is None or broker.broker_epoch != broker_epoch:
            return Decision([], ErrorCode.UNKNOWN_MEMBER_ID, "stale or unknown broker epoch")
        first = state.next_producer_id
        return Decision([ProducerIds(broker_id, first, PRODUCER_ID_BLOCK_SIZE)])

    def preferred_leaders(self, state: MetadataState) -> Decision:
        """Move leadership back to each partition's first replica when it is live and in sync."""
        live = set(state.unfenced_brokers())
        out: list[MetadataRecord] = []
        for (topic_id, partition), p in sorted(state.partitions.items()):
            preferred = p.replicas[0] if p.replicas else NO_LEADER
            if preferred != p.leader and preferred in live and preferred in p.isr:
                out.append(PartitionChange(topic_id, partition, preferred, None))
        return Decision(out)

    # -- topics ---------------------------------------------------------------------------

    def create_topic(
        self,
        state: MetadataState,
        name: str,
        partitions: int,
        replication_factor: int,
        configs: dict[str, str],
        request_id: str = "",
    ) -> Decision:
        """``request_id`` names the client's request: its retry, after this creation was
        committed (the answer lost with a dying controller), succeeds instead of hearing
        TOPIC_ALREADY_EXISTS about its own topic."""
        if state.topic_requests.done(request_id, name):
            return Decision([])
        if state.topic_by_name(name) is not None:
            return Decision([], ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {name!r} exists")
        live = {b.broker_id: b.rack for b in state.brokers.values() if not b.fenced}
        try:
            assignment = assign_replicas(live, partitions, replication_factor, self._rng)
        except AssignmentError as exc:
            return Decision([], ErrorCode.INVALID_REPLICATION_FACTOR, str(exc))
        topic_id = str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
        # The partitions first, the topic last: split into several entries (entry_split),
        # the topic appears with all its partitions at once.
        records: list[MetadataRecord] = [
            PartitionRecord(topic_id, p, replicas, list(replicas), replicas[0])
            for p, replicas in enumerate(assignment)
        ]
        records.append(TopicRecord(name, topic_id, dict(configs), request_id))
        return Decision(records)

    def create_partitions(
        self, state: MetadataState, name: str, count: int, validate_only: bool = False
    ) -> Decision:
        """Grow topic ``name`` to ``count`` partitions, with the replication factor of its
        partition 0, placed as a new topic's would be. Kafka's rules: only more partitions
        (INVALID_PARTITIONS otherwise, also for a count it has already, so a resent request
        that was carried out is refused too, as in Kafka). The new partitions come in
        bounded entries (entry_split) and each appears whole; a client that sees the count
        grow may see it grow in steps while a large change commits."""
        topic = state.topic_by_name(name)
        if topic is None:
            return Decision([], ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"unknown topic {name!r}")
        current = state.partitions_of(topic.topic_id)
        if count <= len(current):
            return Decision(
                [],
                ErrorCode.INVALID_PARTITIONS,
                f"topic {name!r} has {len(current)} partitions; it can only grow "
                f"(asked for {count})",
            )
        factor = len(current[0].target_replicas()) if 0 in current else 1
        live = {b.broker_id: b.rack for b in state.brokers.values() if not b.fenced}
        try:
            assignment = assign_replicas(live, count - len(current), factor, self._rng)
        except AssignmentError as exc:
            return Decision([], ErrorCode.INVALID_REPLICATION_FACTOR, str(exc))
        if validate_only:
            return Decision([])
        return Decision(
            [
                PartitionRecord(topic.topic_id, p, replicas, list(replicas), replicas[0])
                for p, replicas in enumerate(assignment, start=len(current))
            ]
        )

    def alter_topic_configs(
        self, state: MetadataState, name: str, configs: dict[str, str]
    ) -> Decision:
        """Make ``configs`` topic ``name``'s overrides (validated by the caller, as at
        creation). The same map again commits nothing: a resent change succeeds."""
        topic = state.topic_by_name(name)
        if topic is None:
            return Decision([], ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"unknown topic {name!r}")
        if topic.configs == configs:
            return Decision([])
        return Decision([TopicConfigsRecord(topic.topic_id, dict(configs))])

    def alter_scram_credentials(
        self,
        state: MetadataState,
        upserts: Sequence[UserScramCredential],
        deletions: Sequence[tuple[str, str]],
    ) -> Decision:
        """Set and remove users' SCRAM credentials, all in one entry. Removing one that
        does not exist is refused (RESOURCE_NOT_FOUND), as in Kafka; setting one to what it
        is already commits nothing, so a resent change succeeds."""
        missing = [f"{n} ({m})" for n, m in deletions if state.scram.get(n, m) is None]
        if missing:
            return Decision(
                [], ErrorCode.RESOURCE_NOT_FOUND, f"no credential for {', '.join(missing)}"
            )
        records: list[MetadataRecord] = [
            c for c in upserts if state.scram.get(c.name, c.mechanism) != c
        ]
        records += [RemoveUserScramCredential(n, m) for n, m in deletions]
        return Decision(records)

    def alter_acls(
        self,
        state: MetadataState,
        creations: Sequence[AclBinding],
        deletions: Sequence[AclBinding],
    ) -> Decision:
        """Add and remove ACLs, all in one entry. Adding one that exists or removing one that
        does not commits nothing for it, so a resent request succeeds (as in Kafka)."""
        records: list[MetadataRecord] = [
            AclCreated(b) for b in dict.fromkeys(creations) if b not in state.acls
        ]
        records += [AclRemoved(b) for b in dict.fromkeys(deletions) if b in state.acls]
        return Decision(records)

    def delete_topic(self, state: MetadataState, name: str, request_id: str = "") -> Decision:
        """A retry of a delete already carried out (same ``request_id``) succeeds."""
        if state.topic_requests.done(request_id, name):
            return Decision([])
        topic = state.topic_by_name(name)
        if topic is None:
            return Decision([], ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"unknown topic {name!r}")
        return Decision([RemoveTopic(topic.topic_id, request_id)])
