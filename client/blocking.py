"""Blocking facade over the trio clients, for scripts and Spark executors.

Each facade owns one background thread running ``trio.run``; the async client lives inside
it for its whole life (so its nursery is entered and exited by the same task), and calls
cross over with ``trio.from_thread``. ``close()`` (or the ``with`` block) stops the thread.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Generic, TypeVar

import trio

from rillet.client.accumulator import RecordFuture
from rillet.client.admin import Admin
from rillet.client.consumer import Consumer
from rillet.client.errors import RilletError
from rillet.client.producer import Producer
from rillet.client.types import (
    ConsumerRecord,
    NewTopic,
    OffsetAndTimestamp,
    RecordMetadata,
    TopicDescription,
    TopicPartition,
)
from rillet.wire.record_codec import HeaderPairs

T = TypeVar("T")
C = TypeVar("C")
_START_TIMEOUT_S = 60.0


class _Host(Generic[C]):
    """Runs ``async with factory() as client`` in a private trio thread."""

    def __init__(self, factory: Callable[[], Any], name: str) -> None:
        try:
            trio.lowlevel.current_trio_token()
        except RuntimeError:
            pass
        else:
            raise RilletError("blocking clients cannot be used inside trio; use the async ones")
        self._factory = factory
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._stop: trio.Event | None = None
        self._client: C | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()
        if not self._ready.wait(_START_TIMEOUT_S):
            raise RilletError(f"{name} did not start in {_START_TIMEOUT_S}s")
        if self._error is not None:
            raise self._error

    def _main(self) -> None:
        try:
            trio.run(self._serve)
        except BaseException as exc:
            self._error = exc
        finally:
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
            raise RilletError("client is closed")
        return self._client

    def call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        if self._token is None:
            raise RilletError("client is closed")
        return trio.from_thread.run(fn, *args, trio_token=self._token)

    def call_sync(self, fn: Callable[..., T], *args: Any) -> T:
        if self._token is None:
            raise RilletError("client is closed")
        return trio.from_thread.run_sync(fn, *args, trio_token=self._token)

    def close(self) -> None:
        if self._token is not None and self._stop is not None:
            try:
                trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
            except trio.RunFinishedError:
                pass
            self._thread.join()
            self._token = None
        if self._error is not None:
            raise self._error


class _Blocking:
    _host: _Host[Any]

    def close(self) -> None:
        self._host.close()

    def __enter__(self: T) -> T:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class BlockingProducer(_Blocking):
    def __init__(self, bootstrap: str, **options: Any) -> None:
        self._host: _Host[Producer] = _Host(
            lambda: Producer(bootstrap, **options), "rillet-producer"
        )

    def send(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        headers: HeaderPairs | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
    ) -> concurrent.futures.Future[RecordMetadata]:
        """Queue a record; the returned future resolves when it is acknowledged."""
        producer = self._host.client
        future: concurrent.futures.Future[RecordMetadata] = concurrent.futures.Future()

        async def send() -> RecordFuture:
            return await producer.send(topic, value, key, headers, partition, timestamp_ms)

        record_future = self._host.call(send)

        def resolve(done: RecordFuture) -> None:
            try:
                future.set_result(done.result())
            except BaseException as exc:
                future.set_exception(exc)

        self._host.call_sync(record_future.add_done_callback, resolve)
        return future

    def flush(self) -> None:
        self._host.call(self._host.client.flush)


class BlockingConsumer(_Blocking):
    def __init__(self, bootstrap: str, **options: Any) -> None:
        self._host: _Host[Consumer] = _Host(
            lambda: Consumer(bootstrap, **options), "rillet-consumer"
        )

    def assign(self, partitions: list[TopicPartition]) -> None:
        self._host.call_sync(self._host.client.assign, partitions)

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self._host.call_sync(self._host.client.seek, tp, offset)

    def seek_to_beginning(self, *tps: TopicPartition) -> None:
        self._host.call(self._host.client.seek_to_beginning, *tps)

    def seek_to_end(self, *tps: TopicPartition) -> None:
        self._host.call(self._host.client.seek_to_end, *tps)

    def position(self, tp: TopicPartition) -> int:
        return self._host.call(self._host.client.position, tp)

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


class BlockingAdmin(_Blocking):
    def __init__(self, bootstrap: str, **options: Any) -> None:
        self._host: _Host[Admin] = _Host(lambda: Admin(bootstrap, **options), "rillet-admin")

    def create_topics(self, topics: list[NewTopic], validate_only: bool = False) -> None:
        self._host.call(self._host.client.create_topics, topics, validate_only)

    def delete_topics(self, names: list[str]) -> None:
        self._host.call(self._host.client.delete_topics, names)

    def list_topics(self) -> list[str]:
        return self._host.call(self._host.client.list_topics)

    def describe_topics(self, names: list[str] | None = None) -> list[TopicDescription]:
        return self._host.call(self._host.client.describe_topics, names)
