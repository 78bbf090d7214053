"""Replication throttles: Kafka's forms parsed, the token bucket's long-run rate, and the
rule that only out-of-sync replicas named in a topic's list are throttled."""

from __future__ import annotations

import pytest

from rillet.broker.replica.replication.replication_throttle import (
    FOLLOWER_RATE,
    FOLLOWER_REPLICAS,
    LEADER_RATE,
    ThrottleConfigError,
    ThrottleGate,
    TokenBucket,
    broker_rate,
    is_throttled,
    normalised_replicas,
    parse_rate,
    parse_replicas,
    replicas_text,
)
from rillet.broker.replica.replication.throttled_replicas import ThrottledReplicas
from rillet.metadata_quorum.records import (
    BrokerConfigsRecord,
    PartitionRecord,
    RegisterBroker,
    TopicConfigsRecord,
    TopicRecord,
)
from rillet.metadata_quorum.state import MetadataState


def test_kafka_list_forms_parse_and_normalise() -> None:
    assert parse_replicas(FOLLOWER_REPLICAS, "*").covers(7, 9)
    listed = parse_replicas(FOLLOWER_REPLICAS, " 1:3, 0:2 ,0:1")
    assert listed.covers(0, 2) and listed.covers(1, 3) and not listed.covers(1, 2)
    assert normalised_replicas(FOLLOWER_REPLICAS, "1:3, 0:2") == "0:2,1:3"
    assert normalised_replicas(FOLLOWER_REPLICAS, "") == ""
    assert replicas_text([(1, 4), (0, 4), (1, 4)]) == "0:4,1:4"
    for bad in ("0", "a:1", "0:b", "0:1,x", "-1:2"):
        with pytest.raises(ThrottleConfigError, match=FOLLOWER_REPLICAS):
            parse_replicas(FOLLOWER_REPLICAS, bad)


def test_rates_are_positive_integers() -> None:
    assert parse_rate(LEADER_RATE, "1048576") == 1048576
    for bad in ("0", "-5", "1.5", "fast"):
        with pytest.raises(ThrottleConfigError, match=LEADER_RATE):
            parse_rate(LEADER_RATE, bad)


def test_a_broker_s_own_rate_overrides_the_cluster_default() -> None:
    configs = {-1: {LEADER_RATE: "100"}, 2: {LEADER_RATE: "50"}}
    assert broker_rate(configs, 2, LEADER_RATE) == 50
    assert broker_rate(configs, 3, LEADER_RATE) == 100
    assert broker_rate(configs, 3, FOLLOWER_RATE) is None


def test_the_bucket_holds_the_rate_over_time_whatever_the_chunk_sizes() -> None:
    """Charged after the fact, in uneven chunks, sending whenever it is out of debt: the
    bytes sent over 20 s are the rate times 20 s plus one burst, within one chunk."""
    rate = 1_000_000
    bucket = TokenBucket(rate, now_ms=0)
    now, sent, chunks = 0, 0, [300_000, 1_700_000, 50_000, 900_000]
    i = 0
    while now < 20_000:
        wait = bucket.wait_ms(now)
        if wait:
            now += wait
            continue
        bucket.charge(chunks[i % len(chunks)], now)
        sent += chunks[i % len(chunks)]
        i += 1
    expected = rate * 20 + rate  # 20 s at the rate, plus the one-second burst saved up
    assert abs(sent - expected) <= max(chunks)
    assert bucket.charged_bytes_total == sent


def test_an_idle_bucket_saves_one_burst_and_a_new_rate_applies_at_once() -> None:
    bucket = TokenBucket(1000, now_ms=0)
    bucket.charge(1000, now_ms=60_000)  # a minute idle saved only a second's worth
    assert bucket.wait_ms(60_000) == 0
    bucket.charge(500, now_ms=60_000)
    assert bucket.wait_ms(60_000) == 501
    bucket.set_rate(10_000, now_ms=60_000)
    assert bucket.wait_ms(60_000) == 51


def test_a_gate_follows_the_setting_and_unlimited_means_no_bucket() -> None:
    gate = ThrottleGate()
    gate.charge(10**9, 0)
    assert gate.wait_ms(0) == 0
    gate.follow(1000, 0)
    gate.charge(3000, 0)
    assert gate.wait_ms(0) > 0
    gate.follow(None, 0)
    assert gate.bucket is None and gate.wait_ms(0) == 0


def _state(isr: tuple[int, ...], configs: dict[str, str]) -> MetadataState:
    s = MetadataState()
    for b in (1, 2, 3, 4):
        s.apply(b, RegisterBroker(b, f"i{b}", "h", 9000 + b))
    s.apply(10, PartitionRecord("tid", 0, (1, 2, 3, 4), isr, 1, 0, 0))
    s.apply(11, TopicRecord("t", "tid"))
    s.apply(12, TopicConfigsRecord("tid", configs))
    s.apply(13, BrokerConfigsRecord(4, {FOLLOWER_RATE: "1000"}))
    return s


def test_only_listed_replicas_out_of_the_isr_are_throttled() -> None:
    state = _state((1, 2, 3), {FOLLOWER_REPLICAS: "0:4"})
    follower = ThrottledReplicas(4, leader=False)
    assert follower.refresh(state, 0)
    assert follower.covers(state, "t", 0, 4)
    assert not follower.covers(state, "t", 1, 4)  # no such partition listed
    assert not follower.covers(state, "u", 0, 4)  # no such topic
    caught_up = _state((1, 2, 3, 4), {FOLLOWER_REPLICAS: "0:4"})
    assert follower.refresh(caught_up, 0) and not follower.covers(caught_up, "t", 0, 4)
    unlisted = _state((1, 2, 3), {})
    assert not ThrottledReplicas(4, leader=False).covers(unlisted, "t", 0, 4)
    assert not ThrottledReplicas(3, leader=False).refresh(state, 0)  # no rate on broker 3
    assert is_throttled({FOLLOWER_REPLICAS: "*"}, FOLLOWER_REPLICAS, 5, 1)
    assert not is_throttled({FOLLOWER_REPLICAS: "garbage"}, FOLLOWER_REPLICAS, 5, 1)
