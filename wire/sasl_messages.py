"""SASL on the native listener: Kafka's SaslHandshake (17) and SaslAuthenticate (36), in
rillet's frames. The tokens are the mechanism's own (PLAIN's one message, SCRAM's two
round trips), exactly as Kafka clients send them.
"""

from __future__ import annotations

from dataclasses import dataclass

from rillet.wire.request import Request


@dataclass(frozen=True, slots=True)
class SaslHandshakeRequest(Request["SaslHandshakeResponse"]):
    mechanism: str


@dataclass(frozen=True, slots=True)
class SaslHandshakeResponse:
    error_code: int
    mechanisms: list[str]  # what the listener offers


@dataclass(frozen=True, slots=True)
class SaslAuthenticateRequest(Request["SaslAuthenticateResponse"]):
    auth_bytes: bytes


@dataclass(frozen=True, slots=True)
class SaslAuthenticateResponse:
    error_code: int
    error_message: str | None
    auth_bytes: bytes
