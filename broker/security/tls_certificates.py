"""A local certificate authority and the certificates a test or local cluster needs.

For ``rillet cluster up --secure`` and the tests: a CA, one certificate per node (naming the
hosts it is reached at, so clients and other nodes can check it), and client certificates
for mutual TLS. Keys are EC P-256, certificates valid for ``valid_days``; every file is PEM,
mode 0600 in a 0700 directory (keys are secrets, and the rest need not be shared). A
production cluster uses certificates from its own CA.
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from rillet.launcher.private_files import private_dir, write_private

DEFAULT_VALID_DAYS = 365


@dataclass(frozen=True, slots=True)
class CertificateFiles:
    certfile: Path
    keyfile: Path


class LocalCa:
    """A CA whose key lives in ``directory`` (created on first use)."""

    def __init__(self, directory: Path, name: str = "rillet local CA") -> None:
        self.directory = directory
        self.files = CertificateFiles(directory / "ca.pem", directory / "ca-key.pem")
        if self.files.certfile.exists() and self.files.keyfile.exists():
            self._key = serialization.load_pem_private_key(
                self.files.keyfile.read_bytes(), password=None
            )
            self._cert = x509.load_pem_x509_certificate(self.files.certfile.read_bytes())
            return
        private_dir(directory)
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=10 * DEFAULT_VALID_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(key, hashes.SHA256())
        )
        _write(self.files, cert, key)
        self._key, self._cert = key, cert

    def issue(
        self,
        directory: Path,
        name: str,
        hosts: Sequence[str] = (),
        organization: str | None = None,
        valid_days: int = DEFAULT_VALID_DAYS,
    ) -> CertificateFiles:
        """A certificate for ``name`` (its common name) and ``hosts`` (DNS names or IP
        addresses it is reached at), good for both TLS servers and clients; written to
        ``directory/<name>.pem`` and ``directory/<name>-key.pem``."""
        key = ec.generate_private_key(ec.SECP256R1())
        attributes = [x509.NameAttribute(NameOID.COMMON_NAME, name)]
        if organization:
            attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name(attributes))
            .issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=valid_days))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.ExtendedKeyUsage(
                    [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                ),
                critical=False,
            )
        )
        if hosts:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([_general_name(h) for h in hosts]), critical=False
            )
        ca_key = self._key
        assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
        cert = builder.sign(ca_key, hashes.SHA256())
        private_dir(directory)
        files = CertificateFiles(directory / f"{name}.pem", directory / f"{name}-key.pem")
        _write(files, cert, key)
        return files


def _general_name(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def _write(
    files: CertificateFiles, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey
) -> None:
    write_private(files.certfile, cert.public_bytes(serialization.Encoding.PEM))
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    write_private(files.keyfile, pem)
