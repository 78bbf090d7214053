"""Split a controller decision's records into bounded Raft entries.

A decision is committed as one Raft entry when it is small, so its records apply all or none
(a fence and the leader moves it implies, a registration and the moves off the broker's old
incarnation). A decision about thousands of partitions (creating a 10,000-partition topic,
fencing a broker that leads thousands) would make one entry of megabytes: every voter
replicates, fsyncs, decodes and applies it in one go, which holds each node's event loop
long enough to lose Raft heartbeats. Such a decision is cut, in order, into entries of at
most ``max_records_per_batch`` records (Kafka's controller caps its record batches the same
way). The decisions order their records so that every prefix is a safe state and the record
that makes the change visible comes last: a topic's partitions before its TopicRecord, the
partition moves off a broker before its fence or registration (see ``controller.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from rillet.metadata_quorum.records import MetadataRecord

DEFAULT_MAX_RECORDS_PER_BATCH = 1_000


def split_records(
    records: Sequence[MetadataRecord], max_records_per_batch: int
) -> list[list[MetadataRecord]]:
    """``records`` in order, as consecutive entries of at most ``max_records_per_batch``."""
    if max_records_per_batch < 1:
        raise ValueError("max_records_per_batch must be at least 1")
    return [
        list(records[start : start + max_records_per_batch])
        for start in range(0, len(records), max_records_per_batch)
    ]
