"""The files one principal of a local secure cluster connects with, ready to use.

``client.properties`` for librdkafka (kcat -F, confluent-kafka), ``client-java.properties``
for Java clients and Kafka's tools (PEM stores; ``--command-config``) and ``client.env`` for
rillet's CLI (``RILLET_*``, with the bootstrap list). Each holds the principal's password or
names its key, so each is written 0600 into the principal's own 0700 directory: handing a
user its directory hands it its own login and nobody else's.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from rillet.broker.security.tls_certificates import CertificateFiles
from rillet.launcher.private_files import private_dir, write_private


@dataclass(frozen=True, slots=True)
class SaslLoginFiles:
    """The SASL login the files carry: ``native`` also logs rillet's CLI in with it (else
    the CLI is known by its certificate alone)."""

    username: str
    password: str
    mechanism: str = "SCRAM-SHA-512"
    native: bool = True


@dataclass(frozen=True, slots=True)
class ClientFiles:
    properties: Path  # librdkafka
    java: Path  # Java clients, Kafka's tools
    env: Path  # rillet's CLI: source it


def write_client_files(
    directory: Path,
    native_bootstrap: str,
    kafka_bootstrap: str,
    cafile: str,
    certificate: CertificateFiles | None,
    login: SaslLoginFiles,
) -> ClientFiles:
    """Write one principal's client files into ``directory`` (made 0700)."""
    private_dir(directory)
    ssl_certificate = ""
    java_keystore = ""
    env_certificate = ""
    if certificate is not None:
        ssl_certificate = (
            f"ssl.certificate.location={certificate.certfile}\n"
            f"ssl.key.location={certificate.keyfile}\n"
        )
        keystore = directory / f"{login.username}-keystore.pem"  # key and certificate
        write_private(keystore, certificate.keyfile.read_text() + certificate.certfile.read_text())
        java_keystore = f"ssl.keystore.type=PEM\nssl.keystore.location={keystore}\n"
        env_certificate = (
            f"export RILLET_SSL_CERTFILE={shlex.quote(str(certificate.certfile))}\n"
            f"export RILLET_SSL_KEYFILE={shlex.quote(str(certificate.keyfile))}\n"
        )
    properties = write_private(
        directory / "client.properties",
        f"bootstrap.servers={kafka_bootstrap}\n"
        "security.protocol=SASL_SSL\n"
        f"sasl.mechanisms={login.mechanism}\n"
        f"sasl.username={login.username}\n"
        f"sasl.password={login.password}\n"
        f"ssl.ca.location={cafile}\n" + ssl_certificate,
    )
    java = write_private(
        directory / "client-java.properties",
        f"bootstrap.servers={kafka_bootstrap}\n"
        "security.protocol=SASL_SSL\n"
        f"sasl.mechanism={login.mechanism}\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{login.username}" password="{login.password}";\n'
        "ssl.truststore.type=PEM\n"
        f"ssl.truststore.location={cafile}\n" + java_keystore,
    )
    native_login = (
        f"export RILLET_SASL_MECHANISM={login.mechanism}\n"
        f"export RILLET_SASL_USERNAME={shlex.quote(login.username)}\n"
        f"export RILLET_SASL_PASSWORD={shlex.quote(login.password)}\n"
        if login.native
        else ""
    )
    env = write_private(
        directory / "client.env",
        f"export RILLET_BOOTSTRAP={native_bootstrap}\n"
        f"export RILLET_SSL_CAFILE={shlex.quote(cafile)}\n" + env_certificate + native_login,
    )
    return ClientFiles(properties, java, env)
