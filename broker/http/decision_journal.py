"""Recent controller decisions as this node applied them from the metadata log.

:class:`JournalingLog` wraps the committed log a node's metadata follower reads and notes
each entry's records in a bounded :class:`DecisionJournal` (for the console's "recent
decisions" and the decision counters of /metrics). Metadata entries are few, so decoding an
entry a second time here costs nothing that matters; the data path is not involved.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from dataclasses import dataclass

from rillet.metadata_quorum.errors import MetadataError
from rillet.metadata_quorum.follower import CommittedLog
from rillet.metadata_quorum.records import (
    ControllerActivated,
    FenceBroker,
    MetadataRecord,
    PartitionChange,
    PartitionReassignment,
    PartitionRecord,
    RegisterBroker,
    RemoveTopic,
    TopicRecord,
    UnfenceBroker,
    UnregisterBroker,
    decode_entry,
)
from rillet.raft.quorum import Entry, Snapshot

JOURNAL_ENTRIES = 50


@dataclass(frozen=True, slots=True)
class Decision:
    index: int
    term: int
    applied_at_ms: int
    kind: str
    text: str  # names a topic by its id, ``topic_id``; readers swap in the name they know
    topic_id: str = ""


class DecisionJournal:
    """The last ``capacity`` notable records and a count of every record kind seen."""

    def __init__(self, capacity: int = JOURNAL_ENTRIES) -> None:
        self.recent: deque[Decision] = deque(maxlen=capacity)
        self.counts: Counter[str] = Counter()

    def note(self, index: int, term: int, records: list[MetadataRecord], now_ms: int) -> None:
        for record in records:
            kind, text = describe(record)
            self.counts[kind] += 1
            if text:
                topic_id = getattr(record, "topic_id", "")
                self.recent.append(Decision(index, term, now_ms, kind, text, topic_id))


def describe(record: MetadataRecord) -> tuple[str, str]:
    """A record's kind (a metric label) and a one-line text ("" for routine records)."""
    match record:
        case RegisterBroker():
            return "register_broker", f"broker {record.broker_id} registered"
        case FenceBroker():
            return "fence_broker", f"broker {record.broker_id} fenced"
        case UnfenceBroker():
            return "unfence_broker", f"broker {record.broker_id} unfenced"
        case UnregisterBroker():
            return "unregister_broker", f"broker {record.broker_id} unregistered"
        case TopicRecord():
            return "create_topic", f"topic {record.name} created"
        case RemoveTopic():
            return "delete_topic", f"topic {record.topic_id} deleted"
        case PartitionRecord():
            return "create_partition", ""
        case PartitionChange():
            parts = []
            if record.leader is not None:
                parts.append(f"leader {record.leader}")
            if record.isr is not None:
                parts.append(f"isr {list(record.isr)}")
            change = ", ".join(parts) or "change"
            return "partition_change", f"partition {record.topic_id}-{record.partition}: {change}"
        case PartitionReassignment():
            moving = (
                f", adding {record.adding_replicas}, removing {record.removing_replicas}"
                if record.adding_replicas or record.removing_replicas
                else ""
            )
            return "partition_reassignment", (
                f"partition {record.topic_id}-{record.partition}: replicas {record.replicas}"
                f"{moving}, leader {record.leader}"
            )
        case ControllerActivated():
            return "controller_activated", (
                f"controller {record.node_id} active in term {record.term}"
            )
    return type(record).__name__.lower(), ""


class JournalingLog:
    """A :class:`CommittedLog` that notes what passes through it in a journal."""

    def __init__(self, source: CommittedLog, journal: DecisionJournal) -> None:
        self._source = source
        self._journal = journal

    async def read_committed(self, after_index: int, max_entries: int = 1000) -> list[Entry]:
        entries = await self._source.read_committed(after_index, max_entries)
        now_ms = time.time_ns() // 1_000_000
        for entry in entries:
            try:
                records = decode_entry(entry.data)
            except MetadataError:
                continue  # the follower reports it; the journal just skips it
            self._journal.note(entry.index, entry.term, records, now_ms)
        return entries

    def save_snapshot(self, snapshot: Snapshot) -> None:
        self._source.save_snapshot(snapshot)

    def latest_snapshot(self) -> Snapshot | None:
        return self._source.latest_snapshot()
