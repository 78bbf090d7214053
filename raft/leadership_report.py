"""What the Raft driver tells the layers above about leadership, and when (sans-I/O).

The driver reports a Ready's soft state once the Ready is carried out (its writes durable),
with one exception: a member that was reported leading and whose core no longer leads (a
message of a newer term, check-quorum) is reported deposed at once, when the message is
stepped or the tick taken, not after the Ready that follows. That Ready persists the new
term and waits for its fdatasync first, and may queue behind another Ready's (an fsync on a
loaded machine takes tens of milliseconds and more). Meanwhile the controller on this node
kept running and its node's brokers kept heartbeating it instead of the new controller,
whose lease on them was running out (the pause row of docs/chaos-kafka.md). Stopping to
lead is always safe to announce early: it promises nothing that is not yet on disk, and a
proposal still pending learns its fate when the Ready is carried out.
"""

from __future__ import annotations

from rillet.raft.quorum import Leadership
from rillet.raft.ready import Role, SoftState


def leadership_to_report(
    node_id: int,
    reported: Leadership,
    core: SoftState,
    term: int,
    settled: SoftState | None = None,
) -> Leadership | None:
    """The leadership to report now, or None when ``reported`` stays.

    ``core`` and ``term``: the core's soft state and term now. ``settled``: the soft state
    of a Ready just carried out (None between Readys: after a step or a tick). A Ready that
    named this member leader is not reported when the core stepped down since: what the
    core says now is."""
    if settled is not None:
        leader = settled.leader_id
        if leader == node_id and core.role is not Role.LEADER:
            leader = core.leader_id
        now = Leadership(leader, term)
    elif reported.leader_id == node_id and core.role is not Role.LEADER:
        now = Leadership(core.leader_id, term)
    else:
        return None
    return None if now == reported else now
