"""A deterministic simulation of one partition replicated on three brokers (docs/replication.md).

Why it exists: the ISR / high watermark / leader-epoch rules go wrong only under particular
interleavings of crashes, pauses, lost, late, duplicated and reordered messages and stale
metadata, which a test on real processes meets by luck and can never replay. Here a run is a
pure function of its seed (every choice comes from ``random.Random(seed)`` or streams drawn
from it; one trio task runs the event loop, so trio's scheduling adds nothing), so a failing
seed is a reproducible bug report: ``.venv/bin/python tests/unit/broker/replication_sim
SEED`` replays it and prints a trace of the last events (see :mod:`.__main__`).

What is real and what is scheduled:

- real, imported from the broker and run as a node runs it: :class:`PartitionReplica`
  (roles, the high watermark over the maximal ISR via :class:`LeaderState`, acks=all
  progress and verdicts, the flush-gated high watermark, follower apply with divergence
  truncation, the high-watermark checkpoint), on a real :class:`PartitionLog` in a
  temporary directory (segments, indexes, the leader-epoch cache, recovery after every
  crash, fsync plans); the leader's answer to a follower fetch
  (:func:`answer_follower_fetch`); the ISR settling (``LeaderState.settle_proposal``); and
  the metadata side: the real :class:`Controller` deciding on a real
  :class:`MetadataState`, its records encoded into entries of a :class:`SimCluster`
  metadata log (SimQuorum) and decoded again by every broker (:mod:`.controller`); each
  voter answers the brokers' real cluster-api wire messages by the node's own exchanges
  (:mod:`rillet.broker.handlers.controller_decisions`).
- real driver control flow, imported from the broker's sans-I/O objects that its trio
  drivers run too: every call to the controller retries as
  :class:`~rillet.broker.cluster.controller_call.ControllerCall` says (back off on
  NOT_CONTROLLER, end without an answer at the deadline), each attempt to the voter the
  link's :class:`~rillet.broker.cluster.controller_call.VoterChoice` names, given up after
  the per-attempt timeout; a broker's membership is
  :class:`~rillet.broker.cluster.broker_membership.BrokerMembership` (register, wait for
  the metadata, heartbeat cadence and fencing, register again under a new incarnation,
  whether it hears the controller); an ISR change is ``proposal_due`` and an
  :class:`IsrProposalCycle` settled by :class:`ProposalSettlement`
  (:mod:`rillet.broker.replica.replication.isr_proposal_step`); a follower's fetch loop is
  :class:`FollowedPositions`, :func:`apply_answer` and :class:`FetchRound` /
  ``next_fetch``; the fetch handler's long poll is :class:`LongPoll`; the produce
  handler's acks=all path is ``acks_all_refusal`` and ``acks_all_answer``; the metadata
  follower's reads are :class:`~rillet.broker.cluster.metadata_poll.MetadataPoll` (long
  poll, its timeout, retry, snapshot) and
  :class:`~rillet.metadata_quorum.follower_progress.FollowerProgress` (apply in order);
  the partition reconciler's passes are
  :class:`~rillet.broker.replica.reconcile_pass.Reconciliation` (no pass before the broker
  caught up; which replica to install in which role) and ReplicaManager.install's
  ``install_in_role``; the flush and checkpoint tasks' passes are
  :class:`~rillet.broker.replica.flush_pass.FlushPass` (which fsyncs are due, one at a
  time, what follows a finished one) and ``checkpoints_due``.
- scheduled here (the trio tasks of a node, as discrete events): the parts of a broker
  (:mod:`.controller_session`, :mod:`.metadata_follower`, :mod:`.replica_reconciler`,
  :mod:`.isr_proposer`, :mod:`.follower_fetch_loop`, :mod:`.leader_fetch_handler`,
  :mod:`.client_request_handler`, and the flush and checkpoint tasks in
  :mod:`.broker_process`) execute those objects' actions as messages and timers
  (:mod:`.controller_calls` runs one controller call) and translate the simulation's
  messages for them; the voters (:mod:`.controller`) run the controller's own request
  handling on the real wire messages.
- faults (:mod:`.fault_schedule`): process crash (the files survive as written: a process
  crash, not a power loss, so acks that rely on the page cache stay true) and restart,
  pause (SIGSTOP: nothing runs, messages queue), network cuts (both ways, or between a
  broker and the quorum, or its leading voter, only), message loss, delay, duplication
  and reordering (:mod:`.simulation`), stalled metadata, controller failover. Per seed,
  the topic relies on the page cache or forces fsyncs (``flush.messages`` / ``flush.ms``,
  with a seeded fsync latency), and segments roll at a few KiB or not at all.

The checker (:class:`~.checker.Checker`) runs after every event; the first violation ends the
run. Tests use :func:`run_seed`; the rest of the package is its machinery.
"""

from .broken_variants import Bug
from .config import SimConfig
from .outcome import SimResult, Violation
from .simulation import Simulation, run_seed

__all__ = ["Bug", "SimConfig", "SimResult", "Simulation", "Violation", "run_seed"]
