"""Users' SCRAM credentials in the metadata log: what the controller decides, what every
node's state holds after applying it, and that a snapshot keeps it byte for byte."""

from __future__ import annotations

import random

from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.records import decode_record, encode_record
from rillet.metadata_quorum.scram_registry import RemoveUserScramCredential, UserScramCredential
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode

ALICE = UserScramCredential("alice", "SCRAM-SHA-256", b"salt", 4096, b"s" * 32, b"k" * 32)
ALICE_512 = UserScramCredential("alice", "SCRAM-SHA-512", b"salt", 4096, b"s" * 64, b"k" * 64)


def apply_all(state: MetadataState, records: list[object]) -> None:
    state.apply_entry(state.last_applied_index + 1, records)  # type: ignore[arg-type]


def test_set_change_and_remove() -> None:
    ctl = Controller(ControllerConfig(9000), random.Random(1))
    state = MetadataState()
    decided = ctl.alter_scram_credentials(state, [ALICE, ALICE_512], [])
    assert decided.error == ErrorCode.NONE and decided.records == [ALICE, ALICE_512]
    apply_all(state, decided.records)
    assert state.scram.users() == {"alice": [("SCRAM-SHA-256", 4096), ("SCRAM-SHA-512", 4096)]}
    assert ctl.alter_scram_credentials(state, [ALICE], []).records == []  # a resend
    missing = ctl.alter_scram_credentials(state, [], [("bob", "SCRAM-SHA-256")])
    assert missing.error == ErrorCode.RESOURCE_NOT_FOUND and missing.records == []
    removed = ctl.alter_scram_credentials(state, [], [("alice", "SCRAM-SHA-512")])
    assert removed.records == [RemoveUserScramCredential("alice", "SCRAM-SHA-512")]
    apply_all(state, removed.records)
    assert state.scram.get("alice", "SCRAM-SHA-256") == ALICE
    assert state.scram.get("alice", "SCRAM-SHA-512") is None


def test_records_and_snapshots_round_trip() -> None:
    for record in (ALICE, RemoveUserScramCredential("alice", "SCRAM-SHA-256")):
        assert decode_record(encode_record(record)) == record
    state = MetadataState()
    apply_all(state, [ALICE, ALICE_512])
    again = MetadataState.from_snapshot(state.to_snapshot())
    assert again.to_snapshot() == state.to_snapshot()
    assert again.scram.get("alice", "SCRAM-SHA-512") == ALICE_512
