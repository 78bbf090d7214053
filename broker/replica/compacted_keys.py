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
    """Records without a key were produced to a compacted topic."""

    def __init__(self, message: str, indexes: list[int]):
        super().__init__(message)
        self.indexes = indexes  # each keyless record's index among the records produced


def check_keys(records: bytes | bytearray | memoryview | FileRegion, config: LogConfig) -> None:
    """Raises MissingKey, naming every keyless record, when ``config`` compacts and a record
    has no key (as Kafka, which lists them so that a client fails only those). Batches that
    do not decode are left to the append, which refuses them with the precise error."""
    if not config.compacted or isinstance(records, FileRegion):
        return
    keyless: list[int] = []
    index = 0
    try:
        for view in iter_batches(records, config.max_batch_bytes, verify_crc=False):
            for record in decode_records(records, view.position):
                if record.key is None:
                    keyless.append(index)
                index += 1
    except WireError:
        return
    if keyless:
        raise MissingKey(
            f"{len(keyless)} of {index} records have no key (the first: record {keyless[0]}): "
            "a compacted topic (cleanup.policy=compact) needs a key on every record",
            keyless,
        )
