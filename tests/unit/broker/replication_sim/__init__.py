"""A deterministic simulation of one partition replicated on three brokers (docs/replication.md).

Why it exists: the ISR / high watermark / leader-epoch rules go wrong only under particular
interleavings of crashes, pauses, lost, late, duplicated and reordered messages and stale
metadata, which a test on real processes meets by luck and can never replay. Here a run is a
pure function of its seed (every choice comes from ``random.Random(seed)`` or streams drawn
from it; one trio task runs the event loop, so trio's scheduling adds nothing), so a failing
seed is a reproducible bug report: ``.venv/bin/python tests/unit/broker/replication_sim
SEED`` replays it and prints a trace of the last events (see :mod:`.__main__`).

What is real and what is modelled:

- real: :class:`LeaderState` (follower progress, the high watermark over the maximal ISR, ISR
  proposals), :mod:`follower_state` (divergence truncation, out-of-range steps),
  :class:`LeaderEpochCache`, and the metadata side: the real :class:`Controller` deciding on a
  real :class:`MetadataState`, its records encoded into entries of a :class:`SimCluster`
  metadata log (SimQuorum) and decoded again by every broker (:mod:`.controller`).
- modelled, as small faithful copies of driver code (each names its source): the partition
  log (:mod:`.partition_log`: in memory, batches of base offset, record count, leader epoch,
  payload id), the driver half of ``PartitionReplica`` (:mod:`.replica`: roles, acks=all
  waiters, high-watermark checkpoint), and the broker (:mod:`.broker`), assembled from the
  leader's answer to a follower fetch (:mod:`.leader_fetch_handler`:
  ``handlers/replica_fetch.py``, long poll from ``handlers/fetch.py``), the follower's use of
  it (:mod:`.follower_fetch_loop`: ``replication/replica_fetcher.py``), the ISR manager
  (:mod:`.isr_proposer`: ``replication/isr_manager.py``), the broker lifecycle
  (:mod:`.controller_session`: register, catch up, heartbeat) and the acks=all produce path
  (:mod:`.client_request_handler`: ``handlers/produce.py``).
- faults (:mod:`.fault_schedule`): process crash (the log survives: a process crash, not a
  power loss, so acks that rely on the page cache stay true) and restart, pause (SIGSTOP:
  nothing runs, messages queue), network cuts (both ways, or between a broker and the
  controller only), message loss, delay, duplication and reordering (:mod:`.simulation`),
  stalled metadata, controller failover.

The checker (:class:`~.checker.Checker`) runs after every event; the first violation ends the
run. Tests use :func:`run_seed`; the rest of the package is its machinery.
"""

from .broken_variants import Bug
from .config import SimConfig
from .outcome import SimResult, Violation
from .simulation import Simulation, run_seed

__all__ = ["Bug", "SimConfig", "SimResult", "Simulation", "Violation", "run_seed"]
