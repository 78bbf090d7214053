"""A batch pipelined behind one this node refused gets the same retriable answer, never
OUT_OF_ORDER_SEQUENCE (which makes librdkafka renumber records an earlier attempt wrote, and
write them twice): broker/replica/produce_refusals.py, on real replicas and files."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing
from broker_context import EPOCH_MS, NODE_ID, Middle, middle

from rillet.broker.dispatcher import Dispatcher
from rillet.broker.handlers.produce import handle_produce
from rillet.broker.replica.partition_replica import SEQUENCE_GAP_SETTLE_MS, PartitionReplica
from rillet.broker.replica.produce_refusals import (
    MAX_BATCHES_BEHIND,
    RETRIABLE_REFUSALS,
    BatchSpan,
    ProduceRefusals,
    span_of,
)
from rillet.broker.replica.replica_role import ReplicaRole
from rillet.broker.security.session import Session
from rillet.wire.api import ApiKey
from rillet.wire.batch import build_batch
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import ProducePartitionData, ProduceRequest, ProduceResponse
from rillet.wire.protocol import PROTOCOL_VERSION, RequestHeader

PID = 7
OTHER = 2


def _batch(first_sequence: int, count: int = 2, epoch: int = 0, pid: int = PID) -> bytes:
    return build_batch(
        [(EPOCH_MS, None, b"v", None)] * count,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=first_sequence,
    )


def _produce(m: Middle, records: bytes, refusals: ProduceRefusals | None) -> tuple[int, int]:
    """acks=1: (error code, base offset) of the one partition."""
    request = ProduceRequest(1, 30_000, [ProducePartitionData("t", 0, records)])
    result = handle_produce(m.ctx, request, refusals)
    assert isinstance(result, ProduceResponse)
    (p,) = result.partitions
    return p.error_code, p.base_offset


def _role(leader: int, epoch: int) -> ReplicaRole:
    return ReplicaRole(
        leader == NODE_ID, epoch, (NODE_ID, OTHER), NODE_ID, (NODE_ID, OTHER), 1, leader
    )


def _leadership_returns_between_two_pipelined_batches(
    tmp_path: Path, refusals: ProduceRefusals | None
) -> list[tuple[int, int]]:
    """R0 written; leadership leaves; R1 refused; leadership returns before R2 is read;
    then the client's retries of R1 and R2."""
    m = middle(tmp_path)
    replica = m.host("t", 0, isr=(NODE_ID, OTHER))
    answers = [_produce(m, _batch(0), refusals)]
    replica.set_role(_role(OTHER, 2), m.clock.now_ms())
    answers.append(_produce(m, _batch(2), refusals))  # R1
    replica.set_role(_role(NODE_ID, 3), m.clock.now_ms())
    answers.append(_produce(m, _batch(4), refusals))  # R2, pipelined behind R1
    answers.append(_produce(m, _batch(2), refusals))  # the retries, in order
    answers.append(_produce(m, _batch(4), refusals))
    return answers


async def test_a_batch_behind_a_refused_one_gets_the_same_refusal(tmp_path: Path) -> None:
    answers = _leadership_returns_between_two_pipelined_batches(tmp_path, ProduceRefusals())
    codes = [code for code, _ in answers]
    assert codes[1] in RETRIABLE_REFUSALS  # not the leader (this fixture's metadata is empty)
    assert codes == [ErrorCode.NONE, codes[1], codes[1], ErrorCode.NONE, ErrorCode.NONE]
    assert [offset for _, offset in answers[3:]] == [2, 4]


async def test_without_the_connection_s_refusals_the_new_leader_still_waits(
    tmp_path: Path,
) -> None:
    """On another connection (no refusal to repeat) the young leadership explains the gap:
    the producer has not written under it yet (broker.errors.SequenceGapAfterElection)."""
    answers = _leadership_returns_between_two_pipelined_batches(tmp_path, None)
    assert answers[2][0] == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert answers[3:] == [(ErrorCode.NONE, 2), (ErrorCode.NONE, 4)]


def _isr(m: Middle, replica: PartitionReplica, isr: tuple[int, ...], partition_epoch: int) -> None:
    role = ReplicaRole(True, 1, isr, NODE_ID, (NODE_ID, OTHER), partition_epoch, NODE_ID)
    replica.set_role(role, m.clock.now_ms())


async def _acks_all(m: Middle, records: bytes, refusals: ProduceRefusals | None) -> int:
    request = ProduceRequest(-1, 30_000, [ProducePartitionData("t", 0, records)])
    result = handle_produce(m.ctx, request, refusals)
    assert isinstance(result, ProduceResponse)  # refused: no wait
    return result.partitions[0].error_code


async def test_a_batch_behind_one_refused_for_too_few_replicas_waits_too(
    tmp_path: Path,
) -> None:
    """R1 refused while the ISR was below min.insync.replicas; the ISR is back when R2 is
    read: R2 gets R1's answer on that connection, OUT_OF_ORDER_SEQUENCE on another (a gap
    under a leadership the producer already wrote in)."""
    m = middle(tmp_path)
    replica = m.host("t", 0, configs={"min.insync.replicas": "2"})
    refusals = ProduceRefusals()
    assert _produce(m, _batch(0), refusals)[0] == ErrorCode.NONE
    _isr(m, replica, (NODE_ID,), 2)
    assert await _acks_all(m, _batch(2), refusals) == ErrorCode.NOT_ENOUGH_REPLICAS
    _isr(m, replica, (NODE_ID, OTHER), 3)
    assert await _acks_all(m, _batch(4), None) == ErrorCode.OUT_OF_ORDER_SEQUENCE
    assert await _acks_all(m, _batch(4), refusals) == ErrorCode.NOT_ENOUGH_REPLICAS


async def test_a_gap_long_after_the_election_is_out_of_order(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    m = middle(tmp_path)
    replica = m.host("t", 0)
    assert _produce(m, _batch(0), None)[0] == ErrorCode.NONE
    replica.set_role(_role(OTHER, 2), m.clock.now_ms())
    replica.set_role(_role(NODE_ID, 3), m.clock.now_ms())
    assert _produce(m, _batch(4), None)[0] == ErrorCode.NOT_LEADER_OR_FOLLOWER
    autojump_clock.jump(SEQUENCE_GAP_SETTLE_MS / 1000)
    assert _produce(m, _batch(4), None)[0] == ErrorCode.OUT_OF_ORDER_SEQUENCE


async def test_a_retry_written_by_an_earlier_attempt_stays_a_duplicate(tmp_path: Path) -> None:
    """R1's first attempt was written before the leadership moved; its retry is refused
    while the node follows, R2 waits behind it, and both retries dedupe or append once."""
    m = middle(tmp_path)
    replica = m.host("t", 0)
    refusals = ProduceRefusals()
    assert _produce(m, _batch(0), refusals) == (ErrorCode.NONE, 0)
    replica.set_role(_role(OTHER, 2), m.clock.now_ms())
    refused, _ = _produce(m, _batch(0), refusals)
    assert refused in RETRIABLE_REFUSALS
    replica.set_role(_role(NODE_ID, 3), m.clock.now_ms())
    assert _produce(m, _batch(2), refusals)[0] == refused
    assert _produce(m, _batch(0), refusals) == (ErrorCode.NONE, 0)  # the original offsets
    assert _produce(m, _batch(2), refusals) == (ErrorCode.NONE, 2)
    assert replica.log.log_end_offset == 4


async def test_a_gap_the_node_did_not_make_is_still_out_of_order(tmp_path: Path) -> None:
    m = middle(tmp_path)
    m.host("t", 0)
    refusals = ProduceRefusals()
    assert _produce(m, _batch(0), refusals)[0] == ErrorCode.NONE
    assert _produce(m, _batch(4), refusals)[0] == ErrorCode.OUT_OF_ORDER_SEQUENCE


def _span(first: int, after: int, epoch: int = 0, pid: int = PID) -> BatchSpan:
    return BatchSpan(pid, epoch, first, after)


def test_only_the_directly_following_batch_of_the_same_epoch_is_explained() -> None:
    refusals = ProduceRefusals()
    refusals.refused("t", 0, _span(10, 12), ErrorCode.NOT_ENOUGH_REPLICAS)
    assert refusals.behind_refused("t", 1, _span(12, 14)) is None  # another partition
    assert refusals.behind_refused("t", 0, _span(12, 14, epoch=1)) is None  # renumbered
    assert len(refusals) == 0
    refusals.refused("t", 0, _span(10, 12), ErrorCode.NOT_ENOUGH_REPLICAS)
    assert refusals.behind_refused("t", 0, _span(12, 14)) == ErrorCode.NOT_ENOUGH_REPLICAS
    assert refusals.behind_refused("t", 0, _span(14, 15)) == ErrorCode.NOT_ENOUGH_REPLICAS
    assert refusals.behind_refused("t", 0, _span(10, 12)) is None  # the retry: judged anew


def test_permanent_refusals_explain_nothing() -> None:
    refusals = ProduceRefusals()
    for code in (
        ErrorCode.OUT_OF_ORDER_SEQUENCE,
        ErrorCode.CORRUPT_MESSAGE,
        ErrorCode.INVALID_TIMESTAMP,
    ):
        refusals.refused("t", 0, _span(10, 12), code)
    assert len(refusals) == 0


def test_a_refusal_explains_a_bounded_number_of_batches() -> None:
    refusals = ProduceRefusals()
    refusals.refused("t", 0, _span(0, 1), ErrorCode.NOT_LEADER_OR_FOLLOWER)
    explained = [refusals.behind_refused("t", 0, _span(n, n + 1)) for n in range(1, 10)]
    assert explained.count(ErrorCode.NOT_LEADER_OR_FOLLOWER) == MAX_BATCHES_BEHIND
    assert explained[MAX_BATCHES_BEHIND:] == [None] * (9 - MAX_BATCHES_BEHIND)


def test_the_memory_of_one_connection_is_bounded() -> None:
    refusals = ProduceRefusals(max_gaps=3)
    for pid in range(10):
        refusals.refused("t", 0, _span(0, 1, pid=pid), ErrorCode.NOT_LEADER_OR_FOLLOWER)
    assert len(refusals) == 3
    assert refusals.behind_refused("t", 0, _span(1, 2, pid=9)) == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert refusals.behind_refused("t", 0, _span(1, 2, pid=0)) is None  # evicted


def test_span_of_reads_the_producer_and_the_range_of_several_batches() -> None:
    records = _batch(5, count=3) + _batch(8, count=2)
    assert span_of(records) == BatchSpan(PID, 0, 5, 10)
    assert span_of(build_batch([(1, None, b"v", None)])) is None  # not idempotent
    assert span_of(_batch(0) + _batch(2, pid=PID + 1)) is None  # two producers
    assert span_of(b"\x00" * 7) is None  # unreadable: the append path answers it
    assert span_of(_batch(2**31 - 1, count=2)) == BatchSpan(PID, 0, 2**31 - 1, 1)  # wraps


async def test_the_dispatcher_keeps_refusals_per_connection(tmp_path: Path) -> None:
    """Through the dispatcher: a batch behind a refused one on the same connection is
    refused alike; on another connection it is judged on its own."""
    m = middle(tmp_path)
    replica = m.host("t", 0, configs={"min.insync.replicas": "2"})
    d = Dispatcher(m.ctx)
    one, other = Session("kafka", "127.0.0.1"), Session("kafka", "127.0.0.1")

    def produce(records: bytes, session: Session, acks: int = -1) -> int:
        request = ProduceRequest(acks, 30_000, [ProducePartitionData("t", 0, records)])
        header = RequestHeader(ApiKey.PRODUCE, PROTOCOL_VERSION, 1, "t")
        reply = d.dispatch(header, request, session)
        assert reply is not None and isinstance(reply.message, ProduceResponse)
        return reply.message.partitions[0].error_code

    assert produce(_batch(0), one, acks=1) == ErrorCode.NONE
    _isr(m, replica, (NODE_ID,), 2)
    assert produce(_batch(2), one) == ErrorCode.NOT_ENOUGH_REPLICAS
    _isr(m, replica, (NODE_ID, OTHER), 3)
    assert produce(_batch(4), other) == ErrorCode.OUT_OF_ORDER_SEQUENCE
    assert produce(_batch(4), one) == ErrorCode.NOT_ENOUGH_REPLICAS
