"""Blocking facade over the trio clients, for scripts, notebooks and Spark executors.

Each facade owns one background thread running ``trio.run``; the async client lives inside it
for its whole life (so its nursery is entered and left by the same task) and every method
crosses over with ``trio.from_thread``. ``close()`` (or the end of the ``with`` block) closes
the client (a producer flushes) and joins the thread.

Misuse fails loudly: a blocking client cannot be created or called from inside a trio run
(it would block the event loop its own calls need; use the async clients there), nor used
after ``close()``.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

import trio

from rillet.client.accumulator import RecordFuture
from rillet.client.admin import Admin
from rillet.client.consumer import Consumer
from rillet.client.errors import BrokerError, ClientClosedError, ClientTimeoutError, RilletError
from rillet.client.lifecycle import ClientLifecycle
from rillet.client.producer import Producer
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

T = TypeVar("T")
C = TypeVar("C", bound=ClientLifecycle)
START_TIMEOUT_S = 60.0


def _refuse_inside_trio(what: str) -> None:
    try:
        trio.lowlevel.current_trio_token()
    except RuntimeError:
        return
    raise RilletError(f"{what}: blocking clients cannot be used inside trio; use the async clients")


class _Host(Generic[C]):
    """Runs ``async with factory() as client`` in a private trio thread until closed."""

    def __init__(self, factory: Callable[[], C], name: str) -> None:
        _refuse_inside_trio(name)
        self._factory = factory
        self._name = name
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._stop: trio.Event | None = None
        self._client: C | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S):
            raise ClientTimeoutError(f"{name} did not start within {START_TIMEOUT_S}s")
        self._raise_error()

    def _raise_error(self) -> None:
        """Raise (once) what the client's thread failed with."""
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _main(self) -> None:
        try:
            trio.run(self._serve)
        except BaseException as exc:
            self._error = exc
        finally:
            self._token = None
            self._ready.set()

    async def _serve(self) -> None:
        self._stop = trio.Event()
        async with self._factory() as client:
            self._client = client
            self._token = trio.lowlevel.current_trio_token()
            self._ready.set()
            await self._stop.wait()

    @property
    def client(self) -> C:
        if self._client is None or self._token is None:
            raise ClientClosedError(f"{self._name} is closed")
        return self._client

    def call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run ``await fn(*args)`` in the client's thread and return its result."""
        _refuse_inside_trio(self._name)
        token = self._token
        if token is None:
            raise ClientClosedError(f"{self._name} is closed") from self._error
        try:
            return trio.from_thread.run(fn, *args, trio_token=token)
        except trio.RunFinishedError:
            raise ClientClosedError(f"{self._name} stopped") from self._error

    def call_sync(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` in the client's thread and return its result."""
        _refuse_inside_trio(self._name)
        token = self._token
        if token is None:
            raise ClientClosedError(f"{self._name} is closed") from self._error
        try:
            return trio.from_thread.run_sync(fn, *args, trio_token=token)
        except trio.RunFinishedError:
            raise ClientClosedError(f"{self._name} stopped") from self._error

    def close(self) -> None:
        """Close the client and join its thread; raises what the closing raised (if any)."""
        token, stop = self._token, self._stop
        if token is not None and stop is not None:
            _refuse_inside_trio(self._name)
            try:
                trio.from_thread.run_sync(stop.set, trio_token=token)
            except trio.RunFinishedError:
                pass
        self._thread.join()
        self._raise_error()


class _Blocking(Generic[C]):
    _host: _Host[C]

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
        self._host = _Host(lambda: Producer(bootstrap, **options), "rillet-producer")

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


class BlockingConsumer(_Blocking[Consumer]):
    """``Consumer`` with plain methods."""

    def __init__(self, bootstrap: str, **options: Any) -> None:
        self._host = _Host(lambda: Consumer(bootstrap, **options), "rillet-consumer")

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
        self._host = _Host(lambda: Admin(bootstrap, **options), "rillet-admin")

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

    def delete_groups(self, group_ids: Sequence[str]) -> dict[str, BrokerError | None]:
        return self._host.call(self._host.client.delete_groups, group_ids)

    def describe_group(self, group_id: str) -> gm.GroupDescription:
        return self._host.call(self._host.client.describe_group, group_id)

    def group_offsets(self, group_id: str) -> dict[TopicPartition, int]:
        return self._host.call(self._host.client.group_offsets, group_id)

    def set_group_offsets(self, group_id: str, offsets: dict[TopicPartition, int]) -> None:
        self._host.call(self._host.client.set_group_offsets, group_id, offsets)
