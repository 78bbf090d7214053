"""SASL on a Kafka listener connection: Kafka's SaslHandshake (v1) and SaslAuthenticate.

Sans-I/O, one per connection when the listener has SASL mechanisms. Until the client has
authenticated, only ApiVersions and the two SASL apis are served; any other request closes
the connection (Kafka does the same), as soon as its header is read (``admit``): the body
of a request a stranger may not make is never decoded. A failed authentication is answered with
SASL_AUTHENTICATION_FAILED and Kafka's message, then the connection is closed; a
successful one names the connection's principal ``User:<name>``. An authenticate message is
answered by a coroutine (the password check runs on a worker thread, and a failure waits
out its backoff: broker/sasl/login_guard.py) that the connection awaits before it reads
its next request.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Coroutine
from typing import Any

from rillet.broker.errors import BrokerError
from rillet.broker.kafka.api_table import SASL_AUTHENTICATE, SASL_HANDSHAKE, ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.sasl.exchange import SUPPORTED_MECHANISMS, credential_lookup
from rillet.broker.sasl.login_guard import LoginGuard
from rillet.broker.sasl.scram import Lookup
from rillet.broker.session import Session
from rillet.wire.api import ApiKey

log = logging.getLogger(__name__)

# What a client that has not logged in may ask (Kafka serves the same before SASL).
PRE_AUTHENTICATION_APIS = frozenset({ApiKey.API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE})

__all__ = [
    "PRE_AUTHENTICATION_APIS",
    "SUPPORTED_MECHANISMS",
    "KafkaSaslGate",
    "SaslRequired",
    "credential_lookup",
]


class SaslRequired(BrokerError):
    """A request before authentication, or after a failed one: close the connection."""


class KafkaSaslGate:
    def __init__(
        self, mechanisms: tuple[str, ...], lookup: Lookup, session: Session, guard: LoginGuard
    ) -> None:
        self._guard = guard
        self._session = session
        self._exchange = guard.exchange(mechanisms, lookup, session)

    @property
    def authenticated(self) -> bool:
        return self._exchange.authenticated

    @property
    def failed(self) -> bool:
        return self._exchange.failed

    def admit(self, api_key: int) -> None:
        """Called with the header, before the body is decoded: raises SaslRequired for a
        request this connection may not make now, so its body is never decoded."""
        if self.failed:
            raise SaslRequired("request after a failed SASL authentication")
        if not self.authenticated and api_key not in PRE_AUTHENTICATION_APIS:
            raise SaslRequired(f"api {api_key} before SASL authentication")

    def handle(self, schema: ApiSchema, request: Any) -> Any | Coroutine[Any, Any, Any] | None:
        """The answer to a SASL request (for SaslAuthenticate, a coroutine that returns
        it); None for any other api once authenticated (and for ApiVersions). Raises
        SaslRequired for another api before authentication, or for anything after a
        failure."""
        key = schema.api_key
        self.admit(key)
        if key == SASL_HANDSHAKE:
            code = self._exchange.handshake(str(request.mechanism))
            return build(
                schema.response_type,
                {"error_code": code, "mechanisms": self._exchange.mechanisms},
            )
        if key == SASL_AUTHENTICATE:
            return self._authenticate(schema, bytes(request.auth_bytes))
        return None

    async def _authenticate(self, schema: ApiSchema, token: bytes) -> Any:
        step = await self._guard.authenticate(self._exchange, token, self._session)
        return _auth_answer(schema, step.error_code, step.error_message, step.token)


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
