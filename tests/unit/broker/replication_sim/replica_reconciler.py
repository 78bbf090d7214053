"""The partition reconciler: installs the broker's replica in the role the metadata gives it.

Why a module of its own: what a pass does is the broker's own
:class:`~rillet.broker.replica.reconcile_pass.Reconciliation` (which replica to install,
replace or remove, in which role, and that no pass runs before the broker has caught up),
and hosting a replica in its role is ReplicaManager.install's own step
(:func:`~rillet.broker.replica.reconcile_pass.install_in_role`); this part executes a pass's
steps on the broker's one partition directory (opened, and recovered, when the process
started) and tells the fetch loop when the pass changed something, as the reconciler's
listeners do.
"""

from __future__ import annotations

from rillet.broker.replica.reconcile_pass import Open, Wanted, install_in_role
from rillet.broker.replica.replica_role import TopicPartitionKey
from rillet.broker.replica.topic_config import effective_log_config, min_insync_replicas

from .broker_process import BrokerProcess


class ReplicaReconciler(BrokerProcess):
    """PartitionReconciler's passes over the broker's one partition, scheduled."""

    def metadata_caught_up(self) -> None:
        """BrokerLifecycle set ``caught_up``: the reconciler's first pass."""
        if self.reconciliation.caught_up():
            self.reconcile()

    def metadata_applied(self) -> None:
        """Entries were applied: the reconciler's wait for the next index ends."""
        if self.reconciliation.pass_due(self.metadata.last_applied_index):
            self.reconcile()

    def _topic_id_of(self, key: TopicPartitionKey) -> str | None:
        r = self.replica
        return r.topic_id if r is not None and r.key == key else None

    def reconcile(self) -> None:
        """One pass of PartitionReconciler.reconcile, as the real core plans it."""
        core = self.reconciliation
        hosted = {self.replica.key} if self.replica is not None else set()
        planned = core.begin(self.metadata, hosted, self._topic_id_of)
        for key in planned.gone:
            core.removing(key)
            self.replica = None
        for step in planned.steps:
            if isinstance(step, Open) and step.replace:
                core.removing(step.key)
                self.replica = None
            self._install(step.key, step.wanted)
        if core.finish(planned, self.metadata):
            self.maybe_fetch()  # the replica fetchers rescan

    def _install(self, key: TopicPartitionKey, w: Wanted) -> None:
        """ReplicaManager.install: host the partition's log (opened by the start) in the
        role; a new replica is of the run's ``replica_type`` (the real class, or a broken
        subclass)."""
        plog = self.log.plog
        assert plog is not None  # the process is up
        r = self.replica
        if r is None or r.log is not plog:
            r = self.sim.replica_type(key, plog, self.request_flush, topic_id=w.topic.topic_id)
            self.replica = r
        was_leading = r.leader
        install_in_role(
            r,
            min_insync_replicas(w.topic.configs, self.sim.config.min_insync_replicas),
            effective_log_config(self.sim.log_config, w.topic.configs),
            self.reconciliation.role(w.partition),
            self.sim.now,
        )
        self.reconciliation.installed(key, w)
        if r.leader is not None and r.leader is not was_leading:
            self.sim.checker.leadership_started(self)
