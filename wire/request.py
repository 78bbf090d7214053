"""The base of every request message, naming the response it is answered with.

Why: a connection's ``request(ProduceRequest(...))`` should be typed as returning a
``ProduceResponse`` without a cast at each call site. Each request class derives from
``Request[ItsResponse]``; clients, the controller link and the simulation take a
``Request[R]`` and give back an ``R``. The base carries no fields, so encoding is
unchanged. It is the one statement of the pairing: the codec's table (``REQUEST_TYPES``)
reads each request's response class from it with :func:`response_type_of`.
"""

from __future__ import annotations

import sys
import typing
from typing import Generic, TypeVar

R_co = TypeVar("R_co", covariant=True)


class Request(Generic[R_co]):
    """A request answered by an ``R_co``."""

    __slots__ = ()


def response_type_of(request_type: type[Request[object]]) -> type:
    """The response class ``request_type`` names in its ``Request[R]`` base (a name in
    quotes is looked up in the request's module, which must define it first)."""
    for base in getattr(request_type, "__orig_bases__", ()):
        if typing.get_origin(base) is not Request:
            continue
        (named,) = typing.get_args(base)
        if isinstance(named, typing.ForwardRef):
            named = vars(sys.modules[request_type.__module__]).get(named.__forward_arg__)
        if isinstance(named, type):
            return named
    raise TypeError(f"{request_type.__name__} names no response class in a Request[R] base")
