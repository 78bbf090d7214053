"""TLS for rillet's client: the context to pass as ``ssl_context`` to any client class.

The client then connects to every node with TLS and checks the node's certificate against
``cafile`` (the system's authorities when None) and the host it connects to. ``certfile``
and ``keyfile`` give the client a certificate of its own, for nodes that require one
(``client_auth = "required"``); the node then knows the client by its certificate's subject.
"""

from __future__ import annotations

import ssl


def client_ssl_context(
    cafile: str | None = None, certfile: str | None = None, keyfile: str | None = None
) -> ssl.SSLContext:
    """Like Kafka's ``ssl.truststore`` / ``ssl.keystore`` settings, from PEM files."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=cafile)
    if certfile is not None:
        context.load_cert_chain(certfile, keyfile)
    return context
