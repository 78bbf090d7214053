"""The HTTP endpoint of one real node on a secure cluster's settings: HTTPS with the node
certificate (no client certificate needed, though the other listeners require one), a bearer
token for the API and console, Host checks, and probes still answered while 70 sockets that
send nothing are open, from one address and from ten.

The node is started once for the module and always stopped. Probes have deadlines; nothing
sleeps.
"""

from __future__ import annotations

import base64
import http.client
import socket
import ssl
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from node_process import NodeProcess
from prometheus_client.parser import text_string_to_metric_families

from rillet.broker.security.tls_certificates import CertificateFiles, LocalCa

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

TOKEN = "console-token-for-tests-0123456789"
PROBE_DEADLINE_S = 3.0


@dataclass(frozen=True)
class SecureNode:
    process: NodeProcess
    ca: Path
    admin: CertificateFiles

    @property
    def http_port(self) -> int:
        assert self.process.http_port is not None
        return self.process.http_port


@pytest.fixture(scope="module")
def secure_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureNode]:
    base = tmp_path_factory.mktemp("http-secure")
    ca = LocalCa(base / "ca")
    cert = ca.issue(base / "node", "node", ("127.0.0.1", "localhost"))
    admin = ca.issue(base / "admin", "admin")
    token_file = base / "http.token"
    token_file.write_text(TOKEN + "\n")
    (base / "logs").mkdir()
    config = (
        f'[http]\nenabled = true\nport = 0\nauth_token_file = "{token_file}"\n\n'
        f'[tls]\ncertfile = "{cert.certfile}"\nkeyfile = "{cert.keyfile}"\n'
        f'cafile = "{ca.files.certfile}"\nclient_auth = "required"\n\n'
        '[authorizer]\nsuper_users = "User:CN=admin"\n'
    )
    process = NodeProcess(base / "data", base / "logs", config_text=config)
    try:
        process.start()
        yield SecureNode(process, ca.files.certfile, admin)
    finally:
        process.kill()


def https(
    node: SecureNode,
    path: str,
    headers: dict[str, str] | None = None,
    source: str = "127.0.0.1",
    client_certificate: bool = False,
) -> tuple[int, str]:
    context = ssl.create_default_context(cafile=str(node.ca))
    if client_certificate:
        context.load_cert_chain(node.admin.certfile, node.admin.keyfile)
    conn = http.client.HTTPSConnection(
        "127.0.0.1",
        node.http_port,
        timeout=PROBE_DEADLINE_S,
        context=context,
        source_address=(source, 0),
    )
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def test_https_serves_probes_and_the_api_only_with_the_token(secure_node: SecureNode) -> None:
    assert https(secure_node, "/health") == (200, "ok\n")
    assert https(secure_node, "/api/cluster") == (401, "a bearer token is required\n")
    status, body = https(secure_node, "/api/cluster", {"Authorization": f"Bearer {TOKEN}"})
    assert status == 200 and '"brokers"' in body
    basic = base64.b64encode(f"me:{TOKEN}".encode()).decode()
    assert https(secure_node, "/", {"Authorization": f"Basic {basic}"})[0] == 200
    assert https(secure_node, "/api/cluster", client_certificate=True)[0] == 200
    rebound = {"Host": f"rebound.example:{secure_node.http_port}"}
    status, body = https(
        secure_node, "/api/cluster", {**rebound, "Authorization": f"Bearer {TOKEN}"}
    )
    assert (status, body) == (421, "host 'rebound.example' is not served here\n")
    status, text = https(secure_node, "/metrics")
    families = {f.name for f in text_string_to_metric_families(text)}
    assert status == 200 and "rillet_open_connections" in families


def test_plain_http_gets_no_answer_on_a_secure_node(secure_node: SecureNode) -> None:
    request = f"GET /api/cluster HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
    with socket.create_connection(("127.0.0.1", secure_node.http_port), timeout=10) as sock:
        sock.sendall(request.encode())
        try:
            answer = sock.recv(4096)
        except ConnectionResetError:
            answer = b""
    assert not answer.startswith(b"HTTP/")


@pytest.mark.parametrize("sources", [1, 10], ids=["one-address", "ten-addresses"])
def test_70_idle_sockets_leave_health_answering(secure_node: SecureNode, sources: int) -> None:
    with ExitStack() as stack:
        for i in range(70):
            idle = stack.enter_context(socket.socket())
            idle.bind(("127.0.0.1" if sources == 1 else f"127.0.0.{2 + i % sources}", 0))
            idle.settimeout(10)
            idle.connect(("127.0.0.1", secure_node.http_port))
        slowest_s = 0.0
        for _ in range(10):
            started = time.monotonic()
            assert https(secure_node, "/health") == (200, "ok\n")
            slowest_s = max(slowest_s, time.monotonic() - started)
        assert slowest_s < PROBE_DEADLINE_S
        print(f"slowest /health probe beside 70 idle sockets: {slowest_s * 1000:.1f} ms")
