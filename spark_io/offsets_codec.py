"""Offsets per partition as JSON, ``{"topic": {"partition": offset}}``, and back.

One shape serves three uses: the offset options users write (``startingOffsets``,
``endingOffsets``), a stream's offsets, which Spark keeps in its checkpoint and so must be
JSON-friendly, and the backfill job, which hands the reader its exact range as options. One
codec keeps them the same format, sorted so that equal offsets give equal text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rillet.client.types import TopicPartition


def offsets_json(offsets: Mapping[TopicPartition, int]) -> str:
    """{TopicPartition: offset} as the JSON the offset options take (sorted, stable)."""
    return json.dumps(offsets_to_dict(offsets), sort_keys=True)


def offsets_to_dict(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """{TopicPartition: offset} -> {"topic": {"0": offset}} (JSON-friendly, as Spark's
    streaming offsets must be)."""
    out: dict[str, dict[str, int]] = {}
    for tp, offset in sorted(offsets.items()):
        out.setdefault(tp.topic, {})[str(tp.partition)] = int(offset)
    return out


def offsets_from_dict(data: Mapping[str, Any], what: str = "offsets") -> dict[TopicPartition, int]:
    """The inverse of :func:`offsets_to_dict`; raises ValueError on anything else."""
    out: dict[TopicPartition, int] = {}
    if not isinstance(data, Mapping):
        raise ValueError(f"{what} must be an object of topics, not {data!r}")
    for topic, parts in data.items():
        if not isinstance(topic, str) or not isinstance(parts, Mapping):
            raise ValueError(f"{what}: {topic!r} must map to an object of partitions")
        for key, value in parts.items():
            if not str(key).isdigit() or type(value) is not int:
                raise ValueError(f"{what}: bad entry {key!r}: {value!r} for {topic!r}")
            out[TopicPartition(topic, int(key))] = value
    return out
