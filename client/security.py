"""How a client reaches a secure cluster, as plain values: the TLS files and a SASL login.

An ``ssl.SSLContext`` cannot be pickled or written down, so programs that ship client
settings elsewhere (Spark's executors, the CLI's environment) carry a
:class:`ClientSecurity` and build the client options where the client runs.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rillet.client.errors import RilletError
from rillet.client.sasl import SaslLogin
from rillet.client.tls import client_ssl_context


@dataclass(frozen=True, slots=True)
class ClientSecurity:
    """PEM files for TLS (``ssl_cafile`` alone: TLS; with a certificate and key: mutual
    TLS) and a SASL login; all None: plaintext, anonymous."""

    ssl_cafile: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    sasl: SaslLogin | None = None

    @property
    def uses_tls(self) -> bool:
        return any((self.ssl_cafile, self.ssl_certfile, self.ssl_keyfile))

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments for any client class (``ssl_context``, ``sasl``); a TLS file
        that cannot be used raises RilletError naming it."""
        options: dict[str, Any] = {}
        if self.uses_tls:
            try:
                options["ssl_context"] = client_ssl_context(
                    self.ssl_cafile, self.ssl_certfile, self.ssl_keyfile
                )
            except (OSError, ssl.SSLError) as exc:
                raise RilletError(f"cannot use the TLS files: {exc}") from None
        if self.sasl is not None:
            options["sasl"] = self.sasl
        return options


# The settings of a command line (--ssl-cafile, ... --sasl-password) and the environment
# variables that give their defaults: name -> (environment variable, help).
SETTINGS = {
    "ssl_cafile": ("RILLET_SSL_CAFILE", "TLS: the CA that signed the nodes' certificates"),
    "ssl_certfile": ("RILLET_SSL_CERTFILE", "TLS: this client's certificate (mutual TLS)"),
    "ssl_keyfile": ("RILLET_SSL_KEYFILE", "TLS: this client's key"),
    "sasl_mechanism": ("RILLET_SASL_MECHANISM", "SASL: SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN"),
    "sasl_username": ("RILLET_SASL_USERNAME", "SASL: the user"),
    "sasl_password": ("RILLET_SASL_PASSWORD", "SASL: the user's password"),
}


def from_settings(values: Mapping[str, str | None]) -> ClientSecurity:
    """A ClientSecurity from SETTINGS' names (missing or None: not set); a login without a
    mechanism uses SCRAM-SHA-512. An unusable login raises RilletError."""
    sasl = None
    if any(values.get(k) for k in ("sasl_mechanism", "sasl_username", "sasl_password")):
        try:
            sasl = SaslLogin(
                values.get("sasl_mechanism") or "SCRAM-SHA-512",
                values.get("sasl_username") or "",
                values.get("sasl_password") or "",
            )
        except ValueError as exc:
            raise RilletError(f"cannot log in: {exc}") from None
    return ClientSecurity(
        values.get("ssl_cafile"), values.get("ssl_certfile"), values.get("ssl_keyfile"), sasl
    )
