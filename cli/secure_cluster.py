"""``rillet cluster up --secure``: a local cluster with TLS on every link, ready to use.

Makes a CA in ``<data dir>/tls``, one certificate the nodes present (for 127.0.0.1 and
localhost) and the cluster's admin: the ``admin`` client certificate (the super user) and
the SASL user ``admin`` (a random password; ACLs allow it everything), both kept with the
admin's client files in ``tls/admin``. The nodes ask clients for a certificate but do not
require one (``client_auth = "requested"``): a client without a certificate of the CA logs
in with SASL (SCRAM or PLAIN) as its own user, on either listener. Application users get
their own login, and with ``rillet users create NAME --cert`` a certificate and client files
of their own in ``tls/users/NAME``; none of them is the super user. Every directory is 0700
and every file 0600. The CLI's own cluster commands use the admin's files.
"""

from __future__ import annotations

import re
import secrets
import ssl
from dataclasses import replace
from pathlib import Path

from rillet.broker.security.tls_certificates import CertificateFiles, LocalCa
from rillet.cli.client_files import ClientFiles, SaslLoginFiles, write_client_files
from rillet.client import Admin
from rillet.client.errors import RilletError
from rillet.client.tls import client_ssl_context
from rillet.launcher.local_cluster import ClusterPlan, TlsPlan, plan_cluster
from rillet.launcher.private_files import private_dir, write_private
from rillet.wire.acls import (
    CLUSTER_NAME,
    AclBinding,
    Operation,
    PatternType,
    Permission,
    ResourceType,
)

TLS_DIR = "tls"
ADMIN_DIR = "admin"  # tls/admin: the admin's certificate, password and client files
USERS_DIR = "users"  # tls/users/<name>: one application user's
KAFKA_SASL_MECHANISMS = "SCRAM-SHA-512,SCRAM-SHA-256,PLAIN"
# rillet's clients without a certificate log in too; SCRAM only (PLAIN costs the node a
# PBKDF2 per attempt, which an unauthenticated peer could repeat).
NATIVE_SASL_MECHANISMS = "SCRAM-SHA-512,SCRAM-SHA-256"
PASSWORD_FILE = "admin.password"
HTTP_TOKEN_FILE = "http.token"  # the HTTP endpoints' bearer token (the API, the console)
# A user name that is also a safe file name and certificate common name.
USER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
NODE_HOSTS = ("127.0.0.1", "localhost")
CLIENT_NAME = "admin"
# The admin's certificate (native clients, the CLI) is the super user; its SASL user (Kafka
# clients) is given every operation by ACLs, which `rillet acls list` shows. Every other
# principal (a user's login, or a user certificate's User:CN=<name>) needs ACLs of its own
# (`rillet acls add`).
SUPER_USERS = f"User:CN={CLIENT_NAME}"
ADMIN_ACLS = [
    AclBinding(
        rtype,
        name,
        PatternType.LITERAL,
        f"User:{CLIENT_NAME}",
        "*",
        Operation.ALL,
        Permission.ALLOW,
    )
    for rtype, name in (
        (ResourceType.TOPIC, "*"),
        (ResourceType.GROUP, "*"),
        (ResourceType.CLUSTER, CLUSTER_NAME),
    )
]


def make_tls_files(base: Path) -> TlsPlan:
    directory = private_dir(base / TLS_DIR)
    ca = LocalCa(directory)
    node = ca.issue(directory, "node", NODE_HOSTS)
    client = ca.issue(directory / ADMIN_DIR, CLIENT_NAME)
    return TlsPlan(
        str(ca.files.certfile),
        str(node.certfile),
        str(node.keyfile),
        str(client.certfile),
        str(client.keyfile),
    )


def plan_local_cluster(base: Path, nodes: int, secure: bool, brokers: int = 0) -> ClusterPlan:
    """A new local cluster's plan; ``secure`` as ``--secure`` means it: TLS files, SASL on
    both listeners for clients without a certificate, and the authorizer with the admin
    certificate as super user. Topics get min(3, nodes) replicas unless created with a
    replication factor. ``brokers``: broker-only nodes numbered after the voters."""
    return plan_cluster(
        base,
        nodes,
        broker_only=brokers,
        tls=replace(make_tls_files(base), client_auth="requested") if secure else None,
        kafka_sasl=KAFKA_SASL_MECHANISMS if secure else "",
        super_users=SUPER_USERS if secure else None,
        native_sasl=NATIVE_SASL_MECHANISMS if secure else "",
        http_token_file=str(secret_file(base, HTTP_TOKEN_FILE)) if secure else "",
        # Topics created without a replication factor (Kafka clients', auto-created ones)
        # get as many replicas as a Kafka user of a cluster this size would expect.
        default_replication_factor=min(3, nodes),
    )


def secret_file(base: Path, name: str) -> Path:
    """``<base>/tls/<name>``, holding a random word (mode 0600), made on first use."""
    return _random_word_file(base / TLS_DIR / name)


def _random_word_file(path: Path) -> Path:
    """``path``, holding a random word (mode 0600 in a 0700 directory), made on first use."""
    if not path.exists():
        private_dir(path.parent)
        write_private(path, secrets.token_urlsafe(24) + "\n")
    return path


def admin_dir(plan: ClusterPlan) -> Path:
    """Where the admin's certificate, password and client files are."""
    assert plan.tls is not None
    return Path(plan.tls.client_certfile).parent


def admin_password(plan: ClusterPlan) -> str:
    """The admin user's password, made on first use."""
    return _random_word_file(admin_dir(plan) / PASSWORD_FILE).read_text().strip()


async def create_admin_user(plan: ClusterPlan) -> None:
    """Give user ``admin`` its SCRAM credentials and its ACLs (again after a restart: the
    ACLs exist then and are not added twice)."""
    password = admin_password(plan)
    async with Admin(plan.bootstrap, ssl_context=plan_ssl_context(plan)) as admin:
        await admin.set_user_password(CLIENT_NAME, password)
        await admin.create_acls(ADMIN_ACLS)


def write_client_configs(plan: ClusterPlan) -> ClientFiles:
    """The admin's client files: its certificate (the super user, for rillet's CLI) and its
    SASL login (for Kafka clients)."""
    tls = plan.tls
    assert tls is not None
    certificate = CertificateFiles(Path(tls.client_certfile), Path(tls.client_keyfile))
    login = SaslLoginFiles(CLIENT_NAME, admin_password(plan), native=False)
    return write_client_files(
        admin_dir(plan), plan.bootstrap, plan.kafka_bootstrap, tls.cafile, certificate, login
    )


def user_dir(plan: ClusterPlan, name: str) -> Path:
    """Where user ``name``'s certificate and client files are (checks the name first)."""
    if not USER_NAME.fullmatch(name):
        raise RilletError(
            f"user {name!r}: a user with a certificate needs a name of letters, digits, "
            "'.', '_' and '-' (at most 64, not starting with '.', '_' or '-')"
        )
    if name == CLIENT_NAME:
        raise RilletError(
            f"user {name!r} is the cluster's admin (its files are in {admin_dir(plan)}): "
            "give application users names of their own"
        )
    return Path(plan.base_dir) / TLS_DIR / USERS_DIR / name


def write_user_files(plan: ClusterPlan, name: str, login: SaslLoginFiles) -> ClientFiles:
    """A certificate for user ``name`` (``User:CN=<name>``, which no ACL names yet) from
    the cluster's CA and the user's client files with its login, all in its own directory
    with a copy of the CA certificate: that directory is everything the user needs."""
    tls = plan.tls
    assert tls is not None
    directory = user_dir(plan, name)
    private_dir(directory.parent)
    private_dir(directory)
    cafile = write_private(directory / "ca.pem", Path(tls.cafile).read_bytes())
    ca = LocalCa(Path(tls.cafile).parent)
    certificate = ca.issue(directory, name)
    return write_client_files(
        directory, plan.bootstrap, plan.kafka_bootstrap, str(cafile), certificate, login
    )


def plan_ssl_context(plan: ClusterPlan) -> ssl.SSLContext | None:
    """The admin client's TLS context for a secure plan, None for a plaintext one."""
    tls = plan.tls
    if tls is None:
        return None
    return client_ssl_context(tls.cafile, tls.client_certfile, tls.client_keyfile)
