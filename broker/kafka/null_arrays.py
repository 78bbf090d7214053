"""Refuse arrays a client sent as null where Kafka's schema does not allow null.

The entity reader accepts a null length (-1, or 0 in a compact array) for any array and
yields None, so a request could reach a translator with None where the schema promises a
list. Such a request is malformed: the connection gets the same protocol error as any
other undecodable request, and no translator has to guard against it.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from typing import Union, get_args, get_origin

# (field name, may be null, item class to check inside, or None for plain items)
_Plan = tuple[tuple[str, bool, type | None], ...]


def null_array_path(entity: object) -> str | None:
    """The dotted path of the first array that is null but may not be; None if none is."""
    cls: type = type(entity)
    for name, nullable, item in _plan(cls):
        value: object = getattr(entity, name)
        if value is None:
            if not nullable:
                return name
            continue
        if item is not None and isinstance(value, tuple):
            for i, element in enumerate(value):
                inner = null_array_path(element)
                if inner is not None:
                    return f"{name}[{i}].{inner}"
    return None


@functools.cache
def _plan(cls: type) -> _Plan:
    """The array fields of an entity class (a bounded set: the served apis' classes)."""
    if not dataclasses.is_dataclass(cls):
        return ()
    plan: list[tuple[str, bool, type | None]] = []
    for f in dataclasses.fields(cls):
        tp: object = f.type
        nullable = False
        if get_origin(tp) in (Union, types.UnionType):
            args = [a for a in get_args(tp) if a is not type(None)]
            nullable = len(args) < len(get_args(tp))
            tp = args[0] if len(args) == 1 else tp
        if get_origin(tp) is not tuple:
            continue
        item: object = get_args(tp)[0]
        nested = item if isinstance(item, type) and dataclasses.is_dataclass(item) else None
        plan.append((f.name, nullable, nested))
    return tuple(plan)
