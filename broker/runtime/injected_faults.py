"""Faults a test asks a node to inject: built by test-only entry points, read by the
handlers and the transaction marker writer (a node started by ``rillet node`` has none)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class InjectedFaults:
    """Faults a test asks the node to inject, given to the node when it is built (only a
    test-only entry point does: tests/support/ack_before_hw_node.py; ``rillet node`` never).

    ``ack_before_high_watermark``: answer acks=all right after the local append, before the
    high watermark passes the batch: the chaos harness's proof that its checker catches a
    broker that acknowledges what it cannot keep (docs/chaos.md).
    ``read_committed_past_lso``: read_committed fetches read to the high watermark, past the
    last stable offset (tests/support/txn_fault_node.py). ``skip_abort_markers``: partition
    leaders report an abort's markers written without writing them (same entry point). Both
    prove the transactional chaos checker catches what they break.
    """

    ack_before_high_watermark: bool = False
    read_committed_past_lso: bool = False
    skip_abort_markers: bool = False


NO_FAULTS = InjectedFaults()
