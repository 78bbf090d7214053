"""The compiled codecs (wire/compiled_codec.py) against the schema's checked path.

Every message and metadata record type: the compiled encoder writes what a plain walk of
the dataclass writes (same maps in the same order, same blob sequence), and the compiled
decoder, where it accepts a value, returns exactly what the checked decoder returns; where
the checked decoder refuses a value (a mutated field), the compiled one refuses it too.
"""

from __future__ import annotations

import dataclasses
import typing
from enum import IntEnum
from typing import Any

import cbor2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wire_helpers import cbor_values, strategy_for

from rillet.metadata_quorum.records import TYPES as RECORD_TYPES
from rillet.wire import messages as m
from rillet.wire import schema
from rillet.wire.compiled_codec import CompiledCodecs, Refused, is_blob
from rillet.wire.encoded import PreEncoded
from rillet.wire.error_codes import ErrorCode
from rillet.wire.errors import MalformedMessage

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MESSAGE_TYPES = sorted(
    {t for pair in m.REQUEST_TYPES.values() for t in pair} | set(RECORD_TYPES.values()),
    key=lambda t: t.__name__,
)
messages = st.one_of([strategy_for(t) for t in MESSAGE_TYPES])


def plain_walk(value: Any, tp: Any, blobs: list[Any]) -> Any:
    """What a message encodes to, written the obvious way: the reference for the encoder."""
    if value is None:
        return None
    if is_blob(tp):
        blobs.append(value)
        return len(blobs) - 1
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        return {
            f.name: plain_walk(getattr(value, f.name), hints[f.name], blobs)
            for f in dataclasses.fields(tp)
        }
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is list:
        return [plain_walk(x, args[0], blobs) for x in value]
    if origin is dict:
        return {k: plain_walk(x, args[1], blobs) for k, x in value.items()}
    if origin is not None:  # T | None
        (inner,) = [a for a in args if a is not type(None)]
        return plain_walk(value, inner, blobs)
    if isinstance(tp, type) and issubclass(tp, IntEnum):
        return int(value)
    return value


def checked_decode(cls: type, value: Any, blobs: list[memoryview]) -> Any:
    return schema._decoder_for(cls)(value, blobs, cls.__name__)


def received(message: Any) -> tuple[Any, list[memoryview]]:
    """The message's wire form as a peer decodes it from CBOR, and its blobs."""
    blobs: list[Any] = []
    wire = schema.to_wire(message, blobs)
    views = [memoryview(bytes(b)) for b in blobs]
    return cbor2.loads(cbor2.dumps(wire)), views


@SETTINGS
@given(message=messages)
def test_the_compiled_encoder_writes_what_a_plain_walk_writes(message: Any) -> None:
    compiled: list[Any] = []
    plain: list[Any] = []
    wire = schema.to_wire(message, compiled)
    assert cbor2.dumps(wire) == cbor2.dumps(plain_walk(message, type(message), plain))
    assert compiled == plain


@SETTINGS
@given(message=messages)
def test_the_compiled_decoder_returns_what_the_checked_one_returns(message: Any) -> None:
    cls = type(message)
    value, blobs = received(message)
    fast = schema._compiled.decoder(cls)(value, blobs)
    assert fast == checked_decode(cls, value, blobs) == message


def _mutate(value: Any, draw: st.DrawFn) -> Any:
    """``value`` with one map entry somewhere inside replaced by an arbitrary CBOR value,
    or dropped."""
    if isinstance(value, dict) and value:
        key = draw(st.sampled_from(sorted(value)))
        out = dict(value)
        if draw(st.booleans()):
            out[key] = _mutate(value[key], draw)
        elif draw(st.booleans()):
            del out[key]
        else:
            out[key] = draw(cbor_values)
        return out
    if isinstance(value, list) and value:
        index = draw(st.integers(0, len(value) - 1))
        out_list = list(value)
        out_list[index] = _mutate(value[index], draw)
        return out_list
    return draw(cbor_values)


@SETTINGS
@given(message=messages, data=st.data())
def test_the_compiled_decoder_accepts_nothing_the_checked_one_refuses(
    message: Any, data: st.DataObject
) -> None:
    cls = type(message)
    value, blobs = received(message)
    bad = _mutate(value, data.draw)
    try:
        expected = checked_decode(cls, bad, blobs)
    except MalformedMessage:
        with pytest.raises(Exception):  # noqa: B017 - Refused, or the enum's ValueError
            schema._compiled.decoder(cls)(bad, blobs)
        with pytest.raises(MalformedMessage):
            schema.from_wire(cls, bad, blobs)
        return
    try:
        fast = schema._compiled.decoder(cls)(bad, blobs)
    except Exception:  # refused: from_wire takes the checked path
        fast = schema.from_wire(cls, bad, blobs)
    assert fast == expected


def test_an_in_process_value_the_fast_path_refuses_is_taken_by_the_checked_path() -> None:
    # An IntEnum in an int field: never on the wire, but an in-process round trip keeps it.
    response = m.FetchPartitionResponse("t", 0, ErrorCode.NOT_LEADER_OR_FOLLOWER, 5, 0, b"")
    blobs: list[Any] = []
    wire = schema.to_wire(response, blobs)
    with pytest.raises(Refused):
        schema._compiled.decoder(m.FetchPartitionResponse)(wire, blobs)
    assert schema.from_wire(m.FetchPartitionResponse, wire, blobs) == response


def test_a_pre_encoded_value_hands_its_blobs_to_the_frame() -> None:
    class Carried(m.FetchResponse, PreEncoded):
        def wire_form(self, blobs: list[Any]) -> Any:
            blobs.append(b"records")
            return {"partitions": [], "blob": len(blobs) - 1}

    blobs: list[Any] = [b"earlier"]
    codecs = CompiledCodecs(PreEncoded)
    assert codecs.encoder(Carried)(Carried([]), blobs) == {"partitions": [], "blob": 1}
    assert blobs == [b"earlier", b"records"]
