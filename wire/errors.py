"""Exception root of the wire package.

Every decoding failure raises a subclass of :class:`WireError`, so a server can turn any bad
input into a typed protocol error instead of crashing a connection task.
"""

from __future__ import annotations


class WireError(Exception):
    """Root of every error raised by ``rillet.wire``."""


class FrameTooLarge(WireError):
    """A frame announced more bytes than ``max_frame_bytes`` allows."""


class MalformedFrame(WireError):
    """A frame's header is not valid CBOR, or its blob lengths do not add up.

    ``correlation_id`` is set when the header was readable enough to carry one, so the
    server can still address its INVALID_REQUEST answer.
    """

    def __init__(self, reason: str, correlation_id: int | None = None) -> None:
        super().__init__(reason)
        self.correlation_id = correlation_id


class MalformedMessage(WireError):
    """A decoded header does not match the schema of its api."""

    def __init__(self, reason: str, correlation_id: int | None = None) -> None:
        super().__init__(reason)
        self.correlation_id = correlation_id


class UnknownApi(WireError):
    """The api number in a request header is not one this build serves."""

    def __init__(self, api: object) -> None:
        shown = api if isinstance(api, int) and -(10**9) < api < 10**9 else type(api).__name__
        super().__init__(f"unknown api {shown!r}")
        self.api = api


class CorruptBatch(WireError):
    """A record batch failed validation: short, wrong magic, bad length or bad CRC."""


class UnsupportedCompression(WireError):
    """A batch names a compression codec this build cannot decode."""
