"""Malformed and fuzzed frames against a real node: it answers or drops that one connection,
keeps serving other clients, and stored data is untouched."""

from __future__ import annotations

import random
import socket
import struct
import time

import cbor2
import pytest
import trio
from node_process import NodeProcess

from rillet.client import Admin, Consumer, NewTopic, Producer, TopicPartition
from rillet.wire.batch import build_batch
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import FrameDecoder
from rillet.wire.messages import ProducePartitionData, ProduceRequest
from rillet.wire.protocol import encode_request

pytestmark = pytest.mark.integration

SEED = 20261122


def frame_of(parts: list) -> bytes:  # type: ignore[type-arg]
    return b"".join(bytes(p) for p in parts)


def valid_produce_frame(topic: str, cid: int) -> bytes:
    batch = build_batch([(int(time.time() * 1000), b"k", b"fuzz-value", None)])
    req = ProduceRequest(
        acks=1, timeout_ms=1000, partitions=[ProducePartitionData(topic, 0, batch)]
    )
    return frame_of(encode_request(cid, req))


def mutate(frame: bytes, rng: random.Random) -> bytes:
    data = bytearray(frame)
    kind = rng.randrange(5)
    if kind == 0:  # flip bits anywhere after the length prefix
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(4, len(data))
            data[i] ^= 1 << rng.randrange(8)
    elif kind == 1:  # truncate the body but keep a consistent length prefix
        cut = rng.randrange(5, len(data))
        data = bytearray(struct.pack(">I", cut - 4)) + data[4:cut]
    elif kind == 2:  # splice random bytes into the body, fix the length
        i = rng.randrange(4, len(data))
        data = data[:i] + rng.randbytes(rng.randint(1, 32)) + data[i:]
        struct.pack_into(">I", data, 0, len(data) - 4)
    elif kind == 3:  # random body
        body = rng.randbytes(rng.randint(0, 200))
        data = bytearray(struct.pack(">I", len(body))) + body
    else:  # CBOR header with wrong field types
        header = {
            "api": 0,
            "version": 0,
            "correlation_id": 9,
            "body": {"acks": "one", "timeout_ms": [], "partitions": {"x": 1}},
        }
        body = cbor2.dumps(header)
        data = bytearray(struct.pack(">I", len(body))) + body
    return bytes(data)


def send_and_read(port: int, payload: bytes, timeout_s: float = 2.0) -> list[dict]:  # type: ignore[type-arg]
    """Send raw bytes, return the response headers read until the node closes or goes quiet."""
    headers = []
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as s:
        s.sendall(payload)
        s.shutdown(socket.SHUT_WR)
        decoder = FrameDecoder()
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                decoder.feed(chunk)
                while (frame := decoder.next_frame()) is not None:
                    headers.append(frame.header)
        except (TimeoutError, ConnectionResetError):
            pass
    return headers


async def test_specific_bad_frames_get_typed_answers(node: NodeProcess) -> None:
    async with Admin(node.bootstrap) as admin:
        await admin.create_topics([NewTopic("t", 1)])
    port = node.port
    assert port is not None
    # 1. readable header, body of the wrong shape -> INVALID_REQUEST, connection stays usable
    bad = cbor2.dumps({"api": 0, "version": 0, "correlation_id": 5, "body": {"acks": "x"}})
    good = valid_produce_frame("t", 6)
    answers = await trio.to_thread.run_sync(
        send_and_read, port, struct.pack(">I", len(bad)) + bad + good
    )
    assert [(h["correlation_id"], h["error_code"]) for h in answers] == [
        (5, ErrorCode.INVALID_REQUEST),
        (6, 0),
    ]
    # 2. unknown api -> INVALID_REQUEST with the correlation id
    unk = cbor2.dumps({"api": 4242, "version": 0, "correlation_id": 7, "body": {}})
    answers = await trio.to_thread.run_sync(send_and_read, port, struct.pack(">I", len(unk)) + unk)
    assert answers[0]["correlation_id"] == 7 and answers[0]["error_code"] != 0
    # 3. oversized length prefix -> connection closed without an answer
    answers = await trio.to_thread.run_sync(send_and_read, port, struct.pack(">I", 2**31) + b"x")
    assert answers == []
    # 4. a batch with a bad CRC -> CORRUPT_MESSAGE for that partition, nothing appended
    frame = bytearray(valid_produce_frame("t", 8))
    frame[-3] ^= 0xFF  # inside the record payload, covered by the CRC
    answers = await trio.to_thread.run_sync(send_and_read, port, bytes(frame))
    body = answers[0]["body"]
    assert body["partitions"][0]["error_code"] == ErrorCode.CORRUPT_MESSAGE
    tp = TopicPartition("t", 0)
    async with Consumer(node.bootstrap) as consumer:
        assert (await consumer.end_offsets([tp]))[tp] == 1  # only the good produce from step 1


async def test_fuzzed_frames_leave_node_serving_and_data_intact(node: NodeProcess) -> None:
    rng = random.Random(SEED)
    topic = "precious"
    async with Admin(node.bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, 1), NewTopic("t", 1)])
    async with Producer(node.bootstrap, acks="all") as producer:
        for i in range(500):
            await producer.send(topic, f"before-{i}".encode(), partition=0)
        await producer.flush()

    port = node.port
    assert port is not None
    base = valid_produce_frame("t", 1)

    async def fuzz() -> None:
        for _ in range(300):
            payload = mutate(base, rng)
            await trio.to_thread.run_sync(send_and_read, port, payload, 0.5)

    async def keep_serving() -> None:
        async with Producer(node.bootstrap, acks="all") as producer:
            for i in range(500):
                md = await (await producer.send(topic, f"during-{i}".encode(), partition=0))
                assert md.offset == 500 + i

    async with trio.open_nursery() as nursery:
        nursery.start_soon(fuzz)
        nursery.start_soon(keep_serving)

    assert node.alive()
    tp = TopicPartition(topic, 0)
    async with Consumer(node.bootstrap, fetch_max_wait_ms=50) as consumer:
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        values = []
        with trio.fail_after(20):
            while len(values) < 1000:
                values.extend(r.value for r in await consumer.poll(timeout_ms=200))
    assert values == [f"before-{i}".encode() for i in range(500)] + [
        f"during-{i}".encode() for i in range(500)
    ]
