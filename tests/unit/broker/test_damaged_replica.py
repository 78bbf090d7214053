"""A replica with a damaged batch (bit rot): what it answers, when it cuts, what it asks for.

The repair steps (broker/replica/replica_repair.py) must never cut committed data while the replica
still counts as in sync, and never on the only in-sync copy.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from rillet.broker.config import NodeConfig, TasksConfig, load_config
from rillet.broker.errors import ConfigError
from rillet.broker.replica.log_scrubber import SCRUB_STATUS_FILE, LogScrubber
from rillet.broker.replica.partition_replica import PartitionReplica
from rillet.broker.replica.replica_manager import ReplicaManager
from rillet.broker.replica.replica_repair import RepairAction, repair_action
from rillet.broker.replica.replica_role import ReplicaRole, TopicPartitionKey
from rillet.partition_store.config import LogConfig
from rillet.partition_store.errors import LogDamaged
from rillet.partition_store.log import PartitionLog
from rillet.wire.batch import build_batch
from rillet.wire.error_codes import ErrorCode

T0 = 1_700_000_000_000
NODE = 1
SMALL = LogConfig(segment_bytes=1024, index_interval_bytes=100)


def role(is_leader: bool, isr: tuple[int, ...], leader_id: int = NODE) -> ReplicaRole:
    return ReplicaRole(is_leader, 3, isr, NODE, replicas=(1, 2, 3), leader_id=leader_id)


@pytest.mark.parametrize(
    ("is_leader", "isr", "leader_id", "action"),
    [
        (False, (1, 2, 3), 2, RepairAction.LEAVE_ISR),  # a follower in the ISR
        (False, (2, 3), 2, RepairAction.TRUNCATE),  # out of it: cut now
        (True, (1, 2), 1, RepairAction.LEAVE_ISR),  # a leader hands over
        (True, (1,), 1, RepairAction.KEEP),  # the only in-sync copy: keep the data
        (False, (1,), -1, RepairAction.KEEP),  # the last ISR member, no leader
        (False, (1, 3), 2, RepairAction.KEEP),  # its leader is not in sync: nobody to copy
    ],
)
def test_repair_action(
    is_leader: bool, isr: tuple[int, ...], leader_id: int, action: RepairAction
) -> None:
    assert repair_action(role(is_leader, isr, leader_id)) is action


def _damaged_replica(tmp_path: Path) -> tuple[PartitionReplica, int]:
    directory = tmp_path / "t-0"
    log = PartitionLog.open(directory, SMALL, T0, "t", 0)
    for i in range(40):
        log.append_as_leader(build_batch([(T0, None, b"v%02d" % i + bytes(50), None)]), 0, T0)
    second = log.segments()[1]
    log.close()
    with second.log_path.open("r+b") as f:  # 8 bytes flipped inside a batch's payload
        f.seek(second.size_bytes // 2 + 30)
        f.write(bytes(8))
    log = PartitionLog.open(directory, SMALL, T0, "t", 0)
    r = PartitionReplica(TopicPartitionKey("t", 0), log, lambda: None)
    return r, second.base_offset


def _find_damage(r: PartitionReplica, start: int) -> None:
    """Serve every offset from ``start`` until the damaged batch, as fetches would."""
    for offset in range(start, r.log.log_end_offset):
        try:
            r.log.read(offset, 1 << 20)
        except LogDamaged as exc:
            r.report_damage(exc.damage)
            return
    raise AssertionError("no damage found")


def test_a_damaged_leader_answers_not_leader_while_it_hands_over(tmp_path: Path) -> None:
    r, base = _damaged_replica(tmp_path)
    reported: list[bool] = []
    r.on_damage = lambda: reported.append(True)
    r.set_role(role(True, (1, 2, 3)), T0)
    _find_damage(r, base)
    assert reported == [True] and r.damage is not None
    assert r.damaged_read_error() == ErrorCode.NOT_LEADER_OR_FOLLOWER
    damaged_at = r.damage.offset
    # Still leading, still in the ISR: nothing is cut.
    r.set_role(role(True, (1, 2, 3)), T0)
    assert r.log.log_end_offset == 40
    # The controller moved the leadership and the ISR without it: cut before the damage.
    r.set_role(role(False, (2, 3), leader_id=2), T0)
    assert r.log.log_end_offset == damaged_at and r.damage is None
    assert r.high_watermark <= damaged_at


def test_a_damaged_follower_in_the_isr_keeps_its_data_until_it_is_out(tmp_path: Path) -> None:
    r, base = _damaged_replica(tmp_path)
    r.set_role(role(False, (1, 2, 3), leader_id=2), T0)
    _find_damage(r, base)
    assert r.damage is not None
    r.set_role(role(False, (1, 2, 3), leader_id=2), T0)  # some other change: still in sync
    assert r.log.log_end_offset == 40
    r.set_role(role(False, (2, 3), leader_id=2), T0)
    assert r.log.log_end_offset < 40 and r.damage is None


def test_the_only_in_sync_copy_answers_corrupt_message(tmp_path: Path) -> None:
    r, base = _damaged_replica(tmp_path)
    r.set_role(role(True, (1,)), T0)
    _find_damage(r, base)
    assert r.damaged_read_error() == ErrorCode.CORRUPT_MESSAGE
    assert r.log.log_end_offset == 40


async def test_a_scrub_pass_finds_and_reports_the_damage(tmp_path: Path) -> None:
    config = NodeConfig(data_dir=tmp_path, log=SMALL)
    manager = ReplicaManager(config)
    r, base = _damaged_replica(tmp_path / "elsewhere")
    manager._replicas[r.key] = r  # a replica opened as the manager would
    woken: list[bool] = []
    manager.set_damage_listener(lambda: woken.append(True))
    scrubber = LogScrubber(TasksConfig(log_scrub_bytes_per_second=1 << 30), manager, tmp_path)
    with trio.fail_after(30):
        stats = await scrubber.scrub_pass()
    assert stats.damaged == 1 and woken == [True]
    assert r.damage is not None and r.damage.segment_path.name == f"{base:020d}.log"
    assert '"damaged": [{' in (tmp_path / SCRUB_STATUS_FILE).read_text()


def test_scrub_settings_are_checked_at_start_up() -> None:
    with pytest.raises(ConfigError):
        load_config(None, {"tasks.log_scrub_interval_ms": 0})
    with pytest.raises(ConfigError):
        load_config(None, {"tasks.log_scrub_bytes_per_second": 0})
    assert load_config(None, {"tasks.log_scrub_interval_ms": -1}).tasks.log_scrub_interval_ms == -1


def test_a_follower_asking_again_for_what_it_was_sent_gets_it_rechecked(tmp_path: Path) -> None:
    r, _ = _damaged_replica(tmp_path)
    assert not r.follower_refetches(2, 10)
    r.served_follower(2, 10, with_records=True)
    assert r.follower_refetches(2, 10)  # it could not append them: a bad CRC on its side
    assert not r.follower_refetches(3, 10)
    r.served_follower(2, 10, with_records=False)
    assert not r.follower_refetches(2, 10)
