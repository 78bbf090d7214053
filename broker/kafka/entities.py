"""Builds kio response entities of any version from plain values.

kio generates one frozen dataclass per api version, with Kafka's field types (bounded ints,
``timedelta`` for durations, an error-code enum). Translators describe a response once, as
nested mappings with Kafka's field names and plain ints; :func:`build` keeps the fields the
requested version has, converts each value to its field's type and fills nested entities.
Fields a version lacks are dropped, fields it has and the mapping omits keep their defaults,
so one description serves every version of an api. A response's ``throttle_time`` is 0
unless given; :func:`with_throttle_time` sets it on a built response (a quota's wait).
"""

from __future__ import annotations

import dataclasses
import datetime
import types
import typing
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, TypeVar

from kio.schema.errors import ErrorCode as KafkaError
from kio.static.primitive import i32Timedelta, i64Timedelta

from rillet.broker.kafka.error_map import kafka_error

E = TypeVar("E")
_NOT_THROTTLED = datetime.timedelta(0)
Convert = Callable[[Any], Any]


def build(cls: type[E], values: Mapping[str, Any]) -> E:
    """An instance of the kio entity ``cls`` from ``values`` (see the module docstring)."""
    kwargs = {}
    plan: tuple[tuple[str, Convert], ...] = _plan(cls)  # type: ignore[arg-type]
    for name, convert in plan:
        if name in values:
            kwargs[name] = convert(values[name])
        elif name == "throttle_time":
            kwargs[name] = _NOT_THROTTLED
    return cls(**kwargs)


def with_throttle_time(response: E, throttle_ms: int) -> E:
    """``response`` telling the client to wait ``throttle_ms`` (if its version can say so)."""
    if not any(f.name == "throttle_time" for f in dataclasses.fields(response)):  # type: ignore[arg-type]
        return response
    wait = i32Timedelta.parse(datetime.timedelta(milliseconds=min(throttle_ms, 2**31 - 1)))
    return dataclasses.replace(response, throttle_time=wait)  # type: ignore[type-var]


def entity_type(cls: type[Any], field_name: str) -> type[Any]:
    """The entity class of field ``field_name`` of ``cls`` (for a tuple, its item's class)."""
    for f in dataclasses.fields(cls):
        if f.name == field_name:
            tp = f.type
            if typing.get_origin(tp) is tuple:
                tp = typing.get_args(tp)[0]
            assert isinstance(tp, type)
            return tp
    raise KeyError(f"{cls.__name__} has no field {field_name!r}")


@cache
def _plan(cls: type[Any]) -> tuple[tuple[str, Convert], ...]:
    return tuple((f.name, _converter(f.type)) for f in dataclasses.fields(cls))


def _identity(value: Any) -> Any:
    return value


def _error(value: Any) -> KafkaError:
    return value if isinstance(value, KafkaError) else kafka_error(int(value))


def _duration(value: Any) -> datetime.timedelta:
    if isinstance(value, datetime.timedelta):
        return value
    return datetime.timedelta(milliseconds=int(value))


# Kafka writes -1 for "no such time" in a timestamp field that cannot be null (e.g.
# DescribeTransactions' start time of a transaction not started): the instant -1 ms encodes to.
_NO_TIME = datetime.datetime.fromtimestamp(-1 / 1000, tz=datetime.UTC)


def _instant(value: Any) -> datetime.datetime | None:
    """A nullable timestamp field: a negative time is null."""
    if value is None or isinstance(value, datetime.datetime):
        return value
    if int(value) < 0:
        return None
    return datetime.datetime.fromtimestamp(int(value) / 1000, tz=datetime.UTC)


def _required_instant(value: Any) -> datetime.datetime:
    """A timestamp field that cannot be null: a negative time is Kafka's -1."""
    instant = _instant(value)
    return _NO_TIME if instant is None else instant


def _converter(tp: Any) -> Convert:
    if tp is KafkaError:
        return _error
    if tp in (i32Timedelta, i64Timedelta):
        return _duration
    origin = typing.get_origin(tp)
    if origin is tuple:
        item = typing.get_args(tp)[0]
        if dataclasses.is_dataclass(item):
            return lambda seq: tuple(
                v if isinstance(v, item) else build(item, v)  # type: ignore[arg-type]
                for v in seq
            )
        return tuple
    if origin in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and getattr(args[0], "__name__", "") == "TZAware":
            return _instant
        if len(args) == 1 and dataclasses.is_dataclass(args[0]):
            inner = args[0]
            return lambda v: v if v is None or isinstance(v, inner) else build(inner, v)  # type: ignore[arg-type]
        return _identity
    if getattr(tp, "__name__", "") == "TZAware":
        return _required_instant
    if dataclasses.is_dataclass(tp):
        return lambda v: v if isinstance(v, tp) else build(tp, v)  # type: ignore[arg-type]
    return _identity
