"""schema.py on its own: every supported annotation, with dataclasses defined here."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import pytest

from rillet.wire import schema
from rillet.wire.compiled_codec import CompiledCodecs
from rillet.wire.encoded import PreEncoded
from rillet.wire.errors import MalformedMessage
from rillet.wire.frame import FileRegion
from rillet.wire.schema import Blob, from_wire, to_wire


class Color(IntEnum):
    RED = 1
    BLUE = 2


@dataclass(frozen=True)
class Inner:
    n: int
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Everything:
    i: int
    f: float
    b: bool
    s: str
    raw: bytes
    color: Color
    inner: Inner
    maybe_inner: Inner | None
    inners: list[Inner]
    by_name: dict[str, Inner]
    nested: dict[str, list[int]]
    blob: Blob
    maybe_color: Color | None = None
    colors: list[Color] = field(default_factory=list)


SAMPLE = Everything(
    i=-5,
    f=1.5,
    b=True,
    s="ß",
    raw=b"\x00\x01",
    color=Color.BLUE,
    inner=Inner(1, ["a"]),
    maybe_inner=None,
    inners=[Inner(2), Inner(3, ["x", "y"])],
    by_name={"k": Inner(4)},
    nested={"a": [1, 2], "b": []},
    blob=b"blob-bytes",
    maybe_color=Color.RED,
    colors=[Color.RED, Color.BLUE],
)


def test_to_wire_shape() -> None:
    blobs: list[Any] = []
    wire = to_wire(SAMPLE, blobs)
    assert blobs == [b"blob-bytes"]
    assert wire == {
        "i": -5,
        "f": 1.5,
        "b": True,
        "s": "ß",
        "raw": b"\x00\x01",
        "color": 2,
        "inner": {"n": 1, "tags": ["a"]},
        "maybe_inner": None,
        "inners": [{"n": 2, "tags": []}, {"n": 3, "tags": ["x", "y"]}],
        "by_name": {"k": {"n": 4, "tags": []}},
        "nested": {"a": [1, 2], "b": []},
        "blob": 0,
        "maybe_color": 1,
        "colors": [1, 2],
    }
    assert type(wire["color"]) is int and all(type(c) is int for c in wire["colors"])
    back = from_wire(Everything, wire, [memoryview(b) for b in blobs])
    assert back == SAMPLE
    assert type(back.color) is Color and type(back.colors[0]) is Color


def test_blob_indexes_follow_the_shared_list() -> None:
    blobs: list[Any] = [b"earlier"]
    region = FileRegion(1, 2, 3)
    wire = to_wire(Everything(**{**SAMPLE.__dict__, "blob": region}), blobs)
    assert wire["blob"] == 1 and blobs[1] is region


def _wire(**changes: Any) -> dict[str, Any]:
    wire = to_wire(SAMPLE, [])
    wire.update(changes)
    return wire


def _decode(wire: Any) -> Everything:
    return from_wire(Everything, wire, [memoryview(b"blob-bytes")])


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("i", True),
        ("i", 1.0),
        ("i", "1"),
        ("f", True),
        ("f", "1.5"),
        ("f", None),
        ("b", 1),
        ("b", "true"),
        ("s", b"s"),
        ("s", 5),
        ("raw", "raw"),
        ("raw", [0]),
        ("color", 3),
        ("color", 0),
        ("color", True),
        ("color", "RED"),
        ("color", 2.0),
        ("inner", []),
        ("inner", {"tags": []}),
        ("inner", {"n": "1"}),
        ("maybe_inner", {"n": None}),
        ("inners", {"n": 1}),
        ("inners", [{"n": 1}, None]),
        ("by_name", [["k", {"n": 1}]]),
        ("by_name", {1: {"n": 1}}),
        ("by_name", {"k": {"n": False}}),
        ("nested", {"a": [1, "2"]}),
        ("nested", {"a": None}),
        ("blob", 1),
        ("blob", -1),
        ("blob", True),
        ("blob", None),
        ("maybe_color", 9),
        ("colors", [1, 5]),
    ],
)
def test_wrong_values_are_malformed(name: str, value: Any) -> None:
    with pytest.raises(MalformedMessage) as info:
        _decode(_wire(**{name: value}))
    assert f"Everything.{name}" in str(info.value)


def test_float_accepts_ints_and_optional_accepts_null() -> None:
    got = _decode(_wire(f=3, maybe_color=None, maybe_inner={"n": 7}))
    assert got.f == 3 and got.maybe_color is None and got.maybe_inner == Inner(7)


def test_missing_required_field_and_defaults() -> None:
    wire = _wire()
    del wire["colors"], wire["maybe_color"]
    got = _decode(wire)
    assert got.colors == [] and got.maybe_color is None
    del wire["i"]
    with pytest.raises(MalformedMessage, match="missing field 'i'"):
        _decode(wire)


def test_list_length_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema, "MAX_LIST_ITEMS", 3)
    monkeypatch.setattr(schema, "_compiled", CompiledCodecs(PreEncoded, max_list_items=3))
    assert _decode(_wire(colors=[1, 1, 1])).colors == [Color.RED] * 3
    with pytest.raises(MalformedMessage, match="too long"):
        _decode(_wire(colors=[1, 1, 1, 1]))


def test_bignum_enum_value_is_malformed_not_a_crash() -> None:
    with pytest.raises(MalformedMessage):
        _decode(_wire(color=10**5000))


def test_bignum_values_elsewhere_are_handled() -> None:
    assert _decode(_wire(i=10**5000)).i == 10**5000  # ints are unbounded in the schema
    with pytest.raises(MalformedMessage):
        _decode(_wire(blob=10**5000))
    with pytest.raises(MalformedMessage):
        _decode(_wire(s=10**5000))


@dataclass
class TwoWayUnion:
    x: int | str


@dataclass
class IntKeys:
    x: dict[int, str]


@dataclass
class Unsupported:
    x: set[int]


@pytest.mark.parametrize("cls", [TwoWayUnion, IntKeys, Unsupported])
def test_unsupported_annotations_fail_loudly(cls: type) -> None:
    with pytest.raises(TypeError):
        from_wire(cls, {"x": 1}, [])
