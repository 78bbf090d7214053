"""Raft messages in release 0.1.0's form: what a member writes until the cluster's feature
level says every member reads the new one (docs/upgrades.md).

0.1.0 drops a VoteRequest that is not exactly 7 fields and an InstallSnapshot whose
snapshot is not exactly 3, so the old form must be byte for byte what 0.1.0 wrote; this
release reads both forms."""

from __future__ import annotations

import cbor2

from rillet.raft.message_codec import decode_message, encode_message
from rillet.raft.messages import AppendEntries, EntryKind, InstallSnapshot, LogEntry, VoteRequest
from rillet.raft.quorum import Snapshot

DIRECTORY = "0123456789abcdef0123456789abcdef"
VOTE = VoteRequest(5, 1, 2, 40, 4, True, False, DIRECTORY, DIRECTORY[::-1])
SNAPSHOT = InstallSnapshot(5, 1, 3, Snapshot(30, 4, b"state", b"voters"))


def test_a_vote_request_in_the_old_form_is_the_seven_fields_of_release_0_1_0() -> None:
    version, tag, *fields = cbor2.loads(encode_message(VOTE, legacy=True))
    assert fields == [5, 1, 2, 40, 4, True, False]  # term .. transfer, no directory ids
    new = cbor2.loads(encode_message(VOTE))
    assert new[:2] == [version, tag] and new[2:] == [*fields, DIRECTORY, DIRECTORY[::-1]]


def test_an_old_vote_request_reads_as_one_without_directory_ids() -> None:
    read = decode_message(encode_message(VOTE, legacy=True))
    assert read == VoteRequest(5, 1, 2, 40, 4, True, False, "", "")


def test_a_snapshot_in_the_old_form_has_no_voter_configuration() -> None:
    *_, snapshot = cbor2.loads(encode_message(SNAPSHOT, legacy=True))
    assert snapshot == [30, 4, b"state"]
    read = decode_message(encode_message(SNAPSHOT, legacy=True))
    assert read == InstallSnapshot(5, 1, 3, Snapshot(30, 4, b"state", b""))
    assert decode_message(encode_message(SNAPSHOT)) == SNAPSHOT


def test_messages_without_new_fields_are_the_same_in_both_forms() -> None:
    entries = (LogEntry(7, 2, b"x"), LogEntry(8, 2, b"", EntryKind.LEADER_NOOP))
    message = AppendEntries(2, 1, 3, 6, 2, entries, 6)
    assert encode_message(message, legacy=True) == encode_message(message)
    assert decode_message(encode_message(message, legacy=True)) == message
