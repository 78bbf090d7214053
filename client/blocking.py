"""Blocking facade over the trio clients, for scripts, notebooks and Spark executors.

Each facade hosts its async client in a ThreadHost (thread_host.py): one background thread
running ``trio.run``. ``close()`` (or the end of the ``with`` block) closes the client (a
producer flushes) and joins the thread. A blocking client cannot be created or called from
inside a trio run (use the async clients there), nor used after ``close()``.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

from rillet.client.accumulator import RecordFuture
from rillet.client.admin import Admin
from rillet.client.consumer import Consumer
from rillet.client.errors import BrokerError
from rillet.client.lifecycle import ClientLifecycle
from rillet.client.producer import Producer
from rillet.client.range_reader import RangeChunk, RangeGap, RangeReader
from rillet.client.thread_host import ThreadHost
from rillet.client.transaction_state import GroupMetadata
from rillet.client.types import (
    ClusterDescription,
    ConsumerRecord,
    NewTopic,
    OffsetAndTimestamp,
    RecordMetadata,
    TopicDescription,
    TopicPartition,
)
from rillet.wire import group_messages as gm
from rillet.wire.acls import AclBinding, AclFilter
from rillet.wire.record_codec import HeaderPairs

C = TypeVar("C", bound=ClientLifecycle)


class _Blocking(Generic[C]):
    _host: ThreadHost[C]

    def close(self) -> None:
        """Close the client (a producer first sends what it holds) and stop its thread."""
        self._host.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class BlockingProducer(_Blocking[Producer]):
    """``Producer`` with plain methods; ``send`` returns a ``concurrent.futures.Future``."""

    def __init__(self, bootstrap: str, **options: Any) -> None:
        self._host = ThreadHost(lambda: Producer(bootstrap, **options), "rillet-producer")

    def send(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        headers: HeaderPairs | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
    ) -> concurrent.futures.Future[RecordMetadata]:
        """Queue a record; the future resolves once it is acknowledged (or fails)."""
        producer = self._host.client
        future: concurrent.futures.Future[RecordMetadata] = concurrent.futures.Future()

        def resolve(done: RecordFuture) -> None:
            error = done.exception()
            if error is None:
                future.set_result(done.result())
            else:
                future.set_exception(error)

        async def send() -> None:
            queued = await producer.send(topic, value, key, headers, partition, timestamp_ms)
            queued.add_done_callback(resolve)

        self._host.call(send)
        return future

    def flush(self) -> None:
        """Block until every record sent so far is acknowledged or failed."""
        self._host.call(self._host.client.flush)

    def partitions_for(self, topic: str) -> list[int]:
        return self._host.call(self._host.client.partitions_for, topic)

    # Transactions (a producer made with ``transactional_id``; docs/client-transactions.md).

    def init_transactions(self) -> None:
        self._host.call(self._host.client.init_transactions)

    def begin_transaction(self) -> None:
        self._host.call(self._host.client.begin_transaction)

    def send_offsets_to_transaction(
        self, offsets: dict[TopicPartition, int], group_metadata: GroupMetadata | str
    ) -> None:
        self._host.call(self._host.client.send_offsets_to_transaction, offsets, group_metadata)

    def commit_transaction(self) -> None:
        self._host.call(self._host.client.commit_transaction)

    def abort_transaction(self) -> None:
        self._host.call(self._host.client.abort_transaction)


class BlockingConsumer(_Blocking[Consumer]):
    """``Consumer`` with plain methods."""

    def __init__(self, bootstrap: str, **options: Any) -> None:
        self._host = ThreadHost(lambda: Consumer(bootstrap, **options), "rillet-consumer")

    def assign(self, partitions: list[TopicPartition]) -> None:
        self._host.call_sync(self._host.client.assign, partitions)

    def assignment(self) -> set[TopicPartition]:
        return self._host.call_sync(self._host.client.assignment)

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self._host.call_sync(self._host.client.seek, tp, offset)

    def seek_to_beginning(self, *tps: TopicPartition) -> None:
        self._host.call(self._host.client.seek_to_beginning, *tps)

    def seek_to_end(self, *tps: TopicPartition) -> None:
        self._host.call(self._host.client.seek_to_end, *tps)

    def position(self, tp: TopicPartition) -> int:
        return self._host.call(self._host.client.position, tp)

    def highwater(self, tp: TopicPartition) -> int | None:
        return self._host.call_sync(self._host.client.highwater, tp)

    def poll(self, timeout_ms: int = 1000, max_records: int | None = None) -> list[ConsumerRecord]:
        return self._host.call(self._host.client.poll, timeout_ms, max_records)

    def beginning_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        return self._host.call(self._host.client.beginning_offsets, tps)

    def end_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        return self._host.call(self._host.client.end_offsets, tps)

    def offsets_for_times(
        self, query: dict[TopicPartition, int]
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        return self._host.call(self._host.client.offsets_for_times, query)


class BlockingAdmin(_Blocking[Admin]):
    """``Admin`` with plain methods."""

    def __init__(self, bootstrap: str, **options: Any) -> None:
        self._host = ThreadHost(lambda: Admin(bootstrap, **options), "rillet-admin")

    def create_topics(
        self,
        new_topics: Sequence[NewTopic],
        timeout_ms: int | None = None,
        validate_only: bool = False,
    ) -> None:
        self._host.call(self._host.client.create_topics, new_topics, timeout_ms, validate_only)

    def delete_topics(self, names: Sequence[str], timeout_ms: int | None = None) -> None:
        self._host.call(self._host.client.delete_topics, names, timeout_ms)

    def create_partitions(
        self, counts: Mapping[str, int], timeout_ms: int | None = None, validate_only: bool = False
    ) -> None:
        self._host.call(self._host.client.create_partitions, counts, timeout_ms, validate_only)

    def alter_topic_configs(
        self,
        topic: str,
        set: Mapping[str, str] | None = None,
        delete: Sequence[str] = (),
        replace: bool = False,
    ) -> None:
        self._host.call(self._host.client.alter_topic_configs, topic, set, delete, replace)

    def delete_records(
        self, before: Mapping[TopicPartition, int], timeout_ms: int | None = None
    ) -> dict[TopicPartition, int]:
        return self._host.call(self._host.client.delete_records, before, timeout_ms)

    def list_topics(self) -> list[str]:
        return self._host.call(self._host.client.list_topics)

    def set_user_password(
        self,
        name: str,
        password: str,
        mechanisms: Sequence[str] = ("SCRAM-SHA-256", "SCRAM-SHA-512"),
    ) -> None:
        self._host.call(self._host.client.set_user_password, name, password, mechanisms)

    def delete_user(self, name: str) -> None:
        self._host.call(self._host.client.delete_user, name)

    def describe_users(
        self, names: Sequence[str] | None = None
    ) -> dict[str, list[tuple[str, int]]]:
        return self._host.call(self._host.client.describe_users, names)

    def create_acls(self, bindings: Sequence[AclBinding]) -> None:
        self._host.call(self._host.client.create_acls, bindings)

    def delete_acls(self, filters: Sequence[AclFilter]) -> list[AclBinding]:
        return self._host.call(self._host.client.delete_acls, filters)

    def describe_acls(self, acl_filter: AclFilter | None = None) -> list[AclBinding]:
        return self._host.call(self._host.client.describe_acls, acl_filter)

    def describe_topics(self, names: Sequence[str] | None = None) -> list[TopicDescription]:
        return self._host.call(self._host.client.describe_topics, names)

    def describe_cluster(self) -> ClusterDescription:
        return self._host.call(self._host.client.describe_cluster)

    def list_groups(self) -> list[gm.GroupListing]:
        return self._host.call(self._host.client.list_groups)

    def delete_group_offsets(
        self, group_id: str, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, BrokerError | None]:
        return self._host.call(self._host.client.delete_group_offsets, group_id, partitions)

    def delete_groups(self, group_ids: Sequence[str]) -> dict[str, BrokerError | None]:
        return self._host.call(self._host.client.delete_groups, group_ids)

    def describe_group(self, group_id: str) -> gm.GroupDescription:
        return self._host.call(self._host.client.describe_group, group_id)

    def group_offsets(self, group_id: str) -> dict[TopicPartition, int]:
        return self._host.call(self._host.client.group_offsets, group_id)

    def set_group_offsets(self, group_id: str, offsets: dict[TopicPartition, int]) -> None:
        self._host.call(self._host.client.set_group_offsets, group_id, offsets)


class BlockingRangeReader(_Blocking[RangeReader]):
    """``RangeReader`` for blocking code: iterate it for the range's chunks and gaps (the
    reader fetches ahead in its thread while the caller handles the current chunk)."""

    def __init__(
        self, bootstrap: str, tp: TopicPartition, start: int, end: int, **options: Any
    ) -> None:
        self._host = ThreadHost(
            lambda: RangeReader(bootstrap, tp, start, end, **options), "rillet-range-reader"
        )

    def __iter__(self) -> Iterator[RangeChunk | RangeGap]:
        reader = self._host.client
        while (item := self._host.call(reader.next)) is not None:
            yield item
