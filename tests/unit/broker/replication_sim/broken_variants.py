"""Deliberately broken leaders, selectable per run.

Why they exist: a checker that never fails proves nothing. The test suite runs each variant
over a small sweep and requires some seed to be caught (and the same seed to pass when
nothing is broken), so the invariants are shown to bite.
"""

import enum


class Bug(enum.Enum):
    """Deliberately broken variants: each must be caught by some seed, or the checker is
    not checking what it claims to."""

    # The leader counts a follower at the end of the records it sends, before the follower
    # has them (the follower's fetch offset is the only proof of what it holds).
    EARLY_FOLLOWER_LEO = "early-follower-leo"
    # The leader skips the divergence check: a follower keeps a diverging suffix and
    # appends the leader's records after it.
    NO_DIVERGENCE_CHECK = "no-divergence-check"
