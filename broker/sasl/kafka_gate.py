"""SASL on a Kafka listener connection: Kafka's SaslHandshake (v1) and SaslAuthenticate.

Sans-I/O, one per connection when the listener has SASL mechanisms. Until the client has
authenticated, only ApiVersions and the two SASL apis are served; any other request closes
the connection (Kafka does the same). A failed authentication is answered with
SASL_AUTHENTICATION_FAILED and Kafka's message, then the connection is closed; a
successful one names the connection's principal ``User:<name>``.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable
from typing import Any

from rillet.broker.errors import BrokerError
from rillet.broker.kafka.api_table import SASL_AUTHENTICATE, SASL_HANDSHAKE, ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.sasl.plain import authenticate_plain
from rillet.broker.sasl.scram import (
    MECHANISMS,
    Lookup,
    SaslAuthenticationFailed,
    ScramCredential,
    ScramServer,
)
from rillet.broker.session import Session
from rillet.wire.api import ApiKey
from rillet.wire.error_codes import ErrorCode

log = logging.getLogger(__name__)

SUPPORTED_MECHANISMS = (*MECHANISMS, "PLAIN")


class SaslRequired(BrokerError):
    """A request before authentication, or after a failed one: close the connection."""


def credential_lookup(registry: Callable[[], Any]) -> Lookup:
    """(user, mechanism) -> the credential in the SCRAM registry ``registry()`` names at
    the time (the metadata state's, read at each lookup: users added later are found)."""

    def lookup(user: str, mechanism: str) -> ScramCredential | None:
        c = registry().get(user, mechanism)
        if c is None:
            return None
        return ScramCredential(c.mechanism, c.salt, c.iterations, c.stored_key, c.server_key)

    return lookup


class KafkaSaslGate:
    def __init__(self, mechanisms: tuple[str, ...], lookup: Lookup, session: Session) -> None:
        self._mechanisms = mechanisms
        self._lookup = lookup
        self._session = session
        self._mechanism: str | None = None
        self._scram: ScramServer | None = None
        self.authenticated = False
        self.failed = False

    def handle(self, schema: ApiSchema, request: Any) -> Any | None:
        """The answer to a SASL request; None for any other api once authenticated (and
        for ApiVersions). Raises SaslRequired for another api before authentication, or
        for anything after a failure."""
        if self.failed:
            raise SaslRequired("request after a failed SASL authentication")
        key = schema.api_key
        if key == SASL_HANDSHAKE:
            return self._handshake(schema, str(request.mechanism))
        if key == SASL_AUTHENTICATE:
            return self._authenticate(schema, bytes(request.auth_bytes))
        if not self.authenticated and key != ApiKey.API_VERSIONS:
            raise SaslRequired(f"api {key} before SASL authentication")
        return None

    def _handshake(self, schema: ApiSchema, mechanism: str) -> Any:
        if self.authenticated or self._mechanism is not None:
            return build(
                schema.response_type,
                {"error_code": ErrorCode.ILLEGAL_SASL_STATE, "mechanisms": self._mechanisms},
            )
        if mechanism not in self._mechanisms:
            return build(
                schema.response_type,
                {
                    "error_code": ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                    "mechanisms": self._mechanisms,
                },
            )
        self._mechanism = mechanism
        if mechanism in MECHANISMS:
            self._scram = ScramServer(mechanism, self._lookup)
        return build(schema.response_type, {"error_code": 0, "mechanisms": self._mechanisms})

    def _authenticate(self, schema: ApiSchema, token: bytes) -> Any:
        mechanism = self._mechanism
        if mechanism is None or self.authenticated:
            self.failed = True
            return _auth_answer(schema, ErrorCode.ILLEGAL_SASL_STATE, "SaslHandshake first", b"")
        try:
            if self._scram is None:  # PLAIN: one message
                user = authenticate_plain(token, self._lookup)
                return self._succeeded(schema, user, b"")
            scram = self._scram
            if scram.user is None:
                return _auth_answer(schema, ErrorCode.NONE, None, scram.first(token))
            final = scram.final(token)
            assert scram.user is not None
            return self._succeeded(schema, scram.user, final)
        except SaslAuthenticationFailed as exc:
            self.failed = True
            log.info(
                "SASL %s authentication from %s failed: %s", mechanism, self._session.host, exc
            )
            message = (
                "Authentication failed during authentication due to invalid credentials "
                f"with SASL mechanism {mechanism}"
            )
            return _auth_answer(schema, ErrorCode.AUTHENTICATION_FAILED, message, b"")

    def _succeeded(self, schema: ApiSchema, user: str, token: bytes) -> Any:
        self.authenticated = True
        self._session.principal = f"User:{user}"
        log.debug("%s authenticated as User:%s (%s)", self._session.host, user, self._mechanism)
        return _auth_answer(schema, ErrorCode.NONE, None, token)


def _auth_answer(schema: ApiSchema, code: int, message: str | None, token: bytes) -> Any:
    return build(
        schema.response_type,
        {
            "error_code": code,
            "error_message": message,
            "auth_bytes": token,
            "session_lifetime": datetime.timedelta(0),
        },
    )
