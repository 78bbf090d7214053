"""Builds kio response entities of any version from plain values.

kio generates one frozen dataclass per api version, with Kafka's field types (bounded ints,
``timedelta`` for durations, an error-code enum). Translators describe a response once, as
a typed description (broker/kafka/shapes.py: one ``TypedDict`` per entity with the union of
its fields over the served versions, Kafka's field names and plain ints); :func:`build`
keeps the fields the requested version has, converts each value to its field's type and
fills nested entities. Fields a version lacks are dropped, fields it has and the
description omits keep their defaults, so one description serves every version of an api;
a key no served version has is refused (:class:`UnknownResponseField`), so a misspelt one
fails in the tests rather than vanishing from every answer. A response's ``throttle_time``
is 0 unless given; :func:`with_throttle_time` sets it on a built response (a quota's wait).
"""

from __future__ import annotations

import dataclasses
import datetime
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, TypeVar

from kio.schema.errors import ErrorCode as KafkaError
from kio.static.primitive import i32Timedelta, i64Timedelta
from kio.static.protocol import ResponsePayload

from rillet.broker.kafka import shapes
from rillet.broker.kafka.error_map import kafka_error
from rillet.broker.kafka.errors import UnknownResponseField

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

D = TypeVar("D", bound="DataclassInstance")
R = TypeVar("R", bound=ResponsePayload)
_NOT_THROTTLED = datetime.timedelta(0)
Convert = Callable[[object], object]


@dataclass(frozen=True, slots=True)
class _Plan:
    """How to build one entity class: its fields' converters, and the keys its
    description may have (every served version's fields)."""

    fields: tuple[tuple[str, Convert], ...]
    known: frozenset[str]


def build(cls: type[R], values: shapes.ResponseShape) -> R:
    """An instance of the kio response ``cls`` from its description (see the module
    docstring). Raises UnknownResponseField on a key no served version has."""
    return _build(cls, values)


def _build(cls: type[D], values: Mapping[str, object]) -> D:
    plan = _plan(cls)
    if not plan.known.issuperset(values):
        unknown = sorted(set(values) - plan.known)
        raise UnknownResponseField(f"{cls.__name__} has no field {', '.join(unknown)}")
    kwargs: dict[str, object] = {}
    for name, convert in plan.fields:
        if name in values:
            kwargs[name] = convert(values[name])
        elif name == "throttle_time":
            kwargs[name] = _NOT_THROTTLED
    return cls(**kwargs)


def with_throttle_time(response: R, throttle_ms: int) -> R:
    """``response`` telling the client to wait ``throttle_ms`` (if its version can say so)."""
    if not any(f.name == "throttle_time" for f in dataclasses.fields(response)):
        return response
    wait = i32Timedelta.parse(datetime.timedelta(milliseconds=min(throttle_ms, 2**31 - 1)))
    return dataclasses.replace(response, throttle_time=wait)


@cache
def _plan(cls: type[DataclassInstance]) -> _Plan:
    fields = tuple((f.name, _converter(f.type)) for f in dataclasses.fields(cls))
    api_key = getattr(cls, "__api_key__", None)
    known = shapes.FIELDS.get((api_key, cls.__name__)) if isinstance(api_key, int) else None
    # An entity outside the served apis (a test's) may have exactly its own fields.
    return _Plan(fields, known if known is not None else frozenset(n for n, _ in fields))


def _identity(value: object) -> object:
    return value


def _error(value: object) -> KafkaError:
    if isinstance(value, KafkaError):
        return value
    if isinstance(value, int):
        return kafka_error(value)
    raise TypeError(f"error code {value!r} is not an int")


def _ms(value: object) -> int:
    if isinstance(value, int):
        return value
    raise TypeError(f"{value!r} is not a time in ms")


def _duration(value: object) -> datetime.timedelta:
    if isinstance(value, datetime.timedelta):
        return value
    return datetime.timedelta(milliseconds=_ms(value))


# Kafka writes -1 for "no such time" in a timestamp field that cannot be null (e.g.
# DescribeTransactions' start time of a transaction not started): the instant -1 ms encodes to.
_NO_TIME = datetime.datetime.fromtimestamp(-1 / 1000, tz=datetime.UTC)


def _instant(value: object) -> datetime.datetime | None:
    """A nullable timestamp field: a negative time is null."""
    if value is None or isinstance(value, datetime.datetime):
        return value
    ms = _ms(value)
    if ms < 0:
        return None
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)


def _required_instant(value: object) -> datetime.datetime:
    """A timestamp field that cannot be null: a negative time is Kafka's -1."""
    instant = _instant(value)
    return _NO_TIME if instant is None else instant


def _entity_class(tp: object) -> type[DataclassInstance] | None:
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return tp
    return None


def _nested(cls: type[DataclassInstance]) -> Convert:
    """A nested entity from its description."""

    def convert(value: object) -> object:
        if type(value) is dict or isinstance(value, Mapping):  # (a description is a dict)
            return _build(cls, value)
        raise TypeError(f"{cls.__name__}: {value!r} is not a description")

    return convert


def _optional_nested(cls: type[DataclassInstance]) -> Convert:
    convert = _nested(cls)
    return lambda value: None if value is None else convert(value)


def _array(convert: Convert) -> Convert:
    """A tuple of entities (or plain values) from a sequence; None stays None (null)."""

    def convert_all(value: object) -> object:
        if type(value) is list or type(value) is tuple:  # (what descriptions hold)
            return tuple([convert(v) for v in value])
        if value is None:
            return None
        if not isinstance(value, Iterable) or isinstance(value, str | bytes | Mapping):
            raise TypeError(f"{value!r} is not a sequence")
        return tuple([convert(v) for v in value])

    return convert_all


def _converter(tp: object) -> Convert:
    if tp is KafkaError:
        return _error
    if tp in (i32Timedelta, i64Timedelta):
        return _duration
    origin = typing.get_origin(tp)
    if origin is tuple:
        item = _entity_class(typing.get_args(tp)[0])
        return _array(_identity if item is None else _nested(item))
    if origin in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) != 1:
            return _identity
        if getattr(args[0], "__name__", "") == "TZAware":
            return _instant
        if typing.get_origin(args[0]) is tuple:
            return _converter(args[0])  # a nullable array: None passes through
        inner = _entity_class(args[0])
        return _identity if inner is None else _optional_nested(inner)
    if getattr(tp, "__name__", "") == "TZAware":
        return _required_instant
    nested = _entity_class(tp)
    return _identity if nested is None else _nested(nested)
