"""The pytest plugin users get with rillet: a live node behind one fixture."""

from __future__ import annotations

import pytest

from rillet.client import (
    BlockingAdmin,
    BlockingConsumer,
    BlockingProducer,
    NewTopic,
    TopicPartition,
)

pytestmark = pytest.mark.integration


def test_rillet_bootstrap_fixture_serves_a_real_node(rillet_bootstrap: str) -> None:
    with BlockingAdmin(rillet_bootstrap) as admin:
        admin.create_topics([NewTopic("plugin-demo", 1)])
    with BlockingProducer(rillet_bootstrap) as producer:
        assert producer.send("plugin-demo", b"hello").result(timeout=10).offset == 0
    tp = TopicPartition("plugin-demo", 0)
    with BlockingConsumer(rillet_bootstrap) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        records = []
        for _ in range(50):
            records += consumer.poll(timeout_ms=200)
            if records:
                break
        assert [r.value for r in records] == [b"hello"]
