"""A small in-process fake cluster for client unit tests: real loopback TCP, real frames.

Each fake node is a trio TCP server speaking the wire protocol; all nodes share one state
(topics, logs, leaders), so tests can move a leader, inject per-partition errors, or hold
back answers, and see how the clients react. It implements just enough of each api for the
clients: no replication, no disk, whole batches stored as the producer sent them.
"""

from __future__ import annotations

import re
import struct
import threading
from collections import defaultdict, deque
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import trio

from rillet.wire.api import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, ApiKey
from rillet.wire.batch import decode_records, iter_batches
from rillet.wire.error_codes import ErrorCode
from rillet.wire.errors import WireError
from rillet.wire.frame import FileRegion, FrameDecoder
from rillet.wire.messages import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    BrokerInfo,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    FetchPartitionResponse,
    FetchRequest,
    FetchResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    MetadataRequest,
    MetadataResponse,
    PartitionMetadata,
    ProducePartitionResponse,
    ProduceRequest,
    ProduceResponse,
    TopicMetadata,
    TopicResult,
)
from rillet.wire.protocol import decode_request, encode_error_response, encode_response

TP = tuple[str, int]
_NAME = re.compile(r"^[A-Za-z0-9._-]{1,249}$")


@dataclass
class FakeLog:
    batches: list[bytearray] = field(default_factory=list)
    # Idempotent producers, as a node keeps them: producer id -> its last 5 batches'
    # (first sequence, base offset), oldest first; the next sequence is after the last.
    producers: dict[int, deque[tuple[int, int, int]]] = field(default_factory=dict)
    start_offset: int = 0
    end_offset: int = 0
    epoch: int = 0


class FakeCluster:
    """``await start(nursery)`` serves ``num_nodes`` nodes on 127.0.0.1 ephemeral ports."""

    def __init__(self, num_nodes: int = 1) -> None:
        self.num_nodes = num_nodes
        self.ports: dict[int, int] = {}
        self.logs: dict[TP, FakeLog] = {}
        self.leaders: dict[TP, int] = {}
        self.topic_configs: dict[str, dict[str, str]] = {}
        self.max_batch_bytes = -1  # the nodes' limit for topics without their own (-1: unsaid)
        self.controller_id = 0
        self.errors: dict[tuple[str, TP], deque[ErrorCode]] = defaultdict(deque)
        self._producer_ids = 0
        self.requests: list[tuple[int, Any]] = []  # (node id, request) in arrival order
        # Produce requests (by arrival number, from 0) applied at once but answered only
        # once late_answers_sent is set: an answer overtaken by later ones.
        self.late_answers: set[int] = set()
        self.late_answers_sent = trio.Event()
        # When set, a late answer reports this code for each of its partitions although the
        # batches were written (as a node whose acks=all wait timed out after appending).
        self.late_error: ErrorCode | None = None
        self.hold = trio.Event()  # while produce_hold is True, produce waits for this
        self.produce_hold = False
        self.appended = trio.Event()
        self.accepted: dict[int, int] = defaultdict(int)  # connections per node
        self.arrived = trio.Event()  # set (and replaced) whenever a request arrives
        self.outstanding = 0  # requests being answered right now...
        self.max_outstanding = 0  # ...and the most there ever were
        self.unlisted: set[int] = set()  # nodes left out of Metadata answers (fenced ones)
        # Paused nodes (as by SIGSTOP): requests arrive and are recorded, never answered
        # until the node is resumed; their connections stay open.
        self.paused: set[int] = set()
        self.resumed = trio.Event()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.ports[0]}"

    async def start(self, nursery: trio.Nursery) -> None:
        for node_id in range(self.num_nodes):
            listeners = await nursery.start(
                partial(trio.serve_tcp, self._handler(node_id), 0, host="127.0.0.1")
            )
            self.ports[node_id] = listeners[0].socket.getsockname()[1]

    # -- test controls --------------------------------------------------------------------

    def create_topic(
        self, name: str, partitions: int, leader: int = 0, configs: dict[str, str] | None = None
    ) -> None:
        if configs:
            self.topic_configs[name] = dict(configs)
        for p in range(partitions):
            self.logs[(name, p)] = FakeLog()
            self.leaders[(name, p)] = leader

    def move_leader(self, tp: TP, node_id: int) -> None:
        self.leaders[tp] = node_id
        self.logs[tp].epoch += 1

    def resume(self, node_id: int) -> None:
        self.paused.discard(node_id)
        self.resumed.set()
        self.resumed = trio.Event()

    def inject(self, api: str, tp: TP, *codes: ErrorCode) -> None:
        """The next answers of ``api`` ("produce", "fetch", "list_offsets") for ``tp``."""
        self.errors[(api, tp)].extend(codes)

    def values(self, tp: TP) -> list[bytes | None]:
        return [r.value for b in self.logs[tp].batches for r in decode_records(b)]

    def of_type(self, request_type: type) -> list[tuple[int, Any]]:
        return [(n, r) for n, r in self.requests if isinstance(r, request_type)]

    async def wait_for(self, request_type: type, count: int) -> None:
        """Until at least ``count`` requests of ``request_type`` arrived (bound it yourself)."""
        while len(self.of_type(request_type)) < count:
            await self.arrived.wait()

    # -- serving --------------------------------------------------------------------------

    def _handler(self, node_id: int) -> Any:
        async def serve(stream: trio.SocketStream) -> None:
            self.accepted[node_id] += 1
            decoder = FrameDecoder()
            lock = trio.Lock()
            try:
                async with trio.open_nursery() as nursery:
                    while data := await stream.receive_some(1 << 20):
                        decoder.feed(data)
                        while (frame := decoder.next_frame()) is not None:
                            # Like a real node: requests are applied in arrival order, except
                            # that a long-polling fetch lets later requests overtake it.
                            if frame.header.get("api") == ApiKey.FETCH:
                                nursery.start_soon(self._answer, node_id, stream, lock, frame)
                            else:
                                await self._answer(node_id, stream, lock, frame, nursery)
            except* (trio.BrokenResourceError, trio.ClosedResourceError):
                pass  # the client went away (tests close clients with requests pending)

        return serve

    async def _answer(
        self,
        node_id: int,
        stream: trio.SocketStream,
        lock: trio.Lock,
        frame: Any,
        nursery: trio.Nursery | None = None,
    ) -> None:
        try:
            header, request = decode_request(frame)
        except WireError as exc:
            cid = getattr(exc, "correlation_id", None) or 0
            parts = encode_error_response(cid, ErrorCode.INVALID_REQUEST, str(exc))
        else:
            self.requests.append((node_id, request))
            late = isinstance(request, ProduceRequest) and (
                len(self.of_type(ProduceRequest)) - 1 in self.late_answers
            )
            self.arrived.set()
            self.arrived = trio.Event()
            while node_id in self.paused:
                await self.resumed.wait()
            self.outstanding += 1
            self.max_outstanding = max(self.max_outstanding, self.outstanding)
            try:
                response = await self._handle(node_id, request)
            finally:
                self.outstanding -= 1
            if response is None:
                return  # acks=0
            if isinstance(response, ErrorCode):
                parts = encode_error_response(header.correlation_id, response, "top-level")
            else:
                parts = encode_response(header.correlation_id, response)
            if late and nursery is not None:
                if self.late_error is not None and isinstance(response, ProduceResponse):
                    parts = encode_response(
                        header.correlation_id,
                        ProduceResponse(
                            [
                                ProducePartitionResponse(r.topic, r.partition, self.late_error)
                                for r in response.partitions
                            ]
                        ),
                    )
                nursery.start_soon(self._send_late, stream, lock, parts)
                return
        await self._send(stream, lock, parts)

    async def _send_late(self, stream: trio.SocketStream, lock: trio.Lock, parts: Any) -> None:
        await self.late_answers_sent.wait()
        await self._send(stream, lock, parts)

    async def _send(self, stream: trio.SocketStream, lock: trio.Lock, parts: Any) -> None:
        async with lock:
            await stream.send_all(b"".join(p for p in parts if not isinstance(p, FileRegion)))

    async def _handle(self, node: int, req: Any) -> Any:
        if isinstance(req, MetadataRequest):
            return self._metadata(req)
        if isinstance(req, ProduceRequest):
            return await self._produce(node, req)
        if isinstance(req, FetchRequest):
            return await self._fetch(node, req)
        if isinstance(req, ListOffsetsRequest):
            return self._list_offsets(node, req)
        if isinstance(req, CreateTopicsRequest):
            return self._create(node, req)
        if isinstance(req, DeleteTopicsRequest):
            return self._delete(node, req)
        if isinstance(req, ApiVersionsRequest):
            return ApiVersionsResponse([])  # a control connection's first request
        if isinstance(req, InitProducerIdRequest):
            self._producer_ids += 1  # ids only: this fake does not deduplicate retries
            return InitProducerIdResponse(ErrorCode.NONE, self._producer_ids, 0)
        return ErrorCode.UNKNOWN_API

    def _injected(self, api: str, tp: TP) -> ErrorCode | None:
        queue = self.errors.get((api, tp))
        return queue.popleft() if queue else None

    def _metadata(self, req: MetadataRequest) -> MetadataResponse:
        names = sorted({t for t, _ in self.logs}) if req.topics is None else req.topics
        topics = []
        for name in names:
            parts = sorted(p for t, p in self.logs if t == name)
            if not parts:
                topics.append(TopicMetadata(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []))
                continue
            meta = []
            for p in parts:
                leader, epoch = self.leaders[(name, p)], self.logs[(name, p)].epoch
                meta.append(PartitionMetadata(p, leader, epoch, [leader], [leader]))
            topics.append(
                TopicMetadata(name, ErrorCode.NONE, meta, self.topic_configs.get(name, {}))
            )
        brokers = [
            BrokerInfo(n, "127.0.0.1", port)
            for n, port in self.ports.items()
            if n not in self.unlisted
        ]
        return MetadataResponse(
            "fake", self.controller_id, brokers, topics, max_batch_bytes=self.max_batch_bytes
        )

    def _check(self, api: str, node: int, tp: TP) -> ErrorCode:
        if tp not in self.logs:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if self.leaders[tp] != node:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        return self._injected(api, tp) or ErrorCode.NONE

    async def _produce(self, node: int, req: ProduceRequest) -> ProduceResponse | None:
        if self.produce_hold:
            await self.hold.wait()
        out = []
        for p in req.partitions:
            tp = (p.topic, p.partition)
            code = self._check("produce", node, tp)
            if code != ErrorCode.NONE:
                out.append(ProducePartitionResponse(p.topic, p.partition, code))
                continue
            log = self.logs[tp]
            base = log.end_offset
            data = bytes(p.records)
            sequenced = _sequence_check(log, data)
            if sequenced is not None:  # a duplicate (its first offset) or a gap (-1)
                code = ErrorCode.NONE if sequenced >= 0 else ErrorCode.OUT_OF_ORDER_SEQUENCE
                out.append(ProducePartitionResponse(p.topic, p.partition, code, sequenced))
                continue
            for view in iter_batches(data, 1 << 30):
                batch = bytearray(data[view.position : view.position + view.header.size])
                struct.pack_into(">q", batch, 0, log.end_offset)
                log.batches.append(batch)
                log.end_offset += view.header.record_count
            out.append(ProducePartitionResponse(p.topic, p.partition, ErrorCode.NONE, base))
        self.appended.set()
        self.appended = trio.Event()
        return ProduceResponse(out) if req.acks != 0 else None

    async def _fetch(self, node: int, req: FetchRequest) -> FetchResponse:
        with trio.move_on_after(req.max_wait_ms / 1000):
            while not any(
                (p.topic, p.partition) in self.logs
                and self.logs[(p.topic, p.partition)].end_offset > p.fetch_offset
                for p in req.partitions
            ):
                await self.appended.wait()
        out = []
        for p in req.partitions:
            tp = (p.topic, p.partition)
            code = self._check("fetch", node, tp)
            log = self.logs.get(tp)
            if (
                code == ErrorCode.NONE
                and log is not None
                and not (log.start_offset <= p.fetch_offset <= log.end_offset)
            ):
                code = ErrorCode.OFFSET_OUT_OF_RANGE
            if code != ErrorCode.NONE or log is None:
                out.append(FetchPartitionResponse(p.topic, p.partition, code, -1, -1, b""))
                continue
            data = bytearray()
            for batch in log.batches:
                base = struct.unpack_from(">q", batch)[0]
                count = struct.unpack_from(">i", batch, 57)[0]
                if base + count <= p.fetch_offset:
                    continue
                if data and len(data) + len(batch) > p.partition_max_bytes:
                    break
                data += batch
            hw = log.end_offset
            out.append(
                FetchPartitionResponse(p.topic, p.partition, 0, hw, log.start_offset, bytes(data))
            )
        return FetchResponse(out)

    def _list_offsets(self, node: int, req: ListOffsetsRequest) -> ListOffsetsResponse:
        out = []
        for p in req.partitions:
            tp = (p.topic, p.partition)
            code = self._check("list_offsets", node, tp)
            if code != ErrorCode.NONE:
                out.append(ListOffsetsPartitionResponse(p.topic, p.partition, code))
                continue
            log = self.logs[tp]
            if p.timestamp == EARLIEST_TIMESTAMP:
                offset, ts = log.start_offset, -1
            elif p.timestamp == LATEST_TIMESTAMP:
                offset, ts = log.end_offset, -1
            else:
                found = [
                    (r.offset, r.timestamp_ms)
                    for b in log.batches
                    for r in decode_records(b)
                    if r.timestamp_ms >= p.timestamp
                ]
                offset, ts = found[0] if found else (-1, -1)
            out.append(ListOffsetsPartitionResponse(p.topic, p.partition, 0, offset, ts))
        return ListOffsetsResponse(out)

    def _create(self, node: int, req: CreateTopicsRequest) -> CreateTopicsResponse:
        out = []
        for t in req.topics:
            if node != self.controller_id:
                code = ErrorCode.NOT_CONTROLLER
            elif not _NAME.match(t.name):
                code = ErrorCode.INVALID_TOPIC
            elif any(name == t.name for name, _ in self.logs):
                code = ErrorCode.TOPIC_ALREADY_EXISTS
            elif t.num_partitions == 0 or t.num_partitions < -1:
                code = ErrorCode.INVALID_PARTITIONS
            else:
                code = ErrorCode.NONE
                if not req.validate_only:
                    self.create_topic(t.name, max(t.num_partitions, 1))
            out.append(TopicResult(t.name, code, None if code == 0 else code.name.lower()))
        return CreateTopicsResponse(out)

    def _delete(self, node: int, req: DeleteTopicsRequest) -> DeleteTopicsResponse:
        out = []
        for name in req.topics:
            tps = [tp for tp in self.logs if tp[0] == name]
            if node != self.controller_id:
                out.append(TopicResult(name, ErrorCode.NOT_CONTROLLER))
            elif not tps:
                out.append(TopicResult(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            else:
                for tp in tps:
                    del self.logs[tp], self.leaders[tp]
                out.append(TopicResult(name, ErrorCode.NONE))
        return DeleteTopicsResponse(out)


class FakeClusterThread:
    """A FakeCluster served by ``trio.run`` in a thread, for tests of the blocking facade."""

    def __init__(self, num_nodes: int = 1) -> None:
        self.cluster = FakeCluster(num_nodes)
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._stop: trio.Event | None = None
        self._thread = threading.Thread(target=trio.run, args=(self._main,), daemon=True)

    async def _main(self) -> None:
        self._stop = trio.Event()
        async with trio.open_nursery() as nursery:
            await self.cluster.start(nursery)
            self._token = trio.lowlevel.current_trio_token()
            self._ready.set()
            await self._stop.wait()
            nursery.cancel_scope.cancel()

    def call(self, fn: Any, *args: Any) -> Any:
        """Run ``fn(*args)`` in the cluster's thread (its state is not thread-safe)."""
        return trio.from_thread.run_sync(fn, *args, trio_token=self._token)

    def __enter__(self) -> FakeClusterThread:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake cluster did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._stop is not None
        trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
        self._thread.join(10)


def _sequence_check(log: FakeLog, data: bytes) -> int | None:
    """A node's idempotence check of one batch: None to append it (and remember it), the
    first offset of the same batch written before (a retry), or -1 for a batch that does not
    follow the producer's last one (OUT_OF_ORDER_SEQUENCE)."""
    views = list(iter_batches(data, 1 << 30))
    if len(views) != 1 or views[0].header.producer_id < 0:
        return None
    h = views[0].header
    recent = log.producers.setdefault(h.producer_id, deque(maxlen=5))
    for first, count, offset in recent:
        if first == h.base_sequence and count == h.record_count:
            return offset
    # A producer the log has no batch of is taken at any sequence, as a node does (its
    # first batch there, or a new leader that never saw one): the reason an idempotent
    # producer pipelines a partition only after its leader acknowledged a batch.
    if recent and h.base_sequence != recent[-1][0] + recent[-1][1]:
        return -1
    recent.append((h.base_sequence, h.record_count, log.end_offset))
    return None
