"""Values kept in their encoded CBOR form, spliced into frames without encoding them again.

Some answers are large and change rarely: the metadata of a 10,000-partition topic is about
700 KB of CBOR and, built and encoded on every Metadata request, cost a node tens of
milliseconds of event loop each time (hundreds under load). A node keeps such a value as
:class:`EncodedCBOR` and the frame encoder writes its bytes as they are, so an unchanged
answer costs a copy. The bytes on the wire are exactly those the value itself would encode
to (tests compare them), so a peer cannot tell the difference.

A message subclass derived from :class:`PreEncoded` carries its own encoded form: the schema
encodes any instance of it with :meth:`PreEncoded.wire_form`, while code that reads its fields
(authorization, the Kafka listener's translations) sees an ordinary message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cbor2


@dataclass(frozen=True, slots=True)
class EncodedCBOR:
    """One complete CBOR data item (``data``), to be written as is."""

    data: bytes


class PreEncoded:
    """Base of a message subclass whose instances carry their own encoded form."""

    __slots__ = ()

    def wire_form(self, blobs: list[Any]) -> EncodedCBOR | Any:
        """The encoded form; one that refers to blobs appends them to ``blobs`` (the
        frame's blob list so far)."""
        raise NotImplementedError


def splice_encoded(encoder: cbor2.CBOREncoder, value: Any) -> None:
    """cbor2 ``default`` hook: write an :class:`EncodedCBOR` as its bytes; refuse the rest."""
    if type(value) is EncodedCBOR:
        encoder.write(value.data)
        return
    raise cbor2.CBOREncodeTypeError(f"cannot encode {type(value).__name__} as CBOR")


def encode_cbor(value: Any) -> EncodedCBOR:
    """``value`` (CBOR-ready maps, lists and scalars, possibly holding :class:`EncodedCBOR`
    parts) encoded once."""
    return EncodedCBOR(cbor2.dumps(value, default=splice_encoded))


def encoded_array(items: list[EncodedCBOR]) -> EncodedCBOR:
    """A CBOR array of already encoded items: its head, then the items' bytes."""
    return EncodedCBOR(_array_head(len(items)) + b"".join([i.data for i in items]))


def _array_head(length: int) -> bytes:
    # Major type 4 (array) with the length in the smallest form CBOR allows, as cbor2 writes.
    if length < 24:
        return bytes([0x80 | length])
    if length < 0x100:
        return bytes([0x98, length])
    if length < 0x10000:
        return b"\x99" + length.to_bytes(2, "big")
    if length < 0x100000000:
        return b"\x9a" + length.to_bytes(4, "big")
    return b"\x9b" + length.to_bytes(8, "big")
