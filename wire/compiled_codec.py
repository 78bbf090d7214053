"""Compiled encoders and decoders for message dataclasses: the fast path of wire/schema.py.

The schema's own decoder checks every field through a chain of small functions and builds
the path of each value (``FetchResponse.partitions[12].records``) as it goes, so a bad
field is named in the error. That path is a string formatted for every field of every
entry, and a follower's fetch answer with 3,333 partitions took 40-80 ms of a node's event
loop to decode that way. Here each dataclass gets one generated function that reads its
fields from the map with the type checks written inline and builds no path. It accepts
exactly what the schema's decoder accepts in messages decoded from CBOR; whatever it does
not accept (a malformed message, or an in-process value the schema tolerates, such as an
IntEnum in an ``int`` field) it refuses with :class:`Refused`, and the schema decodes that
value again its own way, which either returns the same result or raises MalformedMessage
with the path. A peer therefore sees the same errors as before, only faster on the good
path.

The encoders are generated the same way (a statement per field, in field order, so maps
keep their order and blob indices their sequence): the bytes are those the plan-based
encoder wrote (tests compare them).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from enum import IntEnum
from typing import Annotated, Any, Union, get_args, get_origin

from rillet.wire.frame import BlobPart

FastDecoder = Callable[[Any, list[memoryview]], Any]
FastEncoder = Callable[[Any, list[BlobPart]], Any]

MAX_LIST_ITEMS = 1_000_000


class Refused(Exception):
    """The fast path does not accept this value (the schema's decoder says why, if it is
    wrong)."""


class BlobMarker:
    """Annotation marker: this field travels as a raw frame blob."""


_MISSING = object()
_SCALAR_CHECKS = {
    int: "type({x}) is not int",
    bool: "type({x}) is not bool",
    str: "type({x}) is not str",
    bytes: "type({x}) is not bytes",
    float: "type({x}) is not float and type({x}) is not int",
}


def is_blob(tp: Any) -> bool:
    return get_origin(tp) is Annotated and BlobMarker in get_args(tp)[1:]


def optional_inner(tp: Any) -> Any | None:
    """``T`` of ``T | None``, else None."""
    if get_origin(tp) not in (Union, types.UnionType):
        return None
    non_none = [o for o in get_args(tp) if o is not type(None)]
    if len(non_none) != 1:
        raise TypeError(f"unsupported union {tp}")
    return non_none[0]


class CompiledCodecs:
    """The compiled decoder and encoder of each type, built on first use. ``pre_encoded``:
    the base class whose instances encode themselves (``wire_form(blobs)``)."""

    def __init__(self, pre_encoded: type, max_list_items: int = MAX_LIST_ITEMS) -> None:
        self._pre_encoded = pre_encoded
        self._max_list_items = max_list_items
        self._decoders: dict[Any, FastDecoder] = {}
        self._encoders: dict[Any, FastEncoder] = {}

    # -- decoding ---------------------------------------------------------------------------

    def decoder(self, tp: Any) -> FastDecoder:
        dec = self._decoders.get(tp)
        if dec is None:
            dec = self._decoders[tp] = self._build_decoder(tp)
        return dec

    def _build_decoder(self, tp: Any) -> FastDecoder:
        if dataclasses.is_dataclass(tp):
            return self._dataclass_decoder(tp)
        if is_blob(tp) or tp in _SCALAR_CHECKS or optional_inner(tp) is not None:
            return self._value_decoder(tp)
        origin = get_origin(tp)
        if origin is list:
            return self._list_decoder(get_args(tp)[0])
        if origin is dict:
            key_tp, val_tp = get_args(tp)
            if key_tp is not str:
                raise TypeError("only str-keyed dicts are supported")
            return self._dict_decoder(val_tp)
        if isinstance(tp, type) and issubclass(tp, IntEnum):
            return self._value_decoder(tp)
        raise TypeError(f"unsupported schema type {tp!r}")

    def _value_decoder(self, tp: Any) -> FastDecoder:
        """A decoder for a type the field code handles inline (scalars, blobs, optionals)."""
        names: dict[str, Any] = {"Refused": Refused}
        lines = ["def dec(v, blobs):"]
        lines += self._field_lines(tp, "v", "out", names, "    ")
        lines.append("    return out")
        return _compile("\n".join(lines), names, "dec")

    def _list_decoder(self, item_tp: Any) -> FastDecoder:
        if item_tp in _SCALAR_CHECKS:
            check = _SCALAR_CHECKS[item_tp].format(x="x")
            names: dict[str, Any] = {"Refused": Refused, "MAX": self._max_list_items}
            source = (
                "def dec(v, blobs):\n"
                "    if type(v) is not list or len(v) > MAX:\n"
                "        raise Refused\n"
                "    for x in v:\n"
                f"        if {check}:\n"
                "            raise Refused\n"
                "    return list(v)\n"
            )
            return _compile(source, names, "dec")
        item = self.decoder(item_tp)
        max_items = self._max_list_items

        def dec_list(v: Any, blobs: list[memoryview]) -> Any:
            if type(v) is not list or len(v) > max_items:
                raise Refused
            return [item(x, blobs) for x in v]

        return dec_list

    def _dict_decoder(self, val_tp: Any) -> FastDecoder:
        val = self.decoder(val_tp)

        def dec_dict(v: Any, blobs: list[memoryview]) -> Any:
            if type(v) is not dict:
                raise Refused
            out = {}
            for k, x in v.items():
                if type(k) is not str:
                    raise Refused
                out[k] = val(x, blobs)
            return out

        return dec_dict

    def _dataclass_decoder(self, cls: Any) -> FastDecoder:
        hints = typing.get_type_hints(cls, include_extras=True)
        names: dict[str, Any] = {"Refused": Refused, "cls": cls, "MISSING": _MISSING}
        lines = [
            "def dec(v, blobs):",
            "    if type(v) is not dict:",
            "        raise Refused",
            "    get = v.get",
        ]
        for i, f in enumerate(dataclasses.fields(cls)):
            target = f"f{i}"
            lines.append(f"    x = get({f.name!r}, MISSING)")
            lines.append("    if x is MISSING:")
            if f.default is not dataclasses.MISSING:
                names[f"d{i}"] = f.default
                lines.append(f"        {target} = d{i}")
            elif f.default_factory is not dataclasses.MISSING:
                names[f"d{i}"] = f.default_factory
                lines.append(f"        {target} = d{i}()")
            else:
                lines.append("        raise Refused")
            lines.append("    else:")
            lines += self._field_lines(hints[f.name], "x", target, names, "        ")
        lines += _construction(cls, [f.name for f in dataclasses.fields(cls)], names)
        return _compile("\n".join(lines), names, "dec")

    def _field_lines(
        self, tp: Any, x: str, target: str, names: dict[str, Any], indent: str
    ) -> list[str]:
        """Statements that check value ``x`` as ``tp`` and set ``target`` to its decoding."""
        if is_blob(tp):
            return [
                f"{indent}if type({x}) is not int or not 0 <= {x} < len(blobs):",
                f"{indent}    raise Refused",
                f"{indent}{target} = blobs[{x}]",
            ]
        inner = optional_inner(tp)
        if inner is not None:
            return [
                f"{indent}if {x} is None:",
                f"{indent}    {target} = None",
                f"{indent}else:",
                *self._field_lines(inner, x, target, names, indent + "    "),
            ]
        check = _SCALAR_CHECKS.get(tp)
        if check is not None:
            return [
                f"{indent}if {check.format(x=x)}:",
                f"{indent}    raise Refused",
                f"{indent}{target} = {x}",
            ]
        name = f"sub{len(names)}"
        if isinstance(tp, type) and issubclass(tp, IntEnum):
            names[name] = tp
            return [
                f"{indent}if type({x}) is not int:",
                f"{indent}    raise Refused",
                f"{indent}{target} = {name}({x})",
            ]
        names[name] = self.decoder(tp)
        return [f"{indent}{target} = {name}({x}, blobs)"]

    # -- encoding ---------------------------------------------------------------------------

    def encoder(self, tp: Any) -> FastEncoder:
        enc = self._encoders.get(tp)
        if enc is None:
            enc = self._encoders[tp] = self._build_encoder(tp)
        return enc

    def _build_encoder(self, tp: Any) -> FastEncoder:
        if isinstance(tp, type) and issubclass(tp, self._pre_encoded):
            return lambda obj, blobs: obj.wire_form(blobs)  # spliced as is (wire/encoded.py)
        if not dataclasses.is_dataclass(tp):
            raise TypeError(f"{tp!r} is not a message dataclass")
        hints = typing.get_type_hints(tp, include_extras=True)
        names: dict[str, Any] = {"tp": tp, "by_type": self.encoder}
        lines = [
            "def enc(obj, blobs):",
            "    if type(obj) is not tp:  # a subclass: a pre-encoded one encodes itself",
            "        return by_type(type(obj))(obj, blobs)",
            "    out = {}",
        ]
        for f in dataclasses.fields(tp):
            ftp = hints[f.name]
            key = repr(f.name)
            if is_blob(ftp):
                lines.append(f"    blobs.append(obj.{f.name})")
                lines.append(f"    out[{key}] = len(blobs) - 1")
                continue
            value = self._value_encoder(ftp)
            if value is None:
                lines.append(f"    out[{key}] = obj.{f.name}")
                continue
            name = f"e{len(names)}"
            names[name] = value
            lines.append(f"    x = obj.{f.name}")
            lines.append(f"    out[{key}] = None if x is None else {name}(x, blobs)")
        lines.append("    return out")
        return _compile("\n".join(lines), names, "enc")

    def _value_encoder(self, tp: Any) -> FastEncoder | None:
        """Encoder for a field value, or None when the value is already CBOR-ready."""
        if is_blob(tp):
            return None
        if dataclasses.is_dataclass(tp):
            return self.encoder(tp)
        inner = optional_inner(tp)
        if inner is not None:
            return self._value_encoder(inner)
        origin = get_origin(tp)
        if origin is list:
            item = self._value_encoder(get_args(tp)[0])
            if item is None:
                return None
            item_enc = item
            return lambda v, blobs: [item_enc(x, blobs) for x in v]
        if origin is dict:
            val = self._value_encoder(get_args(tp)[1])
            if val is None:
                return None
            val_enc = val
            return lambda v, blobs: {k: val_enc(x, blobs) for k, x in v.items()}
        if isinstance(tp, type) and issubclass(tp, IntEnum):
            return lambda v, blobs: int(v)
        return None


def _construction(cls: Any, fields: list[str], names: dict[str, Any]) -> list[str]:
    """Statements that return an instance of ``cls`` from locals ``f0``, ``f1`` ...

    A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` by
    name; for one with slots and nothing to run after ``__init__``, setting each slot through
    its descriptor gives the same object at about half the cost (a fetch answer builds
    thousands)."""
    slots = [cls.__dict__.get(name) for name in fields]
    plain = (
        "__slots__" in cls.__dict__
        and not hasattr(cls, "__post_init__")
        and all(type(slot).__name__ == "member_descriptor" for slot in slots)
    )
    if not plain:
        args = ", ".join(f"{name}=f{i}" for i, name in enumerate(fields))
        return [f"    return cls({args})"]
    names["new"] = object.__new__
    lines = ["    obj = new(cls)"]
    for i, slot in enumerate(slots):
        names[f"set{i}"] = slot.__set__
        lines.append(f"    set{i}(obj, f{i})")
    lines.append("    return obj")
    return lines


def _compile(source: str, names: dict[str, Any], function: str) -> Callable[..., Any]:
    """Define ``function`` from generated ``source`` with ``names`` as its globals."""
    exec(compile(source, f"<compiled codec {function}>", "exec"), names)
    compiled: Callable[..., Any] = names[function]
    return compiled
