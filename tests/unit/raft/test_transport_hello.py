"""The hello check of the Raft transport, without sockets: it asks for the frame header
first, refuses an oversized declared length before any of it is read, checks the MAC before
decoding, and never asks for more than one small hello frame."""

from __future__ import annotations

import struct

import cbor2

from rillet.raft.transport import derive_key
from rillet.raft.transport_frames import frame_bytes
from rillet.raft.transport_hello import (
    HELLO_FRAME_MAX_BYTES,
    HELLO_MAX_BYTES,
    BadHello,
    Hello,
    HelloCheck,
    hello_frame,
    hello_mac,
)

KEY = derive_key("a-cluster-secret-of-some-length")
OUR_NONCE = bytes(range(16))
THEIR_NONCE = bytes(range(16, 32))
MIB = 1024 * 1024


def check() -> HelloCheck:
    return HelloCheck(KEY, OUR_NONCE, node_id=1, peers={2, 3})


def fed_as_asked(hello: HelloCheck, data: bytes) -> tuple[Hello | BadHello | None, int]:
    """Feed ``data`` in the pieces a driver reads (at most ``wanted`` at a time); the
    verdict and the number of bytes taken for it."""
    taken = 0
    while taken < len(data):
        assert 0 < hello.wanted <= HELLO_FRAME_MAX_BYTES
        piece = data[taken : taken + hello.wanted]
        taken += len(piece)
        verdict = hello.feed(piece)
        if verdict is not None:
            return verdict, taken
    return None, taken


def authentic(payload: bytes) -> bytes:
    return frame_bytes(hello_mac(KEY, OUR_NONCE, payload), payload)


def test_an_authentic_hello_names_its_peer_and_nonce() -> None:
    frame = hello_frame(KEY, OUR_NONCE, sender=2, receiver=1, nonce=THEIR_NONCE)
    assert fed_as_asked(check(), frame) == (Hello(2, THEIR_NONCE), len(frame))


def test_a_hello_arriving_a_byte_at_a_time_is_the_same_hello() -> None:
    frame = hello_frame(KEY, OUR_NONCE, sender=3, receiver=1, nonce=THEIR_NONCE)
    hello = check()
    verdicts = [hello.feed(frame[i : i + 1]) for i in range(len(frame))]
    assert verdicts[:-1] == [None] * (len(frame) - 1)
    assert verdicts[-1] == Hello(3, THEIR_NONCE)
    assert hello.wanted == 0


def test_the_largest_hello_a_peer_can_send_fits_the_cap() -> None:
    frame = hello_frame(KEY, OUR_NONCE, sender=2**64 - 1, receiver=2**64 - 1, nonce=THEIR_NONCE)
    assert len(frame) <= HELLO_FRAME_MAX_BYTES


def test_a_declared_60_mib_hello_is_refused_after_its_four_byte_header() -> None:
    hello = check()
    assert hello.wanted == 4  # nothing past the length is asked for before it is checked
    verdict, taken = fed_as_asked(hello, struct.pack(">I", 60 * MIB) + b"\0" * 1000)
    assert isinstance(verdict, BadHello) and not verdict.mac_failed
    assert "62914560 bytes" in verdict.reason
    assert taken == 4


def test_one_byte_over_the_cap_is_refused_and_the_cap_itself_is_read() -> None:
    over, taken = fed_as_asked(check(), struct.pack(">I", HELLO_MAX_BYTES + 1))
    assert isinstance(over, BadHello) and taken == 4
    hello = check()
    assert hello.feed(struct.pack(">I", HELLO_MAX_BYTES)) is None
    assert hello.wanted == 32 + HELLO_MAX_BYTES


def test_a_hello_without_the_secret_fails_its_mac_before_being_decoded() -> None:
    other = derive_key("another-secret-entirely")
    forged = hello_frame(other, OUR_NONCE, sender=2, receiver=1, nonce=THEIR_NONCE)
    verdict, _ = fed_as_asked(check(), forged)
    assert verdict == BadHello("hello failed authentication (wrong cluster secret?)", True)
    garbage = frame_bytes(b"\0" * 32, b"\xff" * 20)  # not CBOR either: the MAC fails first
    verdict, _ = fed_as_asked(check(), garbage)
    assert isinstance(verdict, BadHello) and verdict.mac_failed


def test_a_hello_for_another_node_from_a_stranger_or_malformed_is_refused() -> None:
    payloads = [
        cbor2.dumps([2, 9, THEIR_NONCE]),  # for node 9
        cbor2.dumps([7, 1, THEIR_NONCE]),  # from a node that is not a peer
        cbor2.dumps([[2], 1, THEIR_NONCE]),  # an unhashable sender
        cbor2.dumps([2, 1, b"short"]),  # a nonce of the wrong size
        cbor2.dumps([2, 1]),  # two fields
        cbor2.dumps({"a": 1}),  # not a list
        b"\xff\xff",  # not CBOR
    ]
    for payload in payloads:
        verdict, _ = fed_as_asked(check(), authentic(payload))
        assert isinstance(verdict, BadHello) and not verdict.mac_failed, payload


def test_bytes_beyond_the_hello_are_refused() -> None:
    frame = hello_frame(KEY, OUR_NONCE, sender=2, receiver=1, nonce=THEIR_NONCE)
    verdict = check().feed(frame + b"x")
    assert isinstance(verdict, BadHello) and "more than a hello" in verdict.reason
