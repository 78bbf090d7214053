"""Client clocks against a real node (issue 16): a producer stamping 1970 or next year is
refused with InvalidTimestampError; a LogAppendTime topic reports the node's append time."""

from __future__ import annotations

import time

import pytest
import trio
from node_process import NodeProcess

from rillet.client import Admin, Consumer, NewTopic, Producer, TopicPartition
from rillet.client.errors import InvalidTimestampError

pytestmark = pytest.mark.integration
YEAR_MS = 365 * 24 * 3600 * 1000


async def test_stamps_far_from_the_node_clock_are_refused(node: NodeProcess) -> None:
    async with Admin(node.bootstrap) as admin:
        await admin.create_topics([NewTopic("clocks", 1)])
    now_ms = int(time.time() * 1000)
    async with Producer(node.bootstrap, acks="all", linger_ms=0) as producer:
        for wrong in (0, now_ms + YEAR_MS):
            with pytest.raises(InvalidTimestampError, match=r"message\.timestamp"):
                await (await producer.send("clocks", b"x", timestamp_ms=wrong))
        ok = await (await producer.send("clocks", b"fine", timestamp_ms=now_ms))
    assert ok.offset == 0  # nothing of the refused batches was written


async def test_log_append_time_replaces_the_producer_clock(node: NodeProcess) -> None:
    async with Admin(node.bootstrap) as admin:
        await admin.create_topics(
            [NewTopic("appended", 1, configs={"message.timestamp.type": "LogAppendTime"})]
        )
    before = int(time.time() * 1000)
    async with Producer(node.bootstrap, acks="all", linger_ms=0) as producer:
        acked = await (await producer.send("appended", b"v", timestamp_ms=0))  # 1970: ignored
    after = int(time.time() * 1000)
    assert before - 1000 <= acked.timestamp_ms <= after + 1000
    tp = TopicPartition("appended", 0)
    async with Consumer(node.bootstrap) as consumer:
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        with trio.fail_after(10):
            records = []
            while not records:
                records.extend(await consumer.poll(timeout_ms=200))
    assert [(r.value, r.timestamp_ms) for r in records] == [(b"v", acked.timestamp_ms)]
