"""Deterministic simulation of our Raft core.

* ``lockstep``: a hand-driven cluster (deliver messages in rounds, partition, crash) for unit
  and golden-file tests of precise scenarios.
* ``cluster`` (the engine) over ``network`` and ``disk``, driven by ``scenario``: a seeded,
  randomized run of N cores (``node``) with message loss, delay, duplication, reordering,
  partitions, crashes that lose unsynced writes, and safety checks (``checks``) after every
  step. ``sweep`` runs seeds; ``python -m raft_simulation`` sweeps from the command
  line. A failure names its seed, and rerunning that seed replays the run exactly.

Like the core, nothing here does I/O, reads a clock or uses global randomness: a run is a
pure function of its seed and parameters.
"""
