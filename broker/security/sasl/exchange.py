"""One connection's SASL exchange, whatever protocol carries it (sans-I/O).

Kafka's two steps: a handshake names the mechanism, then authenticate messages carry its
tokens (PLAIN: one; SCRAM: two round trips). The outcome is the connection's principal,
``User:<name>``. Both listeners' connections run it (broker/network/connection_protocol.py), each
front end
carrying the tokens in its own messages, so both authenticate the same users the same way.

Checking a password costs milliseconds of CPU (PBKDF2 for PLAIN), too long for the event
loop, so the message that carries the proof is answered in two steps: ``authenticate``
returns a :class:`PasswordCheck` (a pure computation), the connection's driver runs it on a
worker thread (broker/security/sasl/login_guard.py) and hands its outcome to ``checked``. An unknown
user is checked against a decoy credential with the same work and the same answers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

from rillet.broker.security.sasl.decoys import decoy_credential
from rillet.broker.security.sasl.plain import plain_check
from rillet.broker.security.sasl.scram import (
    MECHANISMS,
    Lookup,
    SaslAuthenticationFailed,
    ScramCredential,
    ScramServer,
)
from rillet.broker.security.session import Session
from rillet.wire.error_codes import ErrorCode

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


@dataclass(frozen=True, slots=True)
class PasswordCheck:
    """A proof to check off the event loop: ``run()`` touches no shared state and returns
    the token to answer with when the proof holds, else None (for ``SaslExchange.checked``).
    ``user`` is the name the client gave (its backoff key)."""

    user: str
    run: Callable[[], bytes | None]


class SaslFailure(NamedTuple):
    """Why an exchange failed: the mechanism (None before a handshake), the user name the
    client gave (None if it gave none), and the reason (for the log, never the client)."""

    mechanism: str | None
    user: str | None
    reason: str


def _plain_outcome(check: Callable[[], bool]) -> bytes | None:
    return b"" if check() else None


class SaslExchange:
    def __init__(
        self, mechanisms: tuple[str, ...], lookup: Lookup, session: Session, decoy_key: bytes
    ) -> None:
        """``decoy_key``: the node's secret for decoy credentials
        (broker/security/sasl/decoys.py)."""
        self.mechanisms = mechanisms
        self._lookup = lookup
        self._decoy = partial(decoy_credential, decoy_key)
        self._session = session
        self.mechanism: str | None = None
        self._scram: ScramServer | None = None
        self._checking: PasswordCheck | None = None
        self.authenticated = False
        self.failure: SaslFailure | None = None

    @property
    def failed(self) -> bool:
        """The connection must close."""
        return self.failure is not None

    def handshake(self, mechanism: str) -> ErrorCode:
        if self.authenticated or self.mechanism is not None:
            return ErrorCode.ILLEGAL_SASL_STATE
        if mechanism not in self.mechanisms:
            return ErrorCode.UNSUPPORTED_SASL_MECHANISM
        self.mechanism = mechanism
        if mechanism in MECHANISMS:
            self._scram = ScramServer(mechanism, self._lookup, decoy=self._decoy)
        return ErrorCode.NONE

    def authenticate(self, token: bytes) -> SaslStep | PasswordCheck:
        """The answer, or the check to run first (then :meth:`checked` answers)."""
        if self.mechanism is None or self.authenticated or self._checking is not None:
            self.failure = SaslFailure(self.mechanism, None, "authenticate out of order")
            return SaslStep(ErrorCode.ILLEGAL_SASL_STATE, "handshake first", b"")
        scram = self._scram
        try:
            if scram is None:  # PLAIN: one message
                login = plain_check(token, self._lookup, self._decoy)
                self._checking = PasswordCheck(login.user, partial(_plain_outcome, login.check))
            elif scram.user is None:
                return SaslStep(ErrorCode.NONE, None, scram.first(token))
            else:
                self._checking = PasswordCheck(scram.user, scram.proof(token).check)
        except SaslAuthenticationFailed as exc:
            user = None if scram is None else scram.user
            return self._failed(SaslFailure(self.mechanism, user, str(exc)))
        return self._checking

    def checked(self, token: bytes | None) -> SaslStep:
        """The answer once the pending check returned ``token`` (None: the proof failed)."""
        pending, self._checking = self._checking, None
        assert pending is not None, "checked() without a pending check"
        try:
            if self._scram is not None:
                token = self._scram.finish(token)
            elif token is None:
                raise SaslAuthenticationFailed("Authentication failed: invalid user credentials")
        except SaslAuthenticationFailed as exc:
            return self._failed(SaslFailure(self.mechanism, pending.user, str(exc)))
        self.authenticated = True
        self._session.principal = f"User:{pending.user}"
        return SaslStep(ErrorCode.NONE, None, token)

    def refuse(self, reason: str) -> SaslStep:
        """Fail the pending check without running it (the driver's backoff says no)."""
        pending, self._checking = self._checking, None
        user = None if pending is None else pending.user
        return self._failed(SaslFailure(self.mechanism, user, reason))

    def _failed(self, failure: SaslFailure) -> SaslStep:
        self.failure = failure
        message = (
            "Authentication failed during authentication due to invalid credentials "
            f"with SASL mechanism {failure.mechanism}"
        )
        return SaslStep(ErrorCode.AUTHENTICATION_FAILED, message, b"")
