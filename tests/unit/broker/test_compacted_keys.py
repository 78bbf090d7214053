"""A compacted topic refuses keyless records and names every one (Kafka's record_errors),
so a client fails those records and not the keyed ones beside them (librdkafka's 0011)."""

from __future__ import annotations

import pytest

from rillet.broker.replica.compacted_keys import MissingKey, check_keys
from rillet.partition_store.config import COMPACT_POLICY, LogConfig
from rillet.wire.batch import build_batch


def test_every_keyless_record_is_named_by_its_index() -> None:
    records = build_batch([(0, None if i % 10 == 0 else b"k", b"v", None) for i in range(25)])
    with pytest.raises(MissingKey) as refused:
        check_keys(records, LogConfig(cleanup_policy=COMPACT_POLICY))
    assert refused.value.indexes == [0, 10, 20]
    assert str(refused.value).startswith("3 of 25 records have no key (the first: record 0)")


def test_keyed_records_and_deleting_topics_pass() -> None:
    check_keys(build_batch([(0, b"k", b"v", None)] * 3), LogConfig(cleanup_policy=COMPACT_POLICY))
    check_keys(build_batch([(0, None, b"v", None)] * 3), LogConfig())
