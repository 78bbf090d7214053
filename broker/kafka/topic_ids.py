"""Topic ids on the Kafka listener: Metadata v10+ and the consumer group protocol name
topics by UUID.

Every rillet topic has had a UUID since its creation (chosen by the controller and recorded
in the metadata log with the topic), so a topic keeps its id for its life on every node, and
a topic deleted and created again under the same name gets a new one, as in Kafka.
Metadata v10+ may ask for topics by id alone: those requests ask the node for every topic
and keep the ones named, by name or id; an id no topic has is answered UNKNOWN_TOPIC_ID.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from rillet.broker.kafka.translation import optional_field
from rillet.wire.messages import TopicMetadata

UNKNOWN_TOPIC_ID = 100  # Kafka's error; rillet's own clients never name topics by id


def kafka_topic_id(topic_id: str) -> uuid.UUID | None:
    """A topic id as kio's UUID (None, Kafka's zero UUID, when there is none)."""
    try:
        return uuid.UUID(topic_id)
    except ValueError:
        return None


def requested(topics: Sequence[object] | None) -> tuple[list[str] | None, list[str]]:
    """The names asked for (None: every topic) and the ids asked for by id alone (the node
    is then asked for every topic). Topics have ids from Metadata v10 on, and may lack a
    name there."""
    if topics is None:
        return None, []
    named = [
        (optional_field(t, "name", str), optional_field(t, "topic_id", uuid.UUID)) for t in topics
    ]
    ids = [str(topic_id) for name, topic_id in named if name is None and topic_id is not None]
    names = [name for name, _ in named if name is not None]
    return names, ids


def kept(
    answer: list[TopicMetadata], names: list[str] | None, ids: list[str]
) -> list[TopicMetadata]:
    """The topics of an answer for every topic that a request by ids (and names) asked for."""
    if not ids:
        return answer
    wanted = set(ids)
    out = [t for t in answer if t.topic_id in wanted or (names is not None and t.name in names)]
    found = {t.topic_id for t in out}
    return out + [
        TopicMetadata("", UNKNOWN_TOPIC_ID, [], topic_id=i) for i in ids if i not in found
    ]
