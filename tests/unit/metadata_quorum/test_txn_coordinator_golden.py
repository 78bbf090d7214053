"""Golden-file tests of the transaction coordinator core (metadata_quorum.txn_coordinator).

Each file in testdata_txn/ is a script (see tests/support/golden_script.py). The script
applies every record an answer carries to a registry, as the controller's commit would, and
prints the answer, the records and the resulting state. Commands (``T`` a transactional id,
``P``/``E`` producer id/epoch, partitions ``topic-n``)::

    init T [timeout=MS] [expect=P/E]     add T P E t-0 [t-1 ...]     offsets T P E GROUP
    commit-offsets T P E GROUP t-0@OFFSET ...                        verify T P E t-0 ...
    end T P E commit|abort     markers     written T [t-0 ...]     expire     expire-idle
    clock MS (set the time)    state T
"""

from __future__ import annotations

from pathlib import Path

import pytest
from golden_script import check_golden, each_golden_file, golden_files

from rillet.metadata_quorum import txn_coordinator as tc
from rillet.metadata_quorum.group_records import OffsetsCommitted
from rillet.metadata_quorum.records import ProducerIds, decode_entry, encode_entry
from rillet.metadata_quorum.state import MetadataState
from rillet.metadata_quorum.txn_registry import (
    TransactionRecord,
    TransactionRemoved,
    TxnOffset,
    TxnPartition,
    TxnRegistry,
    TxnState,
)
from rillet.wire.error_codes import ErrorCode

TESTDATA = Path(__file__).parent / "testdata_txn"
CONFIG = tc.TxnConfig(transaction_max_timeout_ms=900_000, transactional_id_expiration_ms=86_400_000)
TOPIC_IDS = {"t": "tid-t", "u": "tid-u"}


def _partition(text: str) -> TxnPartition:
    topic, _, n = text.rpartition("-")
    return TxnPartition(topic, int(n))


def _describe(record: TransactionRecord) -> str:
    parts = ",".join(f"{p.topic}-{p.partition}" for p in record.partitions) or "-"
    groups = ",".join(record.group_ids) or "-"
    offsets = ",".join(f"{o.group_id}:{o.topic}-{o.partition}@{o.offset}" for o in record.offsets)
    return (
        f"{record.transactional_id} pid={record.producer_id} epoch={record.producer_epoch} "
        f"last={record.last_producer_epoch} {record.txn_state.name} parts={parts} "
        f"groups={groups} offsets={offsets or '-'} started={record.started_ms}"
    )


class Script:
    def __init__(self) -> None:
        self.registry = TxnRegistry()
        self.next_pid = 1000
        self.now_ms = 0

    def run(self, command: str) -> list[str]:
        name, *args = command.split()
        return self._run(name, args) or ["ok"]

    def _apply(self, answer: tc.TxnAnswer) -> list[str]:
        lines = [
            f"-> {answer.error.name}"
            + (
                f" pid={answer.producer_id} epoch={answer.producer_epoch}"
                if answer.producer_id >= 0
                else ""
            )
        ]
        lines += self._commit(answer.records)
        return lines

    def _commit(self, records: list[tc.TxnOutcome]) -> list[str]:
        lines = []
        for record in records:
            match record:
                case ProducerIds():
                    self.next_pid = max(self.next_pid, record.first_producer_id + 1)
                    lines.append(f"record producer-ids first={record.first_producer_id}")
                case OffsetsCommitted():
                    offs = ",".join(
                        f"{o.topic_id}-{o.partition}@{o.offset}" for o in record.offsets
                    )
                    lines.append(f"record offsets-committed {record.group_id} {offs}")
                case TransactionRemoved():
                    self.registry.apply(record)
                    lines.append(f"record removed {record.transactional_id}")
                case TransactionRecord():
                    self.registry.apply(record)
                    lines.append(f"record {_describe(record)}")
        return lines

    def _run(self, name: str, args: list[str]) -> list[str]:
        opts = dict(a.split("=", 1) for a in args if "=" in a)
        pos = [a for a in args if "=" not in a]
        reg = self.registry
        if name == "clock":
            self.now_ms = int(pos[0])
            return []
        if name == "init":
            expected = None
            if "expect" in opts:
                pid, epoch = opts["expect"].split("/")
                expected = (int(pid), int(epoch))
            timeout = int(opts.get("timeout", "60000"))
            return self._apply(
                tc.init_producer_id(
                    reg, CONFIG, pos[0], timeout, self.now_ms, self.next_pid, expected
                )
            )
        if name == "state":
            record = reg.get(pos[0])
            return [_describe(record) if record else "none"]
        if name == "markers":
            return [
                f"task {t.transactional_id} pid={t.producer_id} epoch={t.producer_epoch} "
                f"{'commit' if t.commit else 'abort'} "
                + (",".join(f"{p.topic}-{p.partition}" for p in t.partitions) or "-")
                for t in tc.pending_markers(reg)
            ] or ["none"]
        if name == "written":  # written T [t-0 ...]: all of the task's partitions by default
            task = next(t for t in tc.pending_markers(reg) if t.transactional_id == pos[0])
            parts = [_partition(a) for a in pos[1:]] or task.partitions
            pid, epoch = task.producer_id, task.producer_epoch
            return self._apply(
                tc.markers_written(reg, pos[0], pid, epoch, parts, self.now_ms, TOPIC_IDS)
            )
        if name == "expire":
            return self._commit(list(tc.expire_timed_out(reg, self.now_ms))) or ["none"]
        if name == "expire-idle":
            return self._commit(list(tc.expire_idle(reg, CONFIG, self.now_ms))) or ["none"]
        txn, pid, epoch, rest = pos[0], int(pos[1]), int(pos[2]), pos[3:]
        if name == "add":
            return self._apply(
                tc.add_partitions(reg, txn, pid, epoch, map(_partition, rest), self.now_ms)
            )
        if name == "offsets":
            return self._apply(tc.add_partitions(reg, txn, pid, epoch, [], self.now_ms, rest[0]))
        if name == "commit-offsets":
            group, items = rest[0], rest[1:]
            offsets = []
            for item in items:
                where, _, offset = item.partition("@")
                p = _partition(where)
                offsets.append(TxnOffset(group, p.topic, p.partition, int(offset)))
            return self._apply(tc.txn_offset_commit(reg, txn, pid, epoch, offsets, self.now_ms))
        if name == "verify":
            verdicts = tc.verify_partitions(reg, txn, pid, epoch, [_partition(r) for r in rest])
            return [f"{p.topic}-{p.partition}: {code.name}" for p, code in verdicts.items()]
        if name == "end":
            return self._apply(tc.end_txn(reg, txn, pid, epoch, rest[0] == "commit", self.now_ms))
        raise ValueError(f"unknown command {name!r}")


@each_golden_file(TESTDATA)
def test_golden(path: Path) -> None:
    check_golden(path, Script().run)


def test_the_golden_files_exist() -> None:
    assert {p.stem for p in golden_files(TESTDATA)} >= {
        "lifecycle",
        "fencing",
        "timeouts",
        "offsets",
    }


def test_the_limits_are_checked_at_start_up() -> None:
    with pytest.raises(ValueError, match=r"transaction\.max\.timeout\.ms"):
        tc.TxnConfig(transaction_max_timeout_ms=0).check()
    tc.TxnConfig().check()


def test_transaction_records_travel_through_the_metadata_log_and_snapshots() -> None:
    script = Script()
    for command in [
        "init app",
        "add app 1000 0 t-0",
        "offsets app 1000 0 g",
        "end app 1000 0 abort",
    ]:
        script.run(command)
    state = MetadataState()
    index = 0
    for record in script.registry.transactions.values():
        index += 1
        state.apply_entry(index, decode_entry(encode_entry([record])))
    assert state.transactions.transactions == script.registry.transactions
    restored = MetadataState.from_snapshot(state.to_snapshot())
    assert restored.transactions.transactions == script.registry.transactions
    state.apply_entry(index + 1, decode_entry(encode_entry([TransactionRemoved("app")])))
    assert state.transactions.get("app") is None


def test_an_epoch_about_to_overflow_starts_a_new_producer_id() -> None:
    registry = TxnRegistry()
    registry.apply(TransactionRecord("app", 7, tc.MAX_PRODUCER_EPOCH, 1, 1000, 0))
    answer = tc.init_producer_id(registry, CONFIG, "app", 1000, 0, 50)
    assert (answer.producer_id, answer.producer_epoch) == (50, 0)
    assert isinstance(answer.records[0], ProducerIds)


def test_a_late_report_of_the_previous_transaction_does_not_complete_the_next() -> None:
    """A producer keeps its id and epoch from one transaction to the next. A leader's report
    of the previous transaction's markers that arrives once the next one is decided (a
    retried report, after a pause) must not take that partition off the next one's list:
    it did, and the next transaction completed without its marker there (the transactional
    chaos workload, seed 20: a committed record aborted by the producer's next abort)."""
    registry = TxnRegistry()
    parts = [TxnPartition("t", 1), TxnPartition("t", 2)]
    state = int(TxnState.PREPARE_COMMIT)
    registry.apply(TransactionRecord("app", 7, 0, -1, 60_000, state, parts, started_ms=200))
    late = tc.markers_written(registry, "app", 7, 0, [TxnPartition("t", 2)], 300, TOPIC_IDS, 100)
    assert late.error == ErrorCode.INVALID_TXN_STATE and late.records == []
    own = tc.markers_written(registry, "app", 7, 0, parts, 300, TOPIC_IDS, 200)
    assert own.error == ErrorCode.NONE
    (record,) = own.records
    assert isinstance(record, TransactionRecord)
    assert record.txn_state is TxnState.COMPLETE_COMMIT
