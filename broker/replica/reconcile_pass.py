"""What the partition reconciler does in one pass, decided without doing it.

Why a core of its own: :class:`~rillet.broker.replica.partition_reconciler.PartitionReconciler`
opens logs in worker threads, renames directories and yields to the event loop, and the
replication simulation (tests) installs its one replica between scheduled events; both run
this object, so which replicas are installed, replaced or removed, in which role, and when a
pass is due at all (only once the broker has caught up with the metadata as of its
registration) is decided in one place. It touches no file, task or clock: the driver reports
what it did (:meth:`Reconciliation.installed`, :meth:`~Reconciliation.removing`,
:meth:`~Reconciliation.open_failed`) and the time arrives as an argument.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replica_role import ReplicaRole, TopicPartitionKey
from rillet.metadata_quorum.state import MetadataState, PartitionState, TopicState
from rillet.partition_store.config import LogConfig

BrokerView = tuple[tuple[int, int, str, int, bool], ...]


@dataclass(frozen=True, slots=True)
class Wanted:
    """A partition this node hosts, as the metadata has it."""

    topic: TopicState
    partition: PartitionState


@dataclass(frozen=True, slots=True)
class Install:
    """Give the hosted replica (of the same topic id) its role now."""

    key: TopicPartitionKey
    wanted: Wanted


@dataclass(frozen=True, slots=True)
class Open:
    """Open the partition's log (a new one), then install it; ``replace``: first remove the
    hosted replica of an earlier topic of the same name."""

    key: TopicPartitionKey
    wanted: Wanted
    replace: bool


@dataclass(frozen=True, slots=True)
class ReconcilePass:
    """One pass: remove ``gone`` first, then each of ``steps`` in order."""

    index: int  # the metadata index the pass reconciles to
    full: bool  # every partition (the first pass, or a restored snapshot)
    gone: list[TopicPartitionKey]
    steps: list[Install | Open]
    changes_before: int


class Reconciliation:
    """The reconciler's memory between passes: what each hosted partition was last given
    (an unchanged, immutable partition state is skipped), opens to try again, and whether
    the broker has caught up yet."""

    def __init__(self, node_id: int) -> None:
        self.node_id = node_id
        self.started = False  # the broker has caught up: passes may run
        self.reconciled_index = 0
        self._applied: dict[TopicPartitionKey, Wanted] = {}
        self._keys: dict[tuple[str, int], TopicPartitionKey] = {}  # (topic id, partition)
        self._state: MetadataState | None = None  # the state object the last pass read
        self._failed: set[tuple[str, int]] = set()  # opens to try again on the next pass
        self._changes = 0  # replicas installed or removed so far
        self._brokers: BrokerView = ()

    def caught_up(self) -> bool:
        """The broker's metadata holds its registration: the first pass runs now (True), or
        it ran already. Before this no pass runs, so a node restarting with stale metadata
        never removes a partition that still exists."""
        first = not self.started
        self.started = True
        return first

    def pass_due(self, applied_index: int) -> bool:
        """Whether entries applied up to ``applied_index`` call for a pass."""
        return self.started and applied_index > self.reconciled_index

    def begin(
        self,
        state: MetadataState,
        hosted: set[TopicPartitionKey],
        topic_id_of: Callable[[TopicPartitionKey], str | None],
    ) -> ReconcilePass:
        """The pass for ``state``: every partition the first time and after a snapshot was
        restored (a new state object), else only those the applied entries changed.
        ``hosted``: the replicas hosted now; ``topic_id_of``: a hosted replica's topic id
        (None when not hosted). Reads ``state`` without yielding (it changes in place as
        entries are applied)."""
        index = state.last_applied_index
        changed = state.drain_changed_partitions() | self._failed
        self._failed = set()
        full = state is not self._state
        self._state = state
        wanted = self._wanted(state, state.partitions if full else changed)
        if full:
            gone = sorted(hosted - set(wanted), key=str)
        else:
            gone = sorted(
                {
                    tpk
                    for key in changed
                    if (tpk := self._keys.get(key)) is not None
                    and tpk not in wanted
                    and tpk in hosted
                },
                key=str,
            )
        steps: list[Install | Open] = []
        for key, w in sorted(wanted.items(), key=lambda kv: str(kv[0])):
            before = self._applied.get(key)
            if before is not None and before.partition is w.partition and before.topic is w.topic:
                continue
            topic_id = topic_id_of(key)
            if topic_id is None or topic_id != w.topic.topic_id:
                steps.append(Open(key, w, replace=topic_id is not None))
            else:
                steps.append(Install(key, w))
        return ReconcilePass(index, full, gone, steps, self._changes)

    def _wanted(
        self, state: MetadataState, keys: Iterable[tuple[str, int]]
    ) -> dict[TopicPartitionKey, Wanted]:
        """Which of ``keys`` are this node's partitions in ``state``."""
        wanted: dict[TopicPartitionKey, Wanted] = {}
        topics, partitions = state.topics, state.partitions
        for key in keys:
            p = partitions.get(key)
            if p is not None and self.node_id in p.replicas:
                topic = topics.get(key[0])
                if topic is not None:
                    wanted[TopicPartitionKey(topic.name, key[1])] = Wanted(topic, p)
        return wanted

    def role(self, p: PartitionState) -> ReplicaRole:
        return ReplicaRole.of(p, self.node_id)

    def installed(self, key: TopicPartitionKey, w: Wanted) -> None:
        """The driver hosted ``key`` in the role ``w`` gives it."""
        self._changes += 1
        self._applied[key] = w
        self._keys[(w.topic.topic_id, key.partition)] = key

    def removing(self, key: TopicPartitionKey) -> None:
        """The driver stops hosting ``key`` (its data is removed)."""
        self._changes += 1
        w = self._applied.pop(key, None)
        if w is not None:
            self._keys.pop((w.topic.topic_id, key.partition), None)

    def open_failed(self, key: TopicPartitionKey, w: Wanted) -> None:
        """Opening ``key``'s log failed: the next pass tries again."""
        self._failed.add((w.topic.topic_id, key.partition))

    def finish(self, done: ReconcilePass, state: MetadataState) -> bool:
        """The pass is over; whether the replica fetchers must rescan every replica (only
        when something changed: an idle node applies entries that change no partition,
        such as group offsets and heartbeats' decisions)."""
        self.reconciled_index = done.index
        brokers = _broker_view(state)
        if done.full or self._changes != done.changes_before or brokers != self._brokers:
            self._brokers = brokers
            return True
        return False


def install_in_role(
    replica: PartitionReplica,
    min_insync_replicas: int,
    log_config: LogConfig,
    role: ReplicaRole,
    now_ms: int,
) -> None:
    """ReplicaManager.install's step on a hosted (or new) replica: the topic's
    min.insync.replicas, its log settings (reconfigured only when they changed) and the
    committed role."""
    replica.min_insync_replicas = min_insync_replicas
    if replica.log.config != log_config:  # the topic's configs changed (or a first install)
        replica.log.reconfigure(log_config)
    replica.set_role(role, now_ms)


def _broker_view(state: MetadataState) -> BrokerView:
    """What the replica fetchers read of the brokers (where each leader listens)."""
    return tuple(
        (b.broker_id, b.broker_epoch, b.host, b.port, b.fenced)
        for b in sorted(state.brokers.values(), key=lambda b: b.broker_id)
    )
