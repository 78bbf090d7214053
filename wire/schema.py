"""Dataclass <-> CBOR-ready values, with strict type checking on the way in.

Messages are plain frozen dataclasses. ``to_wire`` turns one into maps and lists for CBOR;
``from_wire`` checks every field against its annotation and raises MalformedMessage with the
path of the first bad field, so bad input becomes a typed INVALID_REQUEST, never a crash deep
in a handler. Fields typed :data:`Blob` carry raw bytes out of band: ``to_wire`` moves them to
the frame's blob list and leaves their index in the map; ``from_wire`` puts them back.

A field missing on the wire takes its dataclass default, so a newer peer may add fields with
defaults without breaking an older one.

Both directions first go through code compiled for each dataclass (wire/compiled_codec.py);
the checks here, which build each value's path, run only for what that code refuses.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from enum import IntEnum
from typing import Annotated, Any, TypeVar, get_args, get_origin

from rillet.wire.compiled_codec import (
    MAX_LIST_ITEMS,
    BlobMarker,
    CompiledCodecs,
    is_blob,
    optional_inner,
)
from rillet.wire.encoded import PreEncoded
from rillet.wire.errors import MalformedMessage
from rillet.wire.frame import BlobPart, FileRegion

Blob = Annotated[bytes | memoryview | FileRegion, BlobMarker]

T = TypeVar("T")
Decoder = Callable[[Any, list[memoryview], str], Any]

_decoders: dict[Any, Decoder] = {}
_compiled = CompiledCodecs(PreEncoded)


def to_wire(obj: Any, blobs: list[BlobPart]) -> Any:
    """Encode a message dataclass, appending blob fields to ``blobs``."""
    return _compiled.encoder(type(obj))(obj, blobs)


def from_wire(cls: type[T], value: Any, blobs: list[memoryview]) -> T:
    """Decode and validate ``value`` as ``cls``; raises MalformedMessage. The compiled
    decoder takes what it can; anything it refuses is decoded again here, field by field,
    which names the first bad field or accepts what only this path does."""
    try:
        fast: T = _compiled.decoder(cls)(value, blobs)
        return fast
    except Exception:  # refused or invalid: the checked path below says which
        pass
    result: T = _decoder_for(cls)(value, blobs, cls.__name__)
    return result


def _fail(path: str, expected: str, value: Any) -> MalformedMessage:
    shown = type(value).__name__
    return MalformedMessage(f"{path}: expected {expected}, got {shown}")


def _decoder_for(tp: Any) -> Decoder:
    dec = _decoders.get(tp)
    if dec is None:
        dec = _build_decoder(tp)
        _decoders[tp] = dec
    return dec


def _build_decoder(tp: Any) -> Decoder:
    if is_blob(tp):

        def dec_blob(v: Any, blobs: list[memoryview], path: str) -> Any:
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < len(blobs):
                raise _fail(path, "a blob index", v)
            return blobs[v]

        return dec_blob
    if dataclasses.is_dataclass(tp):
        return _dataclass_decoder(tp)
    optional = optional_inner(tp)
    if optional is not None:
        inner = _decoder_for(optional)

        def dec_optional(v: Any, blobs: list[memoryview], path: str) -> Any:
            return None if v is None else inner(v, blobs, path)

        return dec_optional
    origin = get_origin(tp)
    if origin is list:
        (item_tp,) = get_args(tp)
        item = _decoder_for(item_tp)

        def dec_list(v: Any, blobs: list[memoryview], path: str) -> Any:
            if not isinstance(v, list):
                raise _fail(path, "a list", v)
            if len(v) > MAX_LIST_ITEMS:
                raise MalformedMessage(f"{path}: list of {len(v)} items is too long")
            return [item(x, blobs, f"{path}[{i}]") for i, x in enumerate(v)]

        return dec_list
    if origin is dict:
        key_tp, val_tp = get_args(tp)
        if key_tp is not str:
            raise TypeError("only str-keyed dicts are supported")
        val = _decoder_for(val_tp)

        def dec_dict(v: Any, blobs: list[memoryview], path: str) -> Any:
            if not isinstance(v, dict) or not all(isinstance(k, str) for k in v):
                raise _fail(path, "a map with text keys", v)
            return {k: val(x, blobs, f"{path}.{k}") for k, x in v.items()}

        return dec_dict
    if isinstance(tp, type) and issubclass(tp, IntEnum):
        enum_tp = tp

        def dec_enum(v: Any, blobs: list[memoryview], path: str) -> Any:
            if not isinstance(v, int) or isinstance(v, bool):
                raise _fail(path, enum_tp.__name__, v)
            try:
                return enum_tp(v)
            except ValueError:
                raise MalformedMessage(f"{path}: not a valid {enum_tp.__name__}") from None

        return dec_enum
    if tp is bool:
        return _scalar(lambda v: isinstance(v, bool), "a bool")
    if tp is int:
        return _scalar(lambda v: isinstance(v, int) and not isinstance(v, bool), "an int")
    if tp is float:
        return _scalar(lambda v: isinstance(v, int | float) and not isinstance(v, bool), "a number")
    if tp is str:
        return _scalar(lambda v: isinstance(v, str), "text")
    if tp is bytes:
        return _scalar(lambda v: isinstance(v, bytes), "bytes")
    raise TypeError(f"unsupported schema type {tp!r}")


def _scalar(check: Callable[[Any], bool], expected: str) -> Decoder:
    def dec(v: Any, blobs: list[memoryview], path: str) -> Any:
        if not check(v):
            raise _fail(path, expected, v)
        return v

    return dec


def _dataclass_decoder(cls: Any) -> Decoder:
    hints = typing.get_type_hints(cls, include_extras=True)
    fields = []
    for f in dataclasses.fields(cls):
        has_default = (
            f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        )
        fields.append((f.name, _decoder_for(hints[f.name]), has_default))
    name = cls.__name__

    def dec(v: Any, blobs: list[memoryview], path: str) -> Any:
        if not isinstance(v, dict):
            raise _fail(path, f"a {name} map", v)
        kwargs = {}
        for fname, fdec, has_default in fields:
            if fname in v:
                kwargs[fname] = fdec(v[fname], blobs, f"{path}.{fname}")
            elif not has_default:
                raise MalformedMessage(f"{path}: missing field {fname!r}")
        return cls(**kwargs)

    return dec
