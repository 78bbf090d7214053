"""``rillet cluster up --secure``: a local cluster with TLS on every link, ready to use.

Makes a CA in ``<data dir>/tls``, one certificate the nodes present (for 127.0.0.1 and
localhost) and an ``admin`` client certificate (the nodes require one: mutual TLS). Kafka
clients also log in with SASL (SCRAM or PLAIN) as user ``admin``, whose random password
is kept in ``tls/admin.password`` (mode 0600). It writes what clients need beside them:
``client.properties`` for librdkafka (kcat -F, confluent-kafka), ``client-java.properties``
for Java clients (PEM stores) and ``client.env`` for rillet's CLI (``RILLET_SSL_*``, with
the bootstrap list). The CLI's own cluster commands read the files from the cluster plan.
"""

from __future__ import annotations

import os
import secrets
import ssl
from pathlib import Path

from rillet.broker.tls_certificates import LocalCa
from rillet.client import Admin
from rillet.client.tls import client_ssl_context
from rillet.launcher.local_cluster import ClusterPlan, TlsPlan, plan_cluster
from rillet.wire.acls import (
    CLUSTER_NAME,
    AclBinding,
    Operation,
    PatternType,
    Permission,
    ResourceType,
)

TLS_DIR = "tls"
KAFKA_SASL_MECHANISMS = "SCRAM-SHA-512,SCRAM-SHA-256,PLAIN"
PASSWORD_FILE = "admin.password"
HTTP_TOKEN_FILE = "http.token"  # the HTTP endpoints' bearer token (the API, the console)
NODE_HOSTS = ("127.0.0.1", "localhost")
CLIENT_NAME = "admin"
# The admin's certificate (native clients, the CLI) is the super user; its SASL user (Kafka
# clients) is given every operation by ACLs, which `rillet acls list` shows. Every other
# principal needs ACLs of its own (`rillet acls add`).
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
    directory = base / TLS_DIR
    ca = LocalCa(directory)
    node = ca.issue(directory, "node", NODE_HOSTS)
    client = ca.issue(directory, CLIENT_NAME)
    return TlsPlan(
        str(ca.files.certfile),
        str(node.certfile),
        str(node.keyfile),
        str(client.certfile),
        str(client.keyfile),
    )


def plan_local_cluster(base: Path, nodes: int, secure: bool) -> ClusterPlan:
    """A new local cluster's plan; ``secure`` as ``--secure`` means it: TLS files, SASL on
    the Kafka listeners and the authorizer with the admin certificate as super user. Topics
    get min(3, nodes) replicas unless created with a replication factor."""
    return plan_cluster(
        base,
        nodes,
        tls=make_tls_files(base) if secure else None,
        kafka_sasl=KAFKA_SASL_MECHANISMS if secure else "",
        super_users=SUPER_USERS if secure else None,
        http_token_file=str(secret_file(base, HTTP_TOKEN_FILE)) if secure else "",
        # Topics created without a replication factor (Kafka clients', auto-created ones)
        # get as many replicas as a Kafka user of a cluster this size would expect.
        default_replication_factor=min(3, nodes),
    )


def secret_file(base: Path, name: str) -> Path:
    """``<base>/tls/<name>``, holding a random word (mode 0600), made on first use."""
    path = base / TLS_DIR / name
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(24) + "\n")
    return path


def admin_password(base: Path) -> str:
    """The admin user's password, made on first use."""
    path = base / TLS_DIR / PASSWORD_FILE
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(24) + "\n")
    return path.read_text().strip()


async def create_admin_user(plan: ClusterPlan) -> None:
    """Give user ``admin`` its SCRAM credentials and its ACLs (again after a restart: the
    ACLs exist then and are not added twice)."""
    password = admin_password(Path(plan.base_dir))
    async with Admin(plan.bootstrap, ssl_context=plan_ssl_context(plan)) as admin:
        await admin.set_user_password(CLIENT_NAME, password)
        await admin.create_acls(ADMIN_ACLS)


def write_client_configs(plan: ClusterPlan) -> tuple[Path, Path, Path]:
    """(client.properties for librdkafka, client-java.properties, client.env)."""
    tls = plan.tls
    assert tls is not None
    directory = Path(plan.base_dir) / TLS_DIR
    password = admin_password(Path(plan.base_dir))
    properties = directory / "client.properties"  # kcat -F, confluent-kafka
    properties.write_text(
        f"bootstrap.servers={plan.kafka_bootstrap}\n"
        "security.protocol=SASL_SSL\n"
        "sasl.mechanisms=SCRAM-SHA-512\n"
        f"sasl.username={CLIENT_NAME}\n"
        f"sasl.password={password}\n"
        f"ssl.ca.location={tls.cafile}\n"
        f"ssl.certificate.location={tls.client_certfile}\n"
        f"ssl.key.location={tls.client_keyfile}\n"
    )
    keystore = directory / f"{CLIENT_NAME}-keystore.pem"  # Java: key and certificate together
    keystore.write_text(
        Path(tls.client_keyfile).read_text() + Path(tls.client_certfile).read_text()
    )
    keystore.chmod(0o600)
    java = directory / "client-java.properties"  # kafka-console-*.sh --command-config
    java.write_text(
        f"bootstrap.servers={plan.kafka_bootstrap}\n"
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{CLIENT_NAME}" password="{password}";\n'
        "ssl.truststore.type=PEM\n"
        f"ssl.truststore.location={tls.cafile}\n"
        "ssl.keystore.type=PEM\n"
        f"ssl.keystore.location={keystore}\n"
    )
    env = directory / "client.env"
    env.write_text(
        f"export RILLET_BOOTSTRAP={plan.bootstrap}\n"
        f"export RILLET_SSL_CAFILE={tls.cafile}\n"
        f"export RILLET_SSL_CERTFILE={tls.client_certfile}\n"
        f"export RILLET_SSL_KEYFILE={tls.client_keyfile}\n"
    )
    return properties, java, env


def plan_ssl_context(plan: ClusterPlan) -> ssl.SSLContext | None:
    """The admin client's TLS context for a secure plan, None for a plaintext one."""
    tls = plan.tls
    if tls is None:
        return None
    return client_ssl_context(tls.cafile, tls.client_certfile, tls.client_keyfile)
