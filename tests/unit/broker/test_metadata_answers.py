"""A topic's metadata answer is kept with its encoded form until the topic changes, and its
bytes on the wire are exactly those of the answer built and encoded from scratch."""

from __future__ import annotations

import cbor2
import pytest

from rillet.broker.cluster.metadata_answers import MetadataAnswers
from rillet.metadata_quorum.records import (
    PartitionChange,
    PartitionRecord,
    RemoveTopic,
    TopicConfigsRecord,
    TopicRecord,
)
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.encoded import EncodedCBOR, encode_cbor, encoded_array
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import FrameDecoder
from rillet.wire.messages import (
    BrokerInfo,
    MetadataResponse,
    PartitionMetadata,
    TopicMetadata,
)
from rillet.wire.protocol import decode_response, encode_response


def _state(partitions: int, topic_id: str = "t1", name: str = "big") -> MetadataState:
    state = MetadataState()
    records: list[object] = [
        PartitionRecord(topic_id, p, [1, 2, 3], [1, 2, 3], -1 if p == 7 else 1 + p % 3)
        for p in range(partitions)
    ]
    records.append(TopicRecord(name, topic_id, {"retention.ms": "60000"}))
    state.apply_entry(1, records)  # type: ignore[arg-type]
    return state


def _from_scratch(state: MetadataState, name: str) -> TopicMetadata:
    topic = state.topic_by_name(name)
    assert topic is not None
    return TopicMetadata(
        name,
        ErrorCode.NONE,
        [
            PartitionMetadata(
                p,
                s.leader,
                s.leader_epoch,
                list(s.replicas),
                list(s.isr),
                ErrorCode.NONE if s.leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE,
            )
            for p, s in sorted(state.partitions_of(topic.topic_id).items())
        ],
        dict(topic.configs),
        topic_id=topic.topic_id,
    )


def _frame(topic: TopicMetadata) -> bytes:
    response = MetadataResponse("c", 1, [BrokerInfo(1, "h", 9092, None)], [topic], 5)
    return b"".join(bytes(p) for p in encode_response(7, response))  # type: ignore[arg-type]


def _answer(answers: MetadataAnswers, state: MetadataState, name: str) -> TopicMetadata:
    topic = state.topic_by_name(name)
    assert topic is not None
    return answers.topic(state, topic)


@pytest.mark.parametrize("partitions", [1, 23, 24, 300, 70_000])
def test_the_kept_answer_encodes_to_the_bytes_of_one_built_from_scratch(partitions: int) -> None:
    state = _state(partitions)
    kept = _answer(MetadataAnswers(), state, "big")
    scratch = _from_scratch(state, "big")
    fields = (kept.name, kept.error_code, kept.partitions, kept.configs)
    assert fields == (scratch.name, scratch.error_code, scratch.partitions, scratch.configs)
    assert _frame(kept) == _frame(scratch)


def test_a_client_decodes_the_kept_answer_as_an_ordinary_one() -> None:
    state = _state(30)
    frame_bytes = _frame(_answer(MetadataAnswers(), state, "big"))
    decoder = FrameDecoder()
    decoder.feed(frame_bytes)
    frame = decoder.next_frame()
    assert frame is not None
    decoded = decode_response(frame, MetadataResponse)
    assert decoded.topics == [_from_scratch(state, "big")]
    assert decoded.topics[0].partitions[7].error_code == ErrorCode.LEADER_NOT_AVAILABLE


def test_an_unchanged_topic_is_answered_from_what_was_kept() -> None:
    state = _state(50)
    answers = MetadataAnswers()
    first = _answer(answers, state, "big")
    state.apply_entry(2, [TopicRecord("other", "t2", {})])  # another topic changes nothing here
    assert _answer(answers, state, "big") is first


def test_a_moved_partition_is_rebuilt_alone() -> None:
    state = _state(50)
    answers = MetadataAnswers()
    first = _answer(answers, state, "big")
    state.apply_entry(2, [PartitionChange("t1", 5, leader=2, isr=[2])])
    second = _answer(answers, state, "big")
    assert second is not first
    assert second.partitions[5] == PartitionMetadata(5, 2, 1, [1, 2, 3], [2], ErrorCode.NONE)
    assert all(second.partitions[p] is first.partitions[p] for p in range(50) if p != 5)
    assert _frame(second) == _frame(_from_scratch(state, "big"))


def test_an_answer_is_built_with_a_yield_after_each_entry_it_builds() -> None:
    state = _state(50)
    answers = MetadataAnswers()
    topic = state.topic_by_name("big")
    assert topic is not None

    def yields_and_answer() -> tuple[int, TopicMetadata]:
        building = answers.building(state, topic)
        count = 0
        while True:
            try:
                next(building)
            except StopIteration as done:
                return count, done.value
            count += 1

    assert not answers.is_current(state, topic)
    count, first = yields_and_answer()
    assert count == 50 and answers.is_current(state, topic)
    assert _frame(first) == _frame(_from_scratch(state, "big"))
    state.apply_entry(2, [PartitionChange("t1", 5, leader=2, isr=[2])])
    count, second = yields_and_answer()
    assert count == 1 and _frame(second) == _frame(_from_scratch(state, "big"))
    assert yields_and_answer() == (0, second)


def test_a_configuration_change_is_answered() -> None:
    state = _state(3)
    answers = MetadataAnswers()
    _answer(answers, state, "big")
    state.apply_entry(2, [TopicConfigsRecord("t1", {"retention.ms": "1"})])
    assert _answer(answers, state, "big").configs == {"retention.ms": "1"}
    assert _frame(_answer(answers, state, "big")) == _frame(_from_scratch(state, "big"))


def test_a_topic_created_again_under_its_name_is_answered_afresh() -> None:
    state = _state(4)
    answers = MetadataAnswers()
    _answer(answers, state, "big")
    state.apply_entry(2, [RemoveTopic("t1")])
    answers.forget_removed(state)
    state.apply_entry(3, [PartitionRecord("t9", 0, [2], [2], 2), TopicRecord("big", "t9", {})])
    again = _answer(answers, state, "big")
    assert [(p.partition, p.leader_id) for p in again.partitions] == [(0, 2)]
    assert _frame(again) == _frame(_from_scratch(state, "big"))


def test_answers_of_removed_topics_are_forgotten() -> None:
    state = _state(4)
    answers = MetadataAnswers()
    kept = _answer(answers, state, "big")
    state.apply_entry(2, [RemoveTopic("t1")])
    answers.forget_removed(state)
    state.apply_entry(3, [TopicRecord("x", "t3", {})])
    assert kept not in [answers.topic(state, t) for t in state.topics.values()]


def test_a_state_loaded_from_a_snapshot_is_answered_afresh() -> None:
    state = _state(10)
    answers = MetadataAnswers()
    first = _answer(answers, state, "big")
    loaded = MetadataState.from_snapshot(state.to_snapshot())
    again = _answer(answers, loaded, "big")
    assert again is not first and _frame(again) == _frame(first)


@pytest.mark.parametrize("length", [0, 1, 23, 24, 255, 256, 65_535, 65_536])
def test_an_array_of_encoded_items_is_what_cbor2_writes_for_the_list(length: int) -> None:
    items = [encode_cbor(i % 300) for i in range(length)]
    assert encoded_array(items).data == cbor2.dumps([i % 300 for i in range(length)])


def test_only_encoded_values_are_spliced() -> None:
    assert cbor2.loads(encode_cbor({"a": [EncodedCBOR(cbor2.dumps([1]))]}).data) == {"a": [[1]]}
    with pytest.raises(cbor2.CBOREncodeTypeError):
        encode_cbor({"a": object()})
