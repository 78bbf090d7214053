"""A compacted topic refuses records without a key, as Kafka does (INVALID_RECORD).

The log cleaner keeps the latest record *per key*; a record without one could never be
superseded or deleted, so Kafka refuses it at produce time rather than keep it forever. This
is the one place the produce path decodes records, and only for compacted topics: the rest
of the append still works on batch headers.
"""

from __future__ import annotations

from rillet.broker.errors import BrokerError
from rillet.partition_store.config import LogConfig
from rillet.wire.batch import decode_records, iter_batches
from rillet.wire.errors import WireError
from rillet.wire.frame import FileRegion


class MissingKey(BrokerError):
    """A record without a key was produced to a compacted topic."""


def check_keys(records: bytes | bytearray | memoryview | FileRegion, config: LogConfig) -> None:
    """Raises MissingKey when ``config`` compacts and a record has no key. Batches that do
    not decode are left to the append, which refuses them with the precise error."""
    if not config.compacted or isinstance(records, FileRegion):
        return
    try:
        for view in iter_batches(records, config.max_batch_bytes, verify_crc=False):
            for record in decode_records(records, view.position):
                if record.key is None:
                    raise MissingKey(
                        f"record at offset delta {record.offset} has no key: a compacted "
                        "topic (cleanup.policy=compact) needs a key on every record"
                    )
    except WireError:
        return
