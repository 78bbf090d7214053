"""A paused node first in a client's bootstrap list does not hold the client up.

From the faults issue: on a TLS cluster, a fresh Producer and Admin whose bootstrap list
named a SIGSTOPped node first waited about 40 s on it, after the ISR had already shrunk. A
paused node still completes TCP connects (the kernel's backlog) but never its TLS handshake,
so the client waited out its connect timeout on it (and, without TLS, the request timeout).
Now the client starts the next bootstrap node when the first has not completed its
connection set-up within ``connection_attempt_delay_ms`` (250 ms), and hedges metadata
requests.

A 3-node TLS cluster, and one made as ``rillet cluster up --secure`` makes one (mutual TLS
for the admin, a SASL login for the producer, the authorizer on), each with a 2 s session
timeout; the node is resumed in a ``finally``. The times are printed (``pytest -s``).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from cluster_checks import FAST_ELECTIONS, wait_for

from rillet.cli.secure_cluster import (
    KAFKA_SASL_MECHANISMS,
    NATIVE_SASL_MECHANISMS,
    SUPER_USERS,
    make_tls_files,
)
from rillet.client import BlockingAdmin, BlockingProducer, NewTopic
from rillet.client.sasl import SaslLogin
from rillet.client.tls import client_ssl_context
from rillet.launcher.local_cluster import LocalCluster, plan_cluster
from rillet.wire.acls import AclBinding, Operation, PatternType, Permission, ResourceType

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

TOPIC = "paused-bootstrap"
BOUND_S = 5.0  # the old behaviour: 10 s (TLS connect timeout) or 30 s (request timeout)


@pytest.fixture(params=["tls", "secure"])
def cluster(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[LocalCluster, Clients]]:
    """``tls``: TLS listeners and links; ``secure``: as ``rillet cluster up --secure`` makes
    one (TLS with client certificates requested, SASL on both listeners for clients without
    a certificate, the ACL authorizer), where the 40 s wait was seen."""
    config = FAST_ELECTIONS + (
        "broker_session_timeout_ms = 2000\nbroker_heartbeat_interval_ms = 300\n"
        "\n[replication]\nreplica_lag_time_max_ms = 1500\n"
    )
    tls = replace(make_tls_files(tmp_path), client_auth="requested")
    secure = request.param == "secure"
    plan = plan_cluster(
        tmp_path / "cluster",
        3,
        config,
        tls=tls,
        kafka_sasl=KAFKA_SASL_MECHANISMS if secure else "",
        super_users=SUPER_USERS if secure else None,
        native_sasl=NATIVE_SASL_MECHANISMS if secure else "",
    )
    certified = client_ssl_context(tls.cafile, tls.client_certfile, tls.client_keyfile)
    with LocalCluster(plan) as c:
        c.start()
        clients = Clients(admin={"ssl_context": certified}, producer={"ssl_context": certified})
        if secure:
            with BlockingAdmin(c.bootstrap, ssl_context=certified) as admin:
                admin.set_user_password("writer", "writer-secret")
                admin.create_acls([_allow("writer", Operation.ALL)])
            login = SaslLogin("SCRAM-SHA-512", "writer", "writer-secret")
            anonymous = client_ssl_context(tls.cafile)
            clients = Clients(
                admin={"ssl_context": certified},
                producer={"ssl_context": anonymous, "sasl": login},  # logs in, no certificate
            )
        yield c, clients


@dataclass(frozen=True)
class Clients:
    admin: dict[str, Any]
    producer: dict[str, Any]


def _allow(user: str, operation: Operation) -> AclBinding:
    return AclBinding(
        ResourceType.TOPIC,
        TOPIC,
        PatternType.LITERAL,
        f"User:{user}",
        "*",
        operation,
        Permission.ALLOW,
    )


def test_a_fresh_producer_and_admin_skip_a_paused_first_bootstrap_node(
    cluster: tuple[LocalCluster, Clients],
) -> None:
    local, clients = cluster
    with BlockingAdmin(local.bootstrap, **clients.admin) as admin:
        admin.create_topics([NewTopic(TOPIC, 3, replication_factor=3)])
        controller = admin.describe_cluster().controller_id
    victim = next(n for n in local.plan.nodes if n.node_id != controller)
    live = [n.bootstrap for n in local.plan.nodes if n is not victim]
    paused_first = ",".join([victim.bootstrap, *live])

    local.signal(victim.node_id, signal.SIGSTOP)
    try:
        with BlockingAdmin(",".join(live), **clients.admin) as admin:

            def isr_shrank() -> bool:
                parts = admin.describe_topics([TOPIC])[0].partitions
                return all(victim.node_id not in p.isr and p.leader > 0 for p in parts)

            wait_for("the ISR without the paused node", isr_shrank, timeout_s=15)

        started = time.monotonic()
        with BlockingProducer(paused_first, acks="all", **clients.producer) as producer:
            written = producer.send(TOPIC, b"v").result(timeout=30)
        produce_s = time.monotonic() - started

        started = time.monotonic()
        with BlockingAdmin(paused_first, **clients.admin) as admin:
            names = admin.list_topics()
            described = admin.describe_topics([TOPIC])
        admin_s = time.monotonic() - started
    finally:
        local.signal(victim.node_id, signal.SIGCONT)
    print(f"paused node {victim.node_id} first: produce {produce_s:.2f}s, admin {admin_s:.2f}s")
    assert written.offset >= 0 and TOPIC in names and len(described[0].partitions) == 3
    assert produce_s < BOUND_S
    assert admin_s < BOUND_S
