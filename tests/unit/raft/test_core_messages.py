"""Raft messages round-trip through the CBOR codec, and garbage never escapes as anything
but MalformedMessage (the transport drops such frames and carries on)."""

from __future__ import annotations

import random

import cbor2
import pytest

from rillet.raft.core_errors import MalformedMessage
from rillet.raft.errors import RaftError
from rillet.raft.message_codec import decode_message, encode_message
from rillet.raft.messages import (
    MESSAGE_TYPES,
    AppendEntries,
    AppendResponse,
    EntryKind,
    Heartbeat,
    HeartbeatResponse,
    InstallSnapshot,
    LogEntry,
    Message,
    ReadIndexRequest,
    ReadIndexResponse,
    TimeoutNow,
    VoteRequest,
    VoteResponse,
    describe,
)
from rillet.raft.quorum import Snapshot

ENTRIES = (
    LogEntry(5, 2, b"", EntryKind.LEADER_NOOP),
    LogEntry(6, 2, b"hello"),
    LogEntry(7, 3, bytes(range(256))),
)
SAMPLES: list[Message] = [
    AppendEntries(3, 1, 2, 4, 2, ENTRIES, 6),
    AppendEntries(3, 1, 2, 0, 0, (), 0),
    AppendResponse(3, 2, 1, 7),
    AppendResponse(3, 2, 1, 9, reject=True, reject_hint=4, hint_term=2),
    Heartbeat(3, 1, 2, 6, read_id=12),
    HeartbeatResponse(3, 2, 1, read_id=12),
    VoteRequest(4, 3, 1, 7, 3, pre_vote=True),
    VoteRequest(4, 3, 1, 7, 3, transfer=True),
    VoteResponse(4, 1, 3, True, pre_vote=True),
    InstallSnapshot(3, 1, 2, Snapshot(20, 3, b"state")),
    TimeoutNow(3, 1, 2),
    ReadIndexRequest(3, 2, 1, b"ctx"),
    ReadIndexResponse(3, 1, 2, 6, b"ctx"),
]


def test_every_message_type_has_a_sample() -> None:
    assert {type(m) for m in SAMPLES} == set(MESSAGE_TYPES)


@pytest.mark.parametrize("message", SAMPLES, ids=lambda m: type(m).__name__)
def test_round_trip(message: Message) -> None:
    data = encode_message(message)
    assert decode_message(data) == message
    assert describe(message).startswith(f"{message.sender}->{message.recipient} ")


def test_the_encoding_is_compact_arrays_not_pickles() -> None:
    data = encode_message(AppendEntries(3, 1, 2, 4, 2, (LogEntry(5, 3, b"x"),), 4))
    assert cbor2.loads(data) == [1, 1, 3, 1, 2, 4, 2, [[5, 3, 0, b"x"]], 4]
    assert len(data) < 20


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ([2, 1, 3, 1, 2, 4, 2, [], 4], "unsupported codec version"),
        ([1, 99, 3], "unknown message type"),
        ([1, True, 3], "unknown message type"),
        ([1, 11, 3, 1, 2], "unknown message type"),
        ([1, 8, 3, 1], "expected 3 fields"),
        ([1, 8, -1, 1, 2], "unsigned int"),
        ([1, 8, 3, 0, 2], "node ids start at 1"),
        ([1, 8, 3, True, 2], "unsigned int"),
        ([1, 8, 1 << 64, 1, 2], "unsigned int"),
        ([1, 3, 3, 1, 2, 6, "7"], "unsigned int"),
        ([1, 4, 3, 1, 2, "x"], "unsigned int"),
        ([1, 2, 3, 2, 1, 7, 1, 0, 0], "bool"),
        ([1, 1, 3, 1, 2, 4, 2, [[5, 3, 9, b""]], 4], "unknown entry kind"),
        ([1, 1, 3, 1, 2, 4, 2, [[5, 3, 0, "text"]], 4], "bytes"),
        ([1, 1, 3, 1, 2, 4, 2, [[5, 3, 0, b""], [7, 3, 0, b""]], 4], "not consecutive"),
        ([1, 1, 3, 1, 2, 4, 2, {"a": 1}, 4], "array of entries"),
        ([1, 7, 3, 1, 2, [20, 3]], "array of 4"),
        ({"type": 1}, "array"),
        ([1], "array"),
    ],
)
def test_malformed_values_are_refused_with_the_reason(value: object, why: str) -> None:
    with pytest.raises(MalformedMessage, match=why):
        decode_message(cbor2.dumps(value))


def test_trailing_and_truncated_bytes_are_refused() -> None:
    data = encode_message(TimeoutNow(3, 1, 2))
    with pytest.raises(MalformedMessage, match="trailing"):
        decode_message(data + b"\x00")
    for cut in range(len(data)):
        with pytest.raises(MalformedMessage):
            decode_message(data[:cut])


def test_deep_nesting_is_refused_without_recursion_errors() -> None:
    with pytest.raises(MalformedMessage):
        decode_message(b"\x81" * 100_000 + b"\x00")


def test_fuzz_random_and_mutated_bytes_raise_only_the_typed_error() -> None:
    """Random bytes, and valid encodings with bytes flipped, cut or spliced: decoding either
    yields a message or raises MalformedMessage, never anything else."""
    rng = random.Random(4)
    valid = [encode_message(m) for m in SAMPLES]
    decoded = 0
    for _ in range(6000):
        choice = rng.random()
        if choice < 0.3:
            data = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 40)))
        else:
            mutated = bytearray(rng.choice(valid))
            for _ in range(rng.randint(1, 3)):
                position = rng.randrange(len(mutated))
                if choice < 0.8:
                    mutated[position] = rng.getrandbits(8)
                elif choice < 0.9:
                    del mutated[position:]
                    mutated += rng.choice(valid)[position:]
                else:
                    mutated.insert(position, rng.getrandbits(8))
                if not mutated:
                    break
            data = bytes(mutated)
        try:
            message = decode_message(data)
        except MalformedMessage:
            continue
        except Exception as exc:  # pragma: no cover - this is the failure being tested for
            pytest.fail(f"{data!r} raised {type(exc).__name__}: {exc}")
        decoded += 1
        assert isinstance(message, MESSAGE_TYPES)
    assert decoded > 0  # some mutations stay valid: the fuzzer reaches past the header


def test_malformed_message_is_a_raft_error() -> None:
    assert issubclass(MalformedMessage, RaftError)
