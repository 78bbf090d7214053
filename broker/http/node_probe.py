"""A read-only handle on one node's live state: what /ready, /metrics and the console read.

The node builds one :class:`NodeProbe` from the parts it already owns; the HTTP package never
changes them. Readiness is the same test a load balancer needs: the broker is registered,
the controller has unfenced it, and its metadata has caught up with the log it registered
at (so it answers with current leaders).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from rillet.broker.cluster.broker_lifecycle import BrokerLifecycle
from rillet.broker.cluster.metadata_view import MetadataView
from rillet.broker.config import NodeConfig
from rillet.broker.handlers.fetch_sessions import FetchSessionCache
from rillet.broker.http.decision_journal import DecisionJournal
from rillet.broker.http.request_metrics import RAFT_APPEND_BUCKETS_S, LocalHistogram
from rillet.broker.replica.replica_manager import ReplicaManager
from rillet.broker.runtime.loop_lag import LagTracker


@dataclass(slots=True)
class RaftActivity:
    """Leadership changes this node has observed (elections won by anyone)."""

    elections: int = 0
    last_term: int = 0

    def observe_term(self, term: int) -> None:
        if term > self.last_term:
            if self.last_term > 0:
                self.elections += 1
            self.last_term = term


@dataclass(slots=True)
class NodeProbe:
    config: NodeConfig
    replicas: ReplicaManager
    view: MetadataView
    lifecycle: BrokerLifecycle
    open_connections: Callable[[], int]
    journal: DecisionJournal = field(default_factory=DecisionJournal)
    # The node's event-loop lag monitor (broker/runtime/loop_lag.py), read at scrape time.
    loop_lag: LagTracker = field(default_factory=LagTracker)
    raft: RaftActivity = field(default_factory=RaftActivity)
    # Seconds from proposing a metadata entry to its commit, on this node as controller.
    raft_append: LocalHistogram = field(
        default_factory=lambda: LocalHistogram(RAFT_APPEND_BUCKETS_S)
    )
    # Applied metadata index by broker id, from the heartbeats this node received as
    # controller (empty elsewhere).
    applied_by_broker: dict[int, int] = field(default_factory=dict)
    # Failed SASL logins by (listener, mechanism) (broker/security/sasl/login_guard.py).
    sasl_failures: Mapping[tuple[str, str], int] = field(default_factory=dict)
    # Kafka clients' fetch sessions (broker/handlers/fetch_sessions.py); None in tests.
    fetch_sessions: FetchSessionCache | None = None

    @property
    def node_id(self) -> int:
        return self.config.node_id

    def not_ready_reason(self) -> str | None:
        """None when the node is ready to serve clients, else why not (one line)."""
        lifecycle = self.lifecycle
        if lifecycle.broker_epoch is None:
            return "not registered with the controller yet"
        if not lifecycle.caught_up.is_set():
            return "metadata not caught up with the log yet"
        if lifecycle.fenced:
            return "fenced by the controller"
        registration = self.view.state.brokers.get(self.node_id)
        if registration is None or registration.fenced:
            return "fenced in the applied metadata"
        return None


def _raft_append_histogram() -> LocalHistogram:
    return LocalHistogram(RAFT_APPEND_BUCKETS_S)
