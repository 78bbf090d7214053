"""Deliberately broken nodes, to show that a power or disk fault row can fail.

Only ``faulty_node --broken NAME`` applies one: the chaos harness passes it when the
environment variable ``RILLET_CHAOS_BROKEN`` names it (``chaos/power_faults.py``), a
test-only switch of the harness, never read by a node. Each breaks exactly the rule
docs/guarantees.md relies on:

- ``ack-before-fsync``: with a flush policy, the leader counts its whole log towards the
  high watermark and followers report offsets they have not fsynced, so acks=all no longer
  waits for the disks (the power-cut-all row with ``--flush-ms 0`` must catch it);
- ``no-eligibility``: the controller never moves leadership or ISR places off a node that
  restarts or is fenced, so a node that lost its unflushed tail comes back as the leader
  (the power-cut rows must catch it);
- ``ack-on-eio``: a leader whose append to a partition fails with a disk error (EIO,
  ENOSPC) answers the producer as if it had written the records, at the log's end, instead
  of STORAGE_ERROR: it keeps serving the partition as though its disk had taken the write
  (the disk-eio and disk-full rows must catch it).
"""

from __future__ import annotations

from typing import Any

VARIANTS = ("ack-before-fsync", "no-eligibility", "ack-on-eio")


def apply(name: str) -> None:
    if name == "ack-before-fsync":
        from rillet.broker.replica import partition_replica
        from rillet.broker.replica.replication import replica_fetcher

        async def no_flush(replicas: Any) -> None:
            return None

        cls: Any = partition_replica.PartitionReplica
        cls.local_committable_end = property(lambda self: self.log.log_end_offset)
        setattr(replica_fetcher, "_flush_before_fetch", no_flush)  # noqa: B010
    elif name == "no-eligibility":
        from rillet.metadata_quorum import controller

        ctl: Any = controller.Controller
        ctl._move_off_dead_brokers = lambda self, state, live: []
    elif name == "ack-on-eio":
        _ack_on_eio()
    else:
        raise SystemExit(f"unknown broken variant {name!r}; known: {', '.join(VARIANTS)}")


def _ack_on_eio() -> None:
    from rillet.broker.handlers import produce
    from rillet.wire.error_codes import ErrorCode
    from rillet.wire.messages import ProducePartitionResponse

    answer = produce._answer

    def acknowledged_anyway(ctx: Any, req: Any, p: Any, *rest: Any) -> Any:
        out = answer(ctx, req, p, *rest)
        if out.error_code != ErrorCode.STORAGE_ERROR:
            return out
        replica = ctx.leader_replica(p.topic, p.partition)
        end = replica.log.log_end_offset if not isinstance(replica, ErrorCode) else 0
        return produce._Answer(ProducePartitionResponse(p.topic, p.partition, ErrorCode.NONE, end))

    setattr(produce, "_answer", acknowledged_anyway)  # noqa: B010
