"""A simulated broker, assembled from its parts.

Why a module of its own: the parts each schedule one task of a node and are read apart;
this is the one place that says a broker is all of them together (and, by elimination,
that every call declared on :class:`BrokerProcess` has an implementation).
"""

from __future__ import annotations

from .client_request_handler import ClientRequestHandler
from .controller_session import ControllerSession
from .follower_fetch_loop import FollowerFetchLoop
from .isr_proposer import IsrProposer
from .leader_fetch_handler import LeaderFetchHandler
from .metadata_follower import MetadataFollowerLoop
from .replica_reconciler import ReplicaReconciler


class SimBroker(
    ControllerSession,
    MetadataFollowerLoop,
    ReplicaReconciler,
    FollowerFetchLoop,
    LeaderFetchHandler,
    IsrProposer,
    ClientRequestHandler,
):
    """One broker: :class:`BrokerProcess` (what survives a crash) with every part.

    - :class:`ControllerSession`: register, heartbeat, wait for the metadata to catch up;
    - :class:`MetadataFollowerLoop`: read the committed metadata log and apply it;
    - :class:`ReplicaReconciler`: install the replica in its committed role;
    - :class:`FollowerFetchLoop`: fetch from the leader and apply the answers;
    - :class:`LeaderFetchHandler`: answer followers' fetches, long-polling empty ones;
    - :class:`IsrProposer`: propose ISR changes and settle them;
    - :class:`ClientRequestHandler`: acks=all produce, leader queries, consumer reads.
    """
