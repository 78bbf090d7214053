"""Reading a TLS connection: requests that arrive together in several TLS records are all
read, though the socket has nothing new after the first read (found on a 3-node TLS cluster:
pipelined requests waited for the next bytes on the wire, and answers came 30 s late)."""

from __future__ import annotations

import ssl
from pathlib import Path

import trio

from rillet.broker.network.served_stream import wait_readable
from rillet.broker.security.tls_certificates import LocalCa


async def test_records_already_received_count_as_readable(tmp_path: Path) -> None:
    ca = LocalCa(tmp_path / "ca")
    node = ca.issue(tmp_path / "node", "node", ["127.0.0.1"])
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(node.certfile, node.keyfile)
    client_ctx = ssl.create_default_context(cafile=str(ca.files.certfile))
    a, b = trio.socket.socketpair()
    server = trio.SSLStream(trio.SocketStream(a), server_ctx, server_side=True)
    client = trio.SSLStream(trio.SocketStream(b), client_ctx, server_hostname="127.0.0.1")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.do_handshake)
        await client.do_handshake()
    # Two records in one burst, each larger than what one read asks for.
    await client.send_all(b"a" * 20_000)
    await client.send_all(b"b" * 20_000)
    got = b""
    with trio.fail_after(5):
        while len(got) < 40_000:
            await wait_readable(server)
            got += await server.receive_some(16_384)
    assert got == b"a" * 20_000 + b"b" * 20_000
    await client.aclose()
    await server.aclose()
