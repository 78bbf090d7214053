"""The base of every request message, naming the response it is answered with.

Why: a connection's ``request(ProduceRequest(...))`` should be typed as returning a
``ProduceResponse`` without a cast at each call site. Each request class derives from
``Request[ItsResponse]``; clients, the controller link and the simulation take a
``Request[R]`` and give back an ``R``. The base carries no fields, so encoding is
unchanged; the pairing the codec uses at run time stays ``REQUEST_TYPES``, and a test
checks that both agree.
"""

from __future__ import annotations

from typing import Generic, TypeVar

R_co = TypeVar("R_co", covariant=True)


class Request(Generic[R_co]):
    """A request answered by an ``R_co``."""

    __slots__ = ()
