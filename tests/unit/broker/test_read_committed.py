"""read_committed fetches: up to the last stable offset, with the aborted transactions of the
range — through the fetch handler on real replicas and files, and Kafka's FetchResponse as
kio encodes it."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing
from broker_context import NODE_ID, middle
from kafka.protocol.consumer import FetchRequest as KafkaFetchRequest
from kafka.protocol.consumer import FetchResponse as KafkaFetchResponse
from kafka_front_end import forwarded

from rillet.broker.handlers.fetch import handle_fetch
from rillet.broker.kafka.fetch_response import FetchedPartition, encode_fetch_body
from rillet.wire.batch import build_batch, decode_records, iter_batches
from rillet.wire.control_batch import ControlType, Marker, is_control, mark_transactional
from rillet.wire.messages import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    AbortedTransaction,
    FetchPartition,
    FetchRequest,
)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
T0 = 1_700_000_000_000
P1, P2 = 11, 22


def _txn_batch(pid: int, sequence: int, value: bytes) -> bytes:
    return mark_transactional(
        build_batch(
            [(T0, None, value, None)], producer_id=pid, producer_epoch=0, base_sequence=sequence
        )
    )


async def test_read_committed_stops_at_the_lso_and_names_the_aborted_transactions(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    replica = m.host("t", 0, isr=(NODE_ID,), replicas=(NODE_ID,))
    replica.append_as_leader(_txn_batch(P1, 0, b"aborted"), T0)  # 0
    replica.append_as_leader(_txn_batch(P2, 0, b"committed"), T0)  # 1
    replica.append_marker_as_leader(Marker(P1, 0, ControlType.ABORT, 0), T0)  # 2
    replica.append_marker_as_leader(Marker(P2, 0, ControlType.COMMIT, 0), T0)  # 3
    replica.append_as_leader(_txn_batch(P1, 1, b"open"), T0)  # 4, left open
    assert replica.high_watermark == 5

    async def fetch(isolation: int) -> tuple[int, int, list[AbortedTransaction], list[bytes]]:
        request = FetchRequest(
            0, 1, 1 << 20, [FetchPartition("t", 0, 0, 1 << 20)], isolation_level=isolation
        )
        (p,) = (await handle_fetch(m.ctx, request)).partitions
        data = (
            bytes(p.records)
            if isinstance(p.records, bytes | memoryview)
            else (__import__("os").pread(p.records.fd, p.records.length, p.records.position))
        )
        values = [
            r.value or b""
            for v in iter_batches(data, 1 << 20)
            if not is_control(v.header)
            for r in decode_records(data, v.position)
        ]
        return p.high_watermark, p.last_stable_offset, p.aborted_transactions, values

    assert await fetch(READ_COMMITTED) == (
        5,
        4,
        [AbortedTransaction(P1, 0)],
        [b"aborted", b"committed"],
    )
    assert await fetch(READ_UNCOMMITTED) == (5, 4, [], [b"aborted", b"committed", b"open"])


def test_the_isolation_level_reaches_the_native_fetch() -> None:
    r = KafkaFetchRequest
    request = r(
        replica_id=-1,
        max_wait_ms=1,
        min_bytes=1,
        max_bytes=100,
        isolation_level=1,
        topics=[
            r.FetchTopic(
                topic="t",
                partitions=[
                    r.FetchTopic.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=9)
                ],
            )
        ],
    )
    _schema, action = forwarded(request, 4)
    assert action.native.isolation_level == READ_COMMITTED


def test_the_lso_and_aborted_transactions_reach_kafka_python_s_decoder() -> None:
    for version in range(4, 12):
        parts = [FetchedPartition(0, 0, 10, 2, b"", 7, [(P1, 3), (P2, 5)])]
        body = b"".join(bytes(p) for p in encode_fetch_body(version, [("t", parts)]))
        decoded = KafkaFetchResponse.decode(body, version=version)
        ((topic, (partition,)),) = [(t.topic, t.partitions) for t in decoded.responses]
        assert (topic, partition.high_watermark, partition.last_stable_offset) == ("t", 10, 7)
        aborted = [(a.producer_id, a.first_offset) for a in partition.aborted_transactions]
        assert aborted == [(P1, 3), (P2, 5)], version
