"""The topic's timestamp policy, applied by the partition leader before an append.

CreateTime (the default): a batch whose timestamps are too far from the leader's clock is
refused with INVALID_TIMESTAMP (``message.timestamp.before.max.ms`` /
``message.timestamp.after.max.ms``, as Kafka). Future stamps are bounded (one hour by
default): they would pin their segment on disk for years. Past stamps are not, as in Kafka:
retention counts a segment's age from its last write too, so a record stamped 1970 is still
kept for ``retention.ms``. ``message.timestamp.before.max.ms = -1`` opts in to refusing
stamps older than the topic's ``retention.ms``.

LogAppendTime: the leader stamps each batch with its own clock (the header's max timestamp
and the LogAppendTime attribute bit; records then report that time) and recomputes the
batch's CRC, since both fields are under it.

Both work on batch headers only, never on records: a CreateTime batch is judged by its first
and max timestamps. A record stamped earlier than the first record of its own batch is not
seen, but it cannot cost data either: retention judges a segment by its newest timestamp.
"""

from __future__ import annotations

from rillet.broker.errors import BrokerError
from rillet.partition_store.config import LogConfig
from rillet.wire.batch import BatchView, iter_batches, stamp_log_append_time
from rillet.wire.errors import CorruptBatch
from rillet.wire.frame import FileRegion

Records = bytes | bytearray | memoryview | FileRegion


class InvalidTimestamp(BrokerError):
    """A batch's timestamps lie outside the window the topic accepts around the leader's
    clock; the message says which limit and by how much."""


def apply_timestamp_policy(records: Records, config: LogConfig, now_ms: int) -> Records:
    """The batches to append: ``records`` itself (CreateTime, checked) or a restamped copy
    (LogAppendTime). Raises InvalidTimestamp.

    Batches that are malformed, too large or (for LogAppendTime) fail their CRC come back
    unchanged: the append refuses them with the precise error.
    """
    if isinstance(records, FileRegion):
        return records  # never produced: the append refuses it
    try:
        views = list(iter_batches(records, config.max_batch_bytes, config.log_append_time))
    except CorruptBatch:
        return records
    if config.log_append_time:
        stamped = bytearray(records)
        for view in views:
            stamp_log_append_time(stamped, view.position, now_ms)
        return stamped
    _check_create_times(views, config, now_ms)
    return records


def _check_create_times(views: list[BatchView], config: LogConfig, now_ms: int) -> None:
    oldest = config.oldest_accepted_timestamp_ms(now_ms)
    newest = now_ms + config.message_timestamp_after_max_ms
    for i, view in enumerate(views):
        h = view.header
        first, last = h.first_timestamp_ms, h.max_timestamp_ms
        if oldest is not None and min(first, last) < oldest:
            raise InvalidTimestamp(
                f"batch {i}: timestamp {min(first, last)} is {now_ms - min(first, last)} ms "
                f"before the broker's clock; message.timestamp.before.max.ms allows "
                f"{now_ms - oldest} ms (check the producer's clock, or raise the limit)"
            )
        if last > newest:
            raise InvalidTimestamp(
                f"batch {i}: timestamp {last} is {last - now_ms} ms after the broker's clock; "
                f"message.timestamp.after.max.ms allows "
                f"{config.message_timestamp_after_max_ms} ms (check the producer's clock)"
            )
