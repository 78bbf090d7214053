"""Conditions the broker relies on, checked where it relies on them.

A violated invariant is a bug, and the data the node would serve after it may be wrong (a
high watermark past the log end acknowledges records that do not exist; a leader epoch
that goes back lets a deposed leader's writes count). :func:`require` therefore stops the
node: :class:`InvariantViolation` is not an ``Exception``, so no handler's
``except Exception`` turns it into an error answer and carries on; it ends ``trio.run``
and the process exits non-zero after a CRITICAL log line. A restart recovers from the
files and the metadata log, which is the state the rest of the cluster agrees on.

The checks are always on: each is one comparison on a path that already does more.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


class InvariantViolation(BaseException):
    """An internal condition the broker relies on does not hold."""


def require(condition: bool, what: str) -> None:
    """Stop the node with ``what`` when ``condition`` is false."""
    if not condition:
        log.critical("invariant violated, stopping the node: %s", what)
        raise InvariantViolation(what)
