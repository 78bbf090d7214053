"""The producer: ``send`` queues a record in its partition's batch, a sender delivers batches.

``send`` is built to cost little more than a microsecond per record: it picks the partition,
encodes the record into the open batch (see accumulator.py) and returns a handle; no event,
future or task per record. It awaits only
when the topic's metadata is unknown or the buffer is full, and gives the scheduler a turn
now and then so the sender task (sender.py) can ship full batches while the application keeps
producing.
"""

from __future__ import annotations

import random
import ssl
from time import time_ns

import trio

from rillet.client.accumulator import RecordAccumulator, RecordFuture
from rillet.client.cluster import ClusterClient
from rillet.client.errors import (
    ClientClosedError,
    MessageTooLargeError,
    UnknownTopicOrPartitionError,
)
from rillet.client.idempotence import IdempotenceState
from rillet.client.leader_watch import DEFAULT_LEADER_CHECK_MS
from rillet.client.lifecycle import ClientLifecycle
from rillet.client.node_choice import (
    DEFAULT_CONNECTION_ATTEMPT_DELAY_MS,
    DEFAULT_CONNECTION_SETUP_TIMEOUT_MS,
    DEFAULT_REQUEST_HEDGE_DELAY_MS,
)
from rillet.client.partitioner import StickyPartitioner
from rillet.client.sasl import SaslLogin
from rillet.client.sender import Sender
from rillet.client.transaction_state import (
    DEFAULT_TRANSACTION_TIMEOUT_MS,
    GroupMetadata,
    TransactionManager,
    TransactionStateError,
)
from rillet.client.transactions import TransactionDriver
from rillet.client.types import SendCounts, TopicPartition
from rillet.wire.batch import HEADER_SIZE
from rillet.wire.compression import Compression
from rillet.wire.record_codec import HeaderPairs

# ``send`` gives other tasks a turn after this many records (a trio checkpoint costs about a
# microsecond; one per 64 records keeps the sender and the connections running).
YIELD_EVERY = 64
MAX_RETRIES = 2**31 - 1
# Records with a value up to this size skip the size check (they fit any sane limit): the
# common case stays free of it.
SMALL_RECORD_BYTES = 64 * 1024
# A batch header and the record's own framing, counted against the limits.
RECORD_OVERHEAD_BYTES = HEADER_SIZE + 32
MAX_MESSAGE_BYTES = "max.message.bytes"
# A batch closes at this size (uncompressed). Larger than Kafka's 16 KiB: an idempotent
# producer keeps at most 5 batches of a partition in flight, so with replication the bytes
# in flight per partition bound the rate (docs/measurements/performance-history.md, "Message size").
DEFAULT_BATCH_BYTES = 512 * 1024


ACKS_ALL = -1


def parse_acks(acks: int | str) -> int:
    """0, 1, -1 or "all" (as int or str) -> 0, 1 or -1."""
    if acks in ("all", -1, "-1"):
        return -1
    if acks in (0, 1, "0", "1"):
        return int(acks)
    raise ValueError(f"acks must be 0, 1, -1 or 'all', not {acks!r}")


class Producer(ClientLifecycle):
    """Async producer; use as ``async with Producer(bootstrap) as producer``.

    See docs/client.md for every option and the delivery semantics.
    """

    def __init__(
        self,
        bootstrap: str,
        *,
        acks: int | str = "all",
        linger_ms: float = 5,
        batch_bytes: int = DEFAULT_BATCH_BYTES,
        buffer_bytes: int = 64 * 1024 * 1024,
        compression: str = "none",
        retries: int = MAX_RETRIES,
        delivery_timeout_ms: int = 120_000,
        retry_backoff_ms: int = 100,
        retry_backoff_max_ms: int = 1000,
        request_timeout_ms: int = 30_000,
        max_in_flight: int = 5,
        max_block_ms: int = 60_000,
        max_request_bytes: int = 8 * 1024 * 1024,
        client_id: str | None = None,
        rng: random.Random | None = None,
        enable_idempotence: bool | None = None,
        leader_check_ms: int = DEFAULT_LEADER_CHECK_MS,
        ssl_context: ssl.SSLContext | None = None,
        sasl: SaslLogin | None = None,
        socket_connection_setup_timeout_ms: int = DEFAULT_CONNECTION_SETUP_TIMEOUT_MS,
        connection_attempt_delay_ms: int = DEFAULT_CONNECTION_ATTEMPT_DELAY_MS,
        request_hedge_delay_ms: int = DEFAULT_REQUEST_HEDGE_DELAY_MS,
        transactional_id: str | None = None,
        transaction_timeout_ms: int = DEFAULT_TRANSACTION_TIMEOUT_MS,
    ) -> None:
        self.acks = parse_acks(acks)
        if enable_idempotence is None:
            enable_idempotence = self.acks == ACKS_ALL  # Kafka's default since 3.0
        if transactional_id is not None and not enable_idempotence:
            raise ValueError("a transactional_id needs enable_idempotence and acks='all'")
        if enable_idempotence and self.acks != ACKS_ALL:
            raise ValueError("enable_idempotence needs acks='all'")
        self.idempotent = enable_idempotence
        if batch_bytes < 1 or max_in_flight < 1 or buffer_bytes < 1:
            raise ValueError("batch_bytes, buffer_bytes and max_in_flight must be at least 1")
        if linger_ms < 0 or retries < 0 or delivery_timeout_ms <= 0 or request_timeout_ms <= 0:
            raise ValueError("linger_ms and retries must be >= 0, timeouts > 0")
        super().__init__(
            ClusterClient(
                bootstrap,
                client_id=client_id,
                request_timeout_ms=request_timeout_ms,
                leader_check_ms=leader_check_ms,
                ssl_context=ssl_context,
                sasl=sasl,
                socket_connection_setup_timeout_ms=socket_connection_setup_timeout_ms,
                connection_attempt_delay_ms=connection_attempt_delay_ms,
                request_hedge_delay_ms=request_hedge_delay_ms,
            )
        )
        self._rng = rng if rng is not None else random.Random()
        self._partitioner = StickyPartitioner(self._rng)
        self._buffer_bytes = buffer_bytes
        self._max_block_s = max_block_ms / 1000
        self._max_request_bytes = max_request_bytes
        self._delivery_timeout_s = delivery_timeout_ms / 1000
        idempotence = IdempotenceState(transactional_id is not None) if enable_idempotence else None
        txn = (
            None
            if transactional_id is None
            else TransactionManager(transactional_id, transaction_timeout_ms)
        )
        self._txn = txn
        self._counts: dict[str, int] = {}
        self._countdown = YIELD_EVERY
        self._acc = RecordAccumulator(
            batch_bytes,
            linger_ms / 1000,
            Compression.parse(compression),
            self._delivery_timeout_s,
            on_close=self._batch_closed,
        )
        self._sender = Sender(
            self._acc,
            self._cluster,
            acks=self.acks,
            request_timeout_ms=request_timeout_ms,
            max_in_flight=max_in_flight,
            retries=retries,
            retry_backoff_s=retry_backoff_ms / 1000,
            retry_backoff_max_s=max(retry_backoff_max_ms, retry_backoff_ms) / 1000,
            rng=self._rng,
            on_metadata=self._metadata_changed,
            max_request_bytes=max_request_bytes,
            idempotence=idempotence,
            transaction=txn,
        )
        self._txns = (
            None
            if txn is None or idempotence is None
            else TransactionDriver(
                self._cluster, txn, idempotence, request_timeout_ms / 1000, self._max_block_s
            )
        )

    # -- lifecycle ------------------------------------------------------------------------

    def _started(self, nursery: trio.Nursery) -> None:
        nursery.start_soon(self._sender.run, nursery)

    async def _closing(self, exc_type: type[BaseException] | None) -> None:
        try:
            if exc_type is None:
                await self.flush()
        finally:
            self._sender.fail_all(ClientClosedError("producer closed before the record was sent"))

    # -- sending --------------------------------------------------------------------------

    async def send(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        headers: HeaderPairs | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
    ) -> RecordFuture:
        """Queue one record; returns an awaitable of its RecordMetadata.

        Awaiting the result raises the batch's error (a BrokerError, ClientTimeoutError when
        delivery_timeout_ms passed, ClientClosedError). ``send`` itself raises only for
        misuse (a closed producer, a partition the topic does not have, a value or key that
        is not bytes), a topic that does not appear within max_block_ms (or
        delivery_timeout_ms), BufferFullError, or MessageTooLargeError for a record that
        cannot fit one request (``max_request_bytes``) or the topic's ``max.message.bytes``.
        """
        if self._lifecycle_state != "open":
            self._check_open()
        txn = self._txn
        if txn is not None:
            txn.check_can_send()
        count = self._counts.get(topic)
        if count is None:
            count = await self._learn_topic(topic)
        if value is not None and len(value) > SMALL_RECORD_BYTES:
            self._check_record_size(topic, key, value, headers)
        acc = self._acc
        if acc.buffered_bytes >= self._buffer_bytes:
            await self._acc.wait_for_space(self._buffer_bytes, self._max_block_s, self._check_open)
        if timestamp_ms is None:
            timestamp_ms = time_ns() // 1_000_000
        if partition is not None:
            if not 0 <= partition < count:
                raise UnknownTopicOrPartitionError(f"topic {topic!r} has no partition {partition}")
            if txn is not None and (topic, partition) not in txn.partitions:
                await self._add_to_transaction(topic, partition)
            future = acc.append(topic, partition, timestamp_ms, key, value, headers)
        elif key is not None:
            p = self._partitioner.partition(topic, key, count)
            if txn is not None and (topic, p) not in txn.partitions:
                await self._add_to_transaction(topic, p)
            future = acc.append(topic, p, timestamp_ms, key, value, headers)
        else:
            p = self._partitioner.partition(topic, None, count)
            if txn is not None and (topic, p) not in txn.partitions:
                await self._add_to_transaction(topic, p)
            future = acc.append(topic, p, timestamp_ms, None, value, headers, True)
            if future is None:  # the sticky batch was full and closed: move on
                p = self._partitioner.partition(topic, None, count)
                if txn is not None and (topic, p) not in txn.partitions:
                    await self._add_to_transaction(topic, p)
                future = acc.append(topic, p, timestamp_ms, None, value, headers)
        assert future is not None
        self._countdown -= 1
        if not self._countdown:
            self._countdown = YIELD_EVERY
            await trio.lowlevel.checkpoint()
        return future

    # -- transactions (docs/client-transactions.md) -------------------------------------------

    def _driver(self) -> TransactionDriver:
        self._check_open()
        if self._txns is None:
            raise TransactionStateError("the producer has no transactional_id")
        return self._txns

    async def init_transactions(self) -> None:
        """Register the transactional id with its coordinator, fencing every earlier
        producer of it (their later requests get PRODUCER_FENCED) and aborting what one of
        them left open. Optional: ``begin_transaction`` does it the first time."""
        await self._driver().init()

    async def begin_transaction(self) -> None:
        """Start a transaction: every record sent until commit or abort belongs to it."""
        driver = self._driver()
        await driver.ensure_initialized()
        driver.manager.begin()

    async def _add_to_transaction(self, topic: str, partition: int) -> None:
        """A partition's first record of the transaction: the coordinator adds the
        partition before any batch of it is sent (the leader refuses it otherwise)."""
        await self._driver().add_partitions([(topic, partition)])

    async def send_offsets_to_transaction(
        self, offsets: dict[TopicPartition, int], group_metadata: GroupMetadata | str
    ) -> None:
        """Commit a group's consumed ``offsets`` (the next offset to read, per partition)
        with the transaction: the group sees them only if it commits. ``group_metadata`` is
        ``GroupConsumer.group_metadata()`` (the group then fences a member a rebalance left
        behind) or a group id."""
        group = GroupMetadata(group_metadata) if isinstance(group_metadata, str) else group_metadata
        tps = {(tp.topic, tp.partition): offset for tp, offset in offsets.items()}
        await self._driver().send_offsets(tps, group)

    async def commit_transaction(self) -> None:
        """Send every record of the transaction, then commit it. Raises
        TransactionAbortableError when some record or request of it failed (abort it then),
        ProducerFencedError when a newer producer took the transactional id (fatal)."""
        driver = self._driver()
        driver.manager.end_request_allowed(commit=True)
        await self.flush()
        await driver.end(commit=True)

    async def abort_transaction(self) -> None:
        """Abort the transaction: read_committed consumers never see its records, and its
        offsets are dropped. Records still queued are sent first (then aborted)."""
        driver = self._driver()
        driver.manager.end_request_allowed(commit=False)
        await self.flush()
        await driver.end(commit=False)

    def _check_record_size(
        self, topic: str, key: bytes | None, value: bytes, headers: HeaderPairs | None
    ) -> None:
        """Refuse at once a record no node would take (as Kafka's producer does): sent, it
        would be refused, or break the connection over and over when larger than a frame."""
        size = RECORD_OVERHEAD_BYTES + len(value) + (len(key) if key else 0)
        size += sum(len(k) + len(v or b"") + 8 for k, v in headers or ())
        limit, setting = self._max_request_bytes, "the producer's max_request_bytes"
        leader_limit = self._leader_limit(topic)
        if leader_limit is not None and leader_limit[0] < limit:
            limit, setting = leader_limit
        if size > limit:
            raise MessageTooLargeError(
                f"a record of {size} bytes for {topic!r} exceeds {setting} ({limit} bytes)"
            )

    def _leader_limit(self, topic: str) -> tuple[int, str] | None:
        """The largest batch the topic's leader takes, and the setting that says so: the
        topic's ``max.message.bytes`` when it sets one, else the nodes' ``max_batch_bytes``
        (when they said)."""
        metadata = self._cluster.metadata
        configured = metadata.topic_configs.get(topic, {}).get(MAX_MESSAGE_BYTES)
        if configured is not None and configured.isdigit():
            return int(configured), f"the topic's {MAX_MESSAGE_BYTES}"
        if metadata.default_max_batch_bytes is None:
            return None
        return metadata.default_max_batch_bytes, "the nodes' max_batch_bytes"

    def _topic_limit(self, topic: str) -> int | None:
        """The largest batch the topic's leader takes (see ``_leader_limit``)."""
        leader_limit = self._leader_limit(topic)
        return leader_limit[0] if leader_limit is not None else None

    async def _learn_topic(self, topic: str) -> int:
        timeout = min(self._max_block_s, self._delivery_timeout_s)
        # As Kafka's producer: a topic that does not exist is created where the nodes'
        # auto.create.topics.enable allows it; where not, the error comes at once.
        count = await self._cluster.wait_for_topic(topic, timeout, auto_create=True)
        self._counts[topic] = count
        self._acc.add_topic(topic, count, self._topic_limit(topic))
        return count

    async def flush(self) -> None:
        """Send every record queued so far and wait until each is acknowledged or failed."""
        with self._acc.flushing():
            for batch in self._acc.pending() + list(self._sender.in_flight_batches):
                await batch.done.wait()

    def send_counts(self) -> SendCounts:
        """Produce requests and batches sent so far (retries included): records per batch
        is what bounds a node's work per record when writes spread over many partitions."""
        return SendCounts(self._sender.requests_sent, self._sender.batches_sent)

    async def partitions_for(self, topic: str) -> list[int]:
        """The partition ids of ``topic`` (waiting for its metadata like ``send``)."""
        self._check_open()
        count = self._counts.get(topic)
        if count is None:
            count = await self._learn_topic(topic)
        return list(range(count))

    # -- callbacks from the accumulator and the sender ------------------------------------

    def _batch_closed(self, topic: str, partition: int) -> None:
        count = self._counts.get(topic)
        if count is not None:
            self._partitioner.batch_closed(topic, partition, count)

    def _metadata_changed(self) -> None:
        """Partitions may have been added to topics we produce to."""
        for topic, count in list(self._counts.items()):
            new = self._cluster.partition_count(topic)
            if new is not None and new > count:
                self._counts[topic] = new
            self._acc.add_topic(topic, self._counts[topic], self._topic_limit(topic))
