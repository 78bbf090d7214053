"""A topic's metadata answer, kept with its encoded form until the topic changes.

Clients ask for a topic's metadata whenever a partition moves, and an answer for a
10,000-partition topic is 10,000 entries: built and encoded on every request it held a
node's event loop 50 ms on a quiet machine and 300-600 ms under load, about once a second
per node while such a topic was being led. Here each partition's entry is built and encoded
once per change of that partition (the metadata state replaces a partition's state object
when it changes, so the object is the key), and a topic's whole answer once per change of the
topic (:meth:`MetadataState.topic_version`). An unchanged topic costs a dictionary lookup,
and a topic with one moved partition the re-encoding of that partition plus a join of the
others' bytes.

The answers are :class:`CachedTopicMetadata`: ordinary :class:`TopicMetadata` to everything
that reads their fields (authorization trims the list, the Kafka listener translates it),
spliced as encoded bytes by the wire layer (wire/encoded.py).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

from rillet.broker.runtime.loop_slices import run_whole
from rillet.metadata_quorum.state import MetadataState, PartitionState, TopicState
from rillet.wire.encoded import EncodedCBOR, PreEncoded, encode_cbor, encoded_array
from rillet.wire.error_codes import ErrorCode
from rillet.wire.frame import BlobPart
from rillet.wire.messages import PartitionMetadata, TopicMetadata
from rillet.wire.schema import to_wire

_NOT_ENCODED = EncodedCBOR(b"")


@dataclass(frozen=True, slots=True)
class CachedTopicMetadata(TopicMetadata, PreEncoded):
    """A topic's answer with its encoded form (``encoded``, exactly what encoding the
    fields would give)."""

    encoded: EncodedCBOR = _NOT_ENCODED  # always given: a default only because configs has one

    def wire_form(self, blobs: list[BlobPart]) -> EncodedCBOR:
        return self.encoded  # a topic's metadata has no blobs


@dataclass(slots=True)
class _PartitionAnswer:
    state: PartitionState  # the state object it was built from
    metadata: PartitionMetadata
    encoded: EncodedCBOR


@dataclass(slots=True)
class _TopicAnswer:
    version: int
    topic: TopicState  # the state object it was built from (configs change replaces it)
    answer: CachedTopicMetadata
    partitions: dict[int, _PartitionAnswer]


class MetadataAnswers:
    """Per node: the last answer built for each topic. Bounded by the topics that exist:
    a topic's entry goes when the topic does (:meth:`forget_removed`)."""

    def __init__(self) -> None:
        self._topics: dict[str, _TopicAnswer] = {}

    def topic(self, state: MetadataState, topic: TopicState) -> TopicMetadata:
        """The answer for ``topic`` as ``state`` has it now."""
        return run_whole(self.building(state, topic))

    def is_current(self, state: MetadataState, topic: TopicState) -> bool:
        """Whether the kept answer for ``topic`` is the one ``state`` gives (nothing to
        build)."""
        cached = self._topics.get(topic.topic_id)
        return (
            cached is not None
            and cached.version == state.topic_version(topic.topic_id)
            and cached.topic is topic
        )

    def building(
        self, state: MetadataState, topic: TopicState
    ) -> Generator[None, None, TopicMetadata]:
        """Builds the answer for ``topic`` as ``state`` has it when started, yielding after
        each partition entry it builds (the caller may give the event loop a turn: the
        first answer for a new 10,000-partition topic is 10,000 entries, about 80 ms of
        work). The state may move on between yields; the answer then mixes entries of the
        two versions, each one whole, and is kept as of the version it started from, so
        the next request rebuilds what changed meanwhile."""
        version = state.topic_version(topic.topic_id)
        cached = self._topics.get(topic.topic_id)
        if cached is not None and self.is_current(state, topic):
            return cached.answer
        previous = cached.partitions if cached is not None else {}
        partitions: dict[int, _PartitionAnswer] = {}
        for p, s in sorted(state.partitions_of(topic.topic_id).items()):
            known = previous.get(p)
            if known is not None and known.state is s:
                partitions[p] = known
            else:
                partitions[p] = _partition(p, s)
                yield
        answer = _topic_answer(topic, partitions)
        self._topics[topic.topic_id] = _TopicAnswer(version, topic, answer, partitions)
        return answer

    def forget_removed(self, state: MetadataState) -> None:
        """Drop the answers of topics the state no longer has."""
        for topic_id in [t for t in self._topics if t not in state.topics]:
            del self._topics[topic_id]


def _partition(p: int, s: PartitionState) -> _PartitionAnswer:
    error = ErrorCode.NONE if s.leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE
    metadata = PartitionMetadata(p, s.leader, s.leader_epoch, list(s.replicas), list(s.isr), error)
    return _PartitionAnswer(s, metadata, encode_cbor(to_wire(metadata, [])))


def _topic_answer(
    topic: TopicState, partitions: dict[int, _PartitionAnswer]
) -> CachedTopicMetadata:
    entries = list(partitions.values())
    configs = dict(topic.configs)
    plain = TopicMetadata(topic.name, ErrorCode.NONE, [], configs, topic_id=topic.topic_id)
    wire = to_wire(plain, [])
    wire["partitions"] = encoded_array([e.encoded for e in entries])
    return CachedTopicMetadata(
        topic.name,
        ErrorCode.NONE,
        [e.metadata for e in entries],
        configs,
        topic_id=topic.topic_id,
        encoded=encode_cbor(wire),
    )
