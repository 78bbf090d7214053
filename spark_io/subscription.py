"""What a read covers: a list of topics, a topic-name pattern, or exact partitions.

The three kinds mirror the ``subscribe``, ``subscribePattern`` and ``assign`` options of
Spark's Kafka source. They are values of their own because the cluster view resolves them
into partitions without caring how they were spelt (a batch read once, a stream again each
micro-batch, as matching topics appear); :func:`parse_subscription` is the one place that
turns the three options into one of them, so the "exactly one of" rule and each option's
syntax sit next to the type they build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rillet.client.types import TopicPartition
from rillet.spark_io.errors import OptionError
from rillet.spark_io.option_values import RawOptions, check_topic_name, load_json_option

_SUBSCRIPTIONS = ("subscribe", "subscribePattern", "assign")


@dataclass(frozen=True, slots=True)
class Subscribe:
    """A fixed list of topics (every partition of each)."""

    topics: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SubscribePattern:
    """Every topic whose whole name matches the regular expression (Python ``re`` syntax)."""

    pattern: str

    def matches(self, topic: str) -> bool:
        return re.fullmatch(self.pattern, topic) is not None


@dataclass(frozen=True, slots=True)
class Assign:
    """Exactly these partitions."""

    partitions: tuple[TopicPartition, ...]


Subscription = Subscribe | SubscribePattern | Assign


def parse_subscription(opts: RawOptions) -> Subscription:
    given = opts.given(_SUBSCRIPTIONS)
    if len(given) != 1:
        found = f"got {', '.join(given)}" if given else "got none"
        raise OptionError(
            "exactly one of 'subscribe' (comma-separated topics), 'subscribePattern' (a "
            f"regular expression) or 'assign' (JSON) must be given; {found}"
        )
    (which,) = given
    text = opts.get(which) or ""
    if which == "subscribe":
        topics = [t.strip() for t in text.split(",")]
        if not text.strip() or any(not t for t in topics):
            raise OptionError(
                f"option 'subscribe' must be a comma-separated list of topic names, not {text!r}"
            )
        if len(set(topics)) != len(topics):
            raise OptionError(f"option 'subscribe' names a topic twice: {text!r}")
        return Subscribe(tuple(topics))
    if which == "subscribePattern":
        if not text:
            raise OptionError("option 'subscribePattern' must be a non-empty regular expression")
        try:
            re.compile(text)
        except re.error as exc:
            raise OptionError(
                f"option 'subscribePattern' is not a valid regular expression ({exc}): {text!r}"
            ) from None
        return SubscribePattern(text)
    data = load_json_option("assign", text)
    example = '{"events": [0, 1]}'
    if not isinstance(data, dict) or not data:
        raise OptionError(
            f"option 'assign' must be a JSON object of topics to partition lists, e.g. "
            f"{example}; got {text!r}"
        )
    partitions: list[TopicPartition] = []
    for topic, parts in data.items():
        check_topic_name("assign", topic)
        if (
            not isinstance(parts, list)
            or not parts
            or not all(type(p) is int and p >= 0 for p in parts)
        ):
            raise OptionError(
                f"option 'assign': topic {topic!r} must map to a non-empty list of partition "
                f"numbers, e.g. {example}; got {parts!r}"
            )
        if len(set(parts)) != len(parts):
            raise OptionError(f"option 'assign' lists a partition of {topic!r} twice")
        partitions += [TopicPartition(topic, p) for p in parts]
    return Assign(tuple(sorted(partitions)))
