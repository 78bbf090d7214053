"""One connection's SASL exchange, whatever protocol carries it (sans-I/O).

Kafka's two steps: a handshake names the mechanism, then authenticate messages carry its
tokens (PLAIN: one; SCRAM: two round trips). The outcome is the connection's principal,
``User:<name>``. The Kafka listener (``kafka_gate``) and the native listener wrap this in
their own messages, so both authenticate the same users the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, NamedTuple

from rillet.broker.sasl.plain import authenticate_plain
from rillet.broker.sasl.scram import (
    MECHANISMS,
    Lookup,
    SaslAuthenticationFailed,
    ScramCredential,
    ScramServer,
)
from rillet.broker.session import Session
from rillet.wire.error_codes import ErrorCode

log = logging.getLogger(__name__)

SUPPORTED_MECHANISMS = (*MECHANISMS, "PLAIN")


def credential_lookup(registry: Callable[[], Any]) -> Lookup:
    """(user, mechanism) -> the credential in the SCRAM registry ``registry()`` names at
    the time (the metadata state's, read at each lookup: users added later are found)."""

    def lookup(user: str, mechanism: str) -> ScramCredential | None:
        c = registry().get(user, mechanism)
        if c is None:
            return None
        return ScramCredential(c.mechanism, c.salt, c.iterations, c.stored_key, c.server_key)

    return lookup


class SaslStep(NamedTuple):
    """An answer to one authenticate message: an error code (NONE: go on, or done once
    ``SaslExchange.authenticated``), a message for a failure, and the server's token."""

    error_code: ErrorCode
    error_message: str | None
    token: bytes


class SaslExchange:
    def __init__(self, mechanisms: tuple[str, ...], lookup: Lookup, session: Session) -> None:
        self.mechanisms = mechanisms
        self._lookup = lookup
        self._session = session
        self._mechanism: str | None = None
        self._scram: ScramServer | None = None
        self.authenticated = False
        self.failed = False  # the connection must close

    def handshake(self, mechanism: str) -> ErrorCode:
        if self.authenticated or self._mechanism is not None:
            return ErrorCode.ILLEGAL_SASL_STATE
        if mechanism not in self.mechanisms:
            return ErrorCode.UNSUPPORTED_SASL_MECHANISM
        self._mechanism = mechanism
        if mechanism in MECHANISMS:
            self._scram = ScramServer(mechanism, self._lookup)
        return ErrorCode.NONE

    def authenticate(self, token: bytes) -> SaslStep:
        mechanism = self._mechanism
        if mechanism is None or self.authenticated:
            self.failed = True
            return SaslStep(ErrorCode.ILLEGAL_SASL_STATE, "handshake first", b"")
        try:
            if self._scram is None:  # PLAIN: one message
                return self._succeeded(authenticate_plain(token, self._lookup), b"")
            scram = self._scram
            if scram.user is None:
                return SaslStep(ErrorCode.NONE, None, scram.first(token))
            final = scram.final(token)
            assert scram.user is not None
            return self._succeeded(scram.user, final)
        except SaslAuthenticationFailed as exc:
            self.failed = True
            log.info(
                "SASL %s authentication from %s (%s listener) failed: %s",
                mechanism,
                self._session.host,
                self._session.listener,
                exc,
            )
            message = (
                "Authentication failed during authentication due to invalid credentials "
                f"with SASL mechanism {mechanism}"
            )
            return SaslStep(ErrorCode.AUTHENTICATION_FAILED, message, b"")

    def _succeeded(self, user: str, token: bytes) -> SaslStep:
        self.authenticated = True
        self._session.principal = f"User:{user}"
        log.debug("%s authenticated as User:%s (%s)", self._session.host, user, self._mechanism)
        return SaslStep(ErrorCode.NONE, None, token)
