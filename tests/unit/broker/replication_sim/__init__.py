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
  metadata log (SimQuorum) and decoded again by every broker (:mod:`.controller`).
- real driver steps, imported from the broker's trio drivers, which call the same
  functions: the ISR manager's choice of a proposal and its settling of the answer
  (:mod:`rillet.broker.replica.replication.isr_proposal_step`), the follower fetch loop's positions
  (:class:`FollowedPositions`) and its apply step (:func:`apply_answer`), the fetch
  handler's long-poll rule (``long_poll_ends``), the produce handler's acks=all refusal
  (``acks_all_refusal``) and verdict, and the broker lifecycle's heartbeat step
  (``next_heartbeat_s``).
- scheduled here (the trio tasks of a node, as discrete events): the follower's fetch loop
  (:mod:`.follower_fetch_loop`), the long poll on the leader (:mod:`.leader_fetch_handler`),
  the ISR manager's calls (:mod:`.isr_proposer`), the broker lifecycle
  (:mod:`.controller_session`: register, catch up, heartbeat, reconcile), the acks=all
  produce path (:mod:`.client_request_handler`), and the flush and checkpoint tasks
  (:mod:`.broker_process`). They hold timers and requests in flight and call the steps
  above; what they still write themselves is plumbing with no step in the broker yet:
  one fetch in flight per follower with its timeout and back-off, parking a long poll,
  the controller link's retry on NOT_CONTROLLER, registering and polling metadata, and
  installing the replica in its role (``ReplicaRole.of`` and ``set_role``).
- faults (:mod:`.fault_schedule`): process crash (the files survive as written: a process
  crash, not a power loss, so acks that rely on the page cache stay true) and restart,
  pause (SIGSTOP: nothing runs, messages queue), network cuts (both ways, or between a
  broker and the controller only), message loss, delay, duplication and reordering
  (:mod:`.simulation`), stalled metadata, controller failover. Per seed, the topic relies
  on the page cache or forces fsyncs (``flush.messages`` / ``flush.ms``, with a seeded
  fsync latency), and segments roll at a few KiB or not at all.

The checker (:class:`~.checker.Checker`) runs after every event; the first violation ends the
run. Tests use :func:`run_seed`; the rest of the package is its machinery.
"""

from .broken_variants import Bug
from .config import SimConfig
from .outcome import SimResult, Violation
from .simulation import Simulation, run_seed

__all__ = ["Bug", "SimConfig", "SimResult", "Simulation", "Violation", "run_seed"]
