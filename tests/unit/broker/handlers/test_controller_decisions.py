"""The controller's exchanges on a broker's cluster request (handlers/controller_decisions.py),
which the node's handlers and the replication simulation both run: on a plain Controller and
MetadataState, without a quorum, a socket or a clock."""

from __future__ import annotations

import random

from rillet.broker.handlers.controller_decisions import (
    NOT_ACTIVE,
    ControllerOutcome,
    alter_partition,
    decided,
    heartbeat,
    metadata_fetch_max_records,
    metadata_fetch_wait_ms,
    register,
)
from rillet.metadata_quorum.broker_leases import NO_ANSWER_HEARD, HeardAnswer
from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.controller_service import DecideFn
from rillet.metadata_quorum.heartbeat_exchange import answer_stamp, heartbeat_arrived
from rillet.metadata_quorum.state import MetadataState
from rillet.wire import cluster_messages as cm
from rillet.wire.error_codes import ErrorCode


class Side:
    """A controller that applies each decision's records at once (no log in between)."""

    def __init__(self) -> None:
        self.state = MetadataState()
        self.ctl = Controller(ControllerConfig(broker_session_timeout_ms=1_000), random.Random(1))
        self.ctl.on_become_leader(self.state, 0)
        self.active = True
        self.now = 0
        self.noted: list[str] = []

    def controller_id(self) -> int:
        return 1 if self.active else -1

    def now_ms(self) -> int:
        return self.now

    async def decide(self, decide: DecideFn, commuting: bool = False) -> ControllerOutcome:
        self.noted.append("decide")
        if not self.active:
            return NOT_ACTIVE
        decision = decide(self.ctl, self.state, self.now)
        if decision.records:
            self.state.apply_entry(self.state.last_applied_index + 1, decision.records)
        return decided(decision)

    def heartbeat_arrived(self, req: cm.BrokerHeartbeatRequest) -> None:
        self.noted.append("arrived")
        heard = HeardAnswer(req.heard_answer_key, req.heard_answer_ms)
        heartbeat_arrived(self.ctl, self.state, req.broker_id, req.broker_epoch, self.now, heard, 0)

    def answer_stamp(self, broker_id: int, arrived_ms: int) -> HeardAnswer:
        self.noted.append("stamp")
        return answer_stamp(self.ctl, broker_id, self.now, arrived_ms)


def beat(epoch: int, shutting_down: bool = False) -> cm.BrokerHeartbeatRequest:
    return cm.BrokerHeartbeatRequest("c", b"", 2, epoch, 0, True, shutting_down)


async def test_a_heartbeat_is_noted_on_arrival_decided_then_stamped() -> None:
    side = Side()
    registered = await register(side, cm.BrokerRegistrationRequest("c", b"", 2, "i", "h", 1))
    assert (registered.error_code, registered.controller_id) == (ErrorCode.NONE, 1)
    epoch = registered.broker_epoch
    assert epoch == side.state.brokers[2].broker_epoch
    side.now = 10
    answer = await heartbeat(side, beat(epoch))
    assert side.noted[-3:] == ["arrived", "decide", "stamp"]
    assert (answer.error_code, answer.fenced) == (ErrorCode.NONE, False)
    assert (answer.answer_key, answer.answered_ms) == (side.ctl.answer_key, 10)
    stale = await heartbeat(side, beat(epoch - 1))
    assert (stale.error_code, stale.fenced, stale.answer_key) == (
        ErrorCode.UNKNOWN_MEMBER_ID,
        True,
        NO_ANSWER_HEARD.key,
    )
    side.noted.clear()
    down = await heartbeat(side, beat(epoch, shutting_down=True))
    assert side.noted == ["decide", "stamp"]  # a broker shutting down renews no lease
    assert (down.error_code, down.fenced) == (ErrorCode.NONE, True)


async def test_a_voter_that_does_not_lead_names_the_leader_and_decides_nothing() -> None:
    side = Side()
    side.active = False
    answer = await register(side, cm.BrokerRegistrationRequest("c", b"", 2, "i", "h", 1))
    assert (answer.error_code, answer.broker_epoch) == (ErrorCode.NOT_CONTROLLER, -1)
    assert 2 not in side.state.brokers
    beat_answer = await heartbeat(side, beat(1))
    assert (beat_answer.error_code, beat_answer.fenced) == (ErrorCode.NOT_CONTROLLER, True)
    assert "stamp" not in side.noted


async def test_an_isr_change_needs_the_brokers_current_epoch() -> None:
    side = Side()
    for broker in (1, 2):
        req = cm.BrokerRegistrationRequest("c", b"", broker, f"i{broker}", "h", broker)
        epoch = (await register(side, req)).broker_epoch
        hb = cm.BrokerHeartbeatRequest("c", b"", broker, epoch, 0, True)
        await heartbeat(side, hb)
    await side.decide(lambda c, s, now: c.create_topic(s, "t", 1, 2, {}))
    (topic_id, _), p = next(iter(side.state.partitions.items()))
    epoch = side.state.brokers[p.leader].broker_epoch

    def shrink(broker_epoch: int) -> cm.AlterPartitionRequest:
        return cm.AlterPartitionRequest(
            "c", b"", p.leader, broker_epoch, topic_id, 0, p.leader_epoch, p.partition_epoch,
            [p.leader],
        )  # fmt: skip

    stale = await alter_partition(side, shrink(epoch - 1))
    assert stale.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert (stale.isr, stale.partition_epoch) == (list(p.isr), p.partition_epoch)
    done = await alter_partition(side, shrink(epoch))
    assert (done.error_code, done.isr) == (ErrorCode.NONE, [p.leader])
    assert done.partition_epoch > p.partition_epoch


def test_the_metadata_long_poll_is_capped() -> None:
    def fetch(max_records: int, max_wait_ms: int) -> cm.MetadataFetchRequest:
        return cm.MetadataFetchRequest("c", b"", 0, max_records, max_wait_ms)

    assert metadata_fetch_max_records(fetch(0, 0)) == 1
    assert metadata_fetch_max_records(fetch(10**9, 0)) == 10_000
    assert metadata_fetch_wait_ms(fetch(1, -5)) == 0
    assert metadata_fetch_wait_ms(fetch(1, 10**9)) == 5_000
