"""Topic auto-creation, as Kafka's brokers do it (sans-I/O): which unknown topics named in
a Metadata request are created, and what the answer says about each.

Kafka clients find out about a topic through Metadata. When the request allows it (Kafka's
``allow_auto_topic_creation``, rillet's producer) and the node's
``auto.create.topics.enable`` is on, a valid name that does not exist is created through the
controller with the node's ``num.partitions`` and ``default.replication.factor``; until the
topic has a leader the answer for it is LEADER_NOT_AVAILABLE, which every client retries.
Many clients asking at once create it once: a name being created from this node is not sent
to the controller again, and its other askers hear LEADER_NOT_AVAILABLE meanwhile (another
node creating it at the same moment gets TOPIC_ALREADY_EXISTS back, which is no error here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rillet.broker.errors import TopicError
from rillet.broker.replica.topic_config import validate_topic_name
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import TopicMetadata

SETTING = "auto.create.topics.enable"
# Kafka's own internal topics: a Kafka client asking for one must not get a plain topic of
# that name (Kafka refuses them too). Groups and transactions live in the metadata log here.
KAFKA_INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})

MayCreate = Callable[[str], bool]


def anyone(name: str) -> bool:
    """The creation check of a node without an authorizer."""
    return True


@dataclass(frozen=True, slots=True)
class CreationPlan:
    """``create``: names to send to the controller (now counted as being created, until
    :meth:`AutoTopicCreations.finished`); ``answers``: names answered without creating."""

    create: list[str]
    answers: dict[str, TopicMetadata]


class AutoTopicCreations:
    """Per node: the topics being created on behalf of Metadata requests right now. Each
    name is held only while the request that sends it to the controller waits, so the set
    is bounded by the requests in progress (themselves bounded per connection)."""

    def __init__(self) -> None:
        self._in_flight: set[str] = set()

    def plan(self, unknown: Iterable[str], enabled: bool, may_create: MayCreate) -> CreationPlan:
        """What to do about ``unknown`` names of a request that allows auto-creation, on a
        node whose ``auto.create.topics.enable`` is ``enabled``; ``may_create`` says whether
        the asker may have a topic created (Kafka's ACLs: DESCRIBE on the topic and CREATE
        on the cluster or the topic)."""
        create: list[str] = []
        answers: dict[str, TopicMetadata] = {}
        for name in dict.fromkeys(unknown):
            refusal = _refusal(name, enabled, may_create)
            if refusal is not None:
                answers[name] = refusal
            elif name in self._in_flight:
                answers[name] = being_created(name)
            else:
                self._in_flight.add(name)
                create.append(name)
        return CreationPlan(create, answers)

    def finished(self, names: Iterable[str]) -> None:
        """The controller answered (or the request gave up) for ``names``."""
        self._in_flight.difference_update(names)

    def in_flight(self) -> frozenset[str]:
        return frozenset(self._in_flight)


def _refusal(name: str, enabled: bool, may_create: MayCreate) -> TopicMetadata | None:
    if name in KAFKA_INTERNAL_TOPICS:
        return TopicMetadata(
            name, ErrorCode.INVALID_TOPIC, [], error_message=f"{name!r} is a Kafka internal topic"
        )
    try:
        validate_topic_name(name)
    except TopicError as exc:
        return TopicMetadata(name, ErrorCode.INVALID_TOPIC, [], error_message=str(exc))
    if not enabled:
        return TopicMetadata(
            name,
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            [],
            error_message=f"topic {name!r} does not exist, and the node does not create "
            f"topics on use ({SETTING} = false)",
        )
    if not may_create(name):
        return TopicMetadata(
            name,
            ErrorCode.AUTHORIZATION_FAILED,
            [],
            error_message=f"topic {name!r} does not exist, and the caller may not create it",
        )
    return None


def being_created(name: str) -> TopicMetadata:
    return TopicMetadata(
        name, ErrorCode.LEADER_NOT_AVAILABLE, [], error_message=f"topic {name!r} is being created"
    )


def creation_answer(name: str, error_code: int, message: str | None) -> TopicMetadata:
    """The answer for a topic the controller was asked to create, while this node's
    metadata does not show it yet: LEADER_NOT_AVAILABLE (retry) when it was created, exists
    already, or the controller could not say (moving, timed out); the controller's own
    error when the creation was refused (a replication factor above the live brokers, say),
    so the client hears why rather than waiting for a topic that will not come."""
    code = ErrorCode.from_wire(error_code)
    if code in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS) or code.retriable:
        return being_created(name)
    return TopicMetadata(name, code, [], error_message=message)
