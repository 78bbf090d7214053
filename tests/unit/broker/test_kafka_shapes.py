"""The generated Kafka descriptions match the installed kio, and ``build`` refuses a key
that no served version of an entity has (the runtime half of what mypy checks)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from rillet.broker.kafka.api_table import served_schema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.errors import UnknownResponseField
from rillet.wire.api import ApiKey

if TYPE_CHECKING:
    from rillet.broker.kafka.shapes import ProduceResponseShape

ROOT = Path(__file__).resolve().parents[3]


def test_generated_shapes_are_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location("kafka_shapes", ROOT / "tools/kafka_shapes.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    written = (ROOT / "broker/kafka/shapes.py").read_text()
    assert tool.generate() == written, "run: .venv/bin/python tools/kafka_shapes.py"


def _produce_v3() -> type:
    schema = served_schema(ApiKey.PRODUCE, 3)
    assert schema is not None
    return schema.response_type


def test_a_field_of_a_later_version_is_dropped_from_an_earlier_one() -> None:
    shape: ProduceResponseShape = {
        "responses": [
            {
                "name": "t",
                "partition_responses": [
                    {"index": 0, "error_code": 0, "base_offset": 5, "error_message": "x"}
                ],
            }
        ]
    }
    built = build(_produce_v3(), shape)
    assert built.responses[0].partition_responses[0].base_offset == 5


def test_a_key_no_version_has_is_refused_at_any_depth() -> None:
    with pytest.raises(UnknownResponseField, match="throttle_time_ms"):
        build(_produce_v3(), {"throttle_time_ms": 0})  # type: ignore[typeddict-unknown-key]
    partition = {"index": 0, "error_code": 0, "eror_message": "x"}
    with pytest.raises(UnknownResponseField, match="eror_message"):
        build(
            _produce_v3(),
            {"responses": [{"name": "t", "partition_responses": [partition]}]},  # type: ignore[list-item]
        )
