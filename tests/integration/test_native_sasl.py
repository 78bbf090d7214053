"""SASL on the native listener of a real 3-node TLS cluster: rillet's client and CLI log in
with SCRAM-SHA-256, SCRAM-SHA-512 or PLAIN as a user of the metadata log and act as that
principal (the authorizer is on); a client with no login, a wrong password or an unknown
user is refused; a client certificate of the CA still authenticates without SASL (that is
how the first users are made)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace

import pytest

from rillet.cli.secure_cluster import make_tls_files
from rillet.client import BlockingAdmin, BlockingProducer, NewTopic
from rillet.client.errors import AuthenticationFailedError, AuthorizationFailedError, RilletError
from rillet.client.sasl import SaslLogin
from rillet.client.tls import client_ssl_context
from rillet.launcher.local_cluster import LocalCluster, plan_cluster
from rillet.wire.acls import AclBinding, Operation, PatternType, Permission, ResourceType

pytestmark = pytest.mark.integration

MECHANISMS = "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    base = tmp_path_factory.mktemp("native-sasl")
    tls = replace(make_tls_files(base), client_auth="requested")
    plan = plan_cluster(
        base / "cluster", 3, tls=tls, native_sasl=MECHANISMS, super_users="User:CN=admin"
    )
    with LocalCluster(plan) as c:
        c.start()
        certified = client_ssl_context(tls.cafile, tls.client_certfile, tls.client_keyfile)
        with BlockingAdmin(c.bootstrap, ssl_context=certified) as admin:
            admin.set_user_password("alice", "alice-secret")
            admin.create_topics([NewTopic("native", 1, replication_factor=3)])
            admin.create_acls(
                [
                    AclBinding(
                        ResourceType.TOPIC,
                        "native",
                        PatternType.LITERAL,
                        "User:alice",
                        "*",
                        Operation.WRITE,
                        Permission.ALLOW,
                    )
                ]
            )
        yield c


def anonymous_tls(c: LocalCluster) -> object:
    assert c.plan.tls is not None
    return client_ssl_context(c.plan.tls.cafile)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"])
def test_a_logged_in_client_acts_as_its_user(cluster: LocalCluster, mechanism: str) -> None:
    login = SaslLogin(mechanism, "alice", "alice-secret")
    options = {"ssl_context": anonymous_tls(cluster), "sasl": login}
    with BlockingProducer(cluster.bootstrap, **options) as producer:
        assert producer.send("native", mechanism.encode()).result(timeout=30).offset >= 0
    with BlockingAdmin(cluster.bootstrap, **options) as admin:
        assert admin.list_topics() == ["native"]  # WRITE implies DESCRIBE; nothing else
        with pytest.raises(AuthorizationFailedError):
            admin.delete_topics(["native"])  # alice may not DELETE


@pytest.mark.parametrize(
    ("login", "error"),
    [
        (SaslLogin("SCRAM-SHA-512", "alice", "wrong"), AuthenticationFailedError),
        (SaslLogin("SCRAM-SHA-256", "mallory", "alice-secret"), AuthenticationFailedError),
        (SaslLogin("PLAIN", "alice", "wrong"), AuthenticationFailedError),
        (None, RilletError),  # no login: the node closes the connection
    ],
)
def test_bad_or_missing_logins_are_refused(
    cluster: LocalCluster, login: SaslLogin | None, error: type[Exception]
) -> None:
    with (
        pytest.raises(error),
        BlockingAdmin(
            cluster.bootstrap,
            ssl_context=anonymous_tls(cluster),
            sasl=login,
            request_timeout_ms=5_000,
        ) as admin,
    ):
        admin.list_topics()


def test_the_cli_logs_in_from_the_environment(cluster: LocalCluster) -> None:
    tls = cluster.plan.tls
    assert tls is not None
    env = {
        **os.environ,
        "RILLET_BOOTSTRAP": cluster.bootstrap,
        "RILLET_SSL_CAFILE": tls.cafile,
        "RILLET_SASL_MECHANISM": "SCRAM-SHA-256",
        "RILLET_SASL_USERNAME": "alice",
        "RILLET_SASL_PASSWORD": "alice-secret",
    }
    cli = [sys.executable, "-m", "rillet.cli.main", "topics", "list"]
    listed = subprocess.run(cli, capture_output=True, text=True, timeout=60, env=env, check=False)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == ["native"]
    env["RILLET_SASL_PASSWORD"] = "wrong"
    refused = subprocess.run(cli, capture_output=True, text=True, timeout=60, env=env, check=False)
    assert refused.returncode == 1
    assert refused.stderr.count("\n") == 1 and "AuthenticationFailedError" in refused.stderr


def test_cluster_status_names_a_principal_without_acls(cluster: LocalCluster) -> None:
    tls = cluster.plan.tls
    assert tls is not None
    env = {
        **os.environ,
        "RILLET_SSL_CAFILE": tls.cafile,
        "RILLET_SASL_MECHANISM": "SCRAM-SHA-512",
        "RILLET_SASL_USERNAME": "alice",  # may write one topic, not describe the cluster
        "RILLET_SASL_PASSWORD": "alice-secret",
    }
    cli = [sys.executable, "-m", "rillet.cli.main", "cluster", "status"]
    status = subprocess.run(
        [*cli, "--bootstrap", cluster.bootstrap],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert status.returncode == 1
    assert status.stdout.startswith("not authorized: User:alice may not DESCRIBE cluster")
