"""A follower's fetch answer, filtered to the partitions with news and encoded in slices of
event-loop time.

The leader reads a session fetch's partitions in slices (handlers/fetch.py), but what came
after the read ran in one stretch: keeping the partitions with news and encoding the
answer, each a pass over every partition read. With 10,000 partitions on three nodes a
leader answers each follower with up to 3,333 entries, and those two passes plus the send
held the loop for 30-200 ms per answer under load. Here each entry is filtered and encoded
in turn, yielding every slice, and the answer carries its encoded form: the frame encoder
splices it (wire/encoded.py), and the bytes are those the whole answer encodes to (tests
compare them).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cbor2

from rillet.broker.runtime.loop_slices import TimeSlicer
from rillet.wire.encoded import EncodedCBOR, PreEncoded, encoded_array
from rillet.wire.frame import BlobPart, FileRegion
from rillet.wire.messages import FetchPartitionResponse, FetchResponse
from rillet.wire.schema import to_wire

_NOT_ENCODED = EncodedCBOR(b"")


@dataclass(frozen=True, slots=True)
class EncodedFetchResponse(FetchResponse, PreEncoded):
    """An answer with its encoded partitions (``encoded_partitions``) and the blobs they
    refer to, numbered from the frame's first blob."""

    encoded_partitions: EncodedCBOR = _NOT_ENCODED
    blobs: tuple[BlobPart, ...] = ()

    def wire_form(self, blobs: list[BlobPart]) -> Any:
        if blobs:  # not the frame's first blobs (never so for an answer): encode afresh
            return to_wire(FetchResponse(self.partitions, self.error_code), blobs)
        blobs.extend(self.blobs)
        return {"partitions": self.encoded_partitions, "error_code": self.error_code}


async def encoded_answer(
    response: FetchResponse, keeps: Callable[[FetchPartitionResponse], bool]
) -> EncodedFetchResponse:
    """``response`` cut to the partitions ``keeps`` (the fetch session's filter, which
    records what was answered), each entry encoded as it is kept, yielding between slices.
    Cancelled midway, it closes every file region ``response`` holds."""
    slicer = TimeSlicer()
    kept: list[FetchPartitionResponse] = []
    encoded: list[EncodedCBOR] = []
    blobs: list[BlobPart] = []
    done = 0  # entries kept or released so far
    try:
        for r in response.partitions:
            await slicer.step()
            if keeps(r):
                kept.append(r)
                encoded.append(EncodedCBOR(cbor2.dumps(to_wire(r, blobs))))
            else:  # the filter keeps every entry with records: nothing to release, normally
                _release(r)
            done += 1
    except BaseException:
        for r in [*kept, *response.partitions[done:]]:
            _release(r)
        raise
    return EncodedFetchResponse(
        kept, response.error_code, encoded_partitions=encoded_array(encoded), blobs=tuple(blobs)
    )


def _release(r: FetchPartitionResponse) -> None:
    if isinstance(r.records, FileRegion):
        os.close(r.records.fd)
