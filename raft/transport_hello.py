"""The hello of a Raft connection, sans I/O: the one frame an unauthenticated peer may send.

A hello is three small fields, CBOR ``[sender id, receiver id, sender's nonce]``, framed like
every frame (``[length u32][MAC 32 bytes][payload]``) with a MAC over the receiver's nonce.
:class:`HelloCheck` decides from the bytes alone: it asks for no more than the frame header
until the declared length is known, refuses a declared length over :data:`HELLO_MAX_BYTES`
before reading any of it, and checks the MAC before it decodes anything. So a peer that does
not hold the cluster secret can make the receiver hold at most one small hello per
connection, never a data frame's 64 MiB.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import cbor2

from rillet.raft import peer_mac
from rillet.raft.transport_frames import HEADER, MAC_BYTES, frame_bytes

MAGIC = b"RLRF\x01"  # the greeting: these bytes, then the receiver's nonce
# CBOR of [u64, u64, 16 bytes] is at most 1 + 9 + 9 + 17 = 36 bytes; room for nothing else.
HELLO_MAX_BYTES = 64
HELLO_FRAME_MAX_BYTES = HEADER.size + MAC_BYTES + HELLO_MAX_BYTES


def hello_mac(key: bytes, receiver_nonce: bytes, hello: bytes) -> bytes:
    return peer_mac.mac_parts(key, b"hello", receiver_nonce, hello)


def welcome_mac(key: bytes, sender_nonce: bytes, receiver_nonce: bytes) -> bytes:
    """The receiver's proof that it holds the secret too (the MAC of an empty frame)."""
    return peer_mac.mac_parts(key, b"welcome", sender_nonce, receiver_nonce)


def hello_frame(
    key: bytes, receiver_nonce: bytes, sender: int, receiver: int, nonce: bytes
) -> bytes:
    """The hello a dialer sends ``receiver`` after its greeting carried ``receiver_nonce``."""
    hello = cbor2.dumps([sender, receiver, nonce])
    return frame_bytes(hello_mac(key, receiver_nonce, hello), hello)


@dataclass(frozen=True, slots=True)
class Hello:
    """An authentic hello: the peer that sent it and the nonce the welcome is MACed over."""

    sender: int
    nonce: bytes


@dataclass(frozen=True, slots=True)
class BadHello:
    """Close the connection; ``mac_failed``: the sender does not hold the cluster secret."""

    reason: str
    mac_failed: bool = False


class HelloCheck:
    """Feed it the bytes a connection sends after the greeting; it answers None (need
    :attr:`wanted` more bytes), a :class:`Hello` or a :class:`BadHello`. It never asks for
    more than a whole hello frame, so a driver that reads at most :attr:`wanted` bytes at a
    time buffers nothing beyond it."""

    def __init__(self, key: bytes, nonce: bytes, node_id: int, peers: Collection[int]) -> None:
        self._key = key
        self._nonce = nonce
        self._node_id = node_id
        self._peers = frozenset(peers)
        self._buffer = bytearray()
        self._length: int | None = None  # the declared payload length, once read

    @property
    def wanted(self) -> int:
        """Bytes still needed for a verdict (0 once one was given)."""
        if self._length is None:
            return HEADER.size - len(self._buffer)
        return max(0, HEADER.size + MAC_BYTES + self._length - len(self._buffer))

    def feed(self, data: bytes | bytearray) -> Hello | BadHello | None:
        self._buffer += data
        if self._length is None:
            if len(self._buffer) < HEADER.size:
                return None
            (length,) = HEADER.unpack_from(self._buffer)
            if length > HELLO_MAX_BYTES:
                return BadHello(f"declared a hello of {length} bytes (at most {HELLO_MAX_BYTES})")
            self._length = length
        end = HEADER.size + MAC_BYTES + self._length
        if len(self._buffer) < end:
            return None
        if len(self._buffer) > end:
            return BadHello("sent more than a hello before being welcomed")
        mac = bytes(self._buffer[HEADER.size : HEADER.size + MAC_BYTES])
        hello = bytes(self._buffer[HEADER.size + MAC_BYTES :])
        if not peer_mac.macs_equal(mac, hello_mac(self._key, self._nonce, hello)):
            return BadHello("hello failed authentication (wrong cluster secret?)", mac_failed=True)
        return self._decode(hello)

    def _decode(self, hello: bytes) -> Hello | BadHello:
        """Fields of an authentic hello (only a secret holder with a bug gets here)."""
        try:
            fields = cbor2.loads(hello)
        except Exception as exc:  # cbor2 raises several types on bad input
            return BadHello(f"malformed hello: {exc}")
        if not isinstance(fields, list) or len(fields) != 3:
            return BadHello("malformed hello: not three fields")
        sender, receiver, nonce = fields
        if (
            not isinstance(sender, int)
            or receiver != self._node_id
            or sender not in self._peers
            or not isinstance(nonce, bytes)
            or len(nonce) != peer_mac.NONCE_BYTES
        ):
            return BadHello(f"hello from {sender!r} for {receiver!r}: not a peer of ours")
        return Hello(int(sender), nonce)
