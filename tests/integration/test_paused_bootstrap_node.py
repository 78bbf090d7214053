"""A paused node first in a client's bootstrap list does not hold the client up.

From the faults issue: on a TLS cluster, a fresh Producer and Admin whose bootstrap list
named a SIGSTOPped node first waited about 40 s on it, after the ISR had already shrunk. A
paused node still completes TCP connects (the kernel's backlog) but never its TLS handshake,
so the client waited out its connect timeout on it (and, without TLS, the request timeout).
Now the client starts the next bootstrap node when the first has not completed its
connection set-up within ``connection_attempt_delay_ms`` (250 ms), and hedges metadata
requests.

One 3-node TLS cluster, a 2 s session timeout; the node is resumed in a ``finally``. The
times are printed (``pytest -s``).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_checks import FAST_ELECTIONS, wait_for

from rillet.broker.tls_certificates import LocalCa
from rillet.client import BlockingAdmin, BlockingProducer, NewTopic
from rillet.client.tls import client_ssl_context
from rillet.launcher.local_cluster import LocalCluster, plan_cluster

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

TOPIC = "paused-bootstrap"
BOUND_S = 5.0  # the old behaviour: 10 s (TLS connect timeout) or 30 s (request timeout)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[LocalCluster, str]]:
    ca = LocalCa(tmp_path / "ca")
    node = ca.issue(tmp_path / "node", "node", ("127.0.0.1", "localhost"))
    config = FAST_ELECTIONS + (
        "broker_session_timeout_ms = 2000\nbroker_heartbeat_interval_ms = 300\n"
        "\n[replication]\nreplica_lag_time_max_ms = 1500\n"
        f'\n[tls]\ncertfile = "{node.certfile}"\nkeyfile = "{node.keyfile}"\n'
        f'cafile = "{ca.files.certfile}"\nclient_auth = "requested"\n'
    )
    with LocalCluster(plan_cluster(tmp_path / "cluster", 3, config)) as c:
        c.start()
        yield c, str(ca.files.certfile)


def test_a_fresh_producer_and_admin_skip_a_paused_first_bootstrap_node(
    cluster: tuple[LocalCluster, str],
) -> None:
    local, cafile = cluster
    tls = client_ssl_context(cafile)
    with BlockingAdmin(local.bootstrap, ssl_context=tls) as admin:
        admin.create_topics([NewTopic(TOPIC, 3, replication_factor=3)])
        controller = admin.describe_cluster().controller_id
    victim = next(n for n in local.plan.nodes if n.node_id != controller)
    live = [n.bootstrap for n in local.plan.nodes if n is not victim]
    paused_first = ",".join([victim.bootstrap, *live])

    local.signal(victim.node_id, signal.SIGSTOP)
    try:
        with BlockingAdmin(",".join(live), ssl_context=tls) as admin:

            def isr_shrank() -> bool:
                parts = admin.describe_topics([TOPIC])[0].partitions
                return all(victim.node_id not in p.isr and p.leader > 0 for p in parts)

            wait_for("the ISR without the paused node", isr_shrank, timeout_s=15)

        started = time.monotonic()
        with BlockingProducer(paused_first, acks="all", ssl_context=tls) as producer:
            written = producer.send(TOPIC, b"v").result(timeout=30)
        produce_s = time.monotonic() - started

        started = time.monotonic()
        with BlockingAdmin(paused_first, ssl_context=tls) as admin:
            names = admin.list_topics()
            described = admin.describe_topics([TOPIC])
        admin_s = time.monotonic() - started
    finally:
        local.signal(victim.node_id, signal.SIGCONT)
    print(f"paused node {victim.node_id} first: produce {produce_s:.2f}s, admin {admin_s:.2f}s")
    assert written.offset >= 0 and TOPIC in names and len(described[0].partitions) == 3
    assert produce_s < BOUND_S
    assert admin_s < BOUND_S
