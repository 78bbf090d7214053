"""The Raft port's connection caps, without sockets: a total, and a per-address cap on
connections that have not authenticated."""

from __future__ import annotations

from rillet.raft.inbound_connections import InboundConnections, InboundLimits


def test_an_address_gets_its_cap_of_unauthenticated_connections_and_no_more() -> None:
    caps = InboundConnections(InboundLimits(max_connections=10, max_connections_per_ip=3))
    held = [caps.admit("10.0.0.9") for _ in range(3)]
    assert all(h is not None for h in held)
    assert caps.admit("10.0.0.9") is None
    assert caps.admit("10.0.0.8") is not None  # another address has its own cap
    assert caps.refused == 1 and caps.open == 4


def test_the_total_cap_holds_across_addresses() -> None:
    caps = InboundConnections(InboundLimits(max_connections=3, max_connections_per_ip=3))
    assert all(caps.admit(f"10.0.0.{i}") is not None for i in range(3))
    assert caps.admit("10.0.0.99") is None


def test_an_authenticated_peer_frees_its_address_slot_but_not_the_total() -> None:
    caps = InboundConnections(InboundLimits(max_connections=4, max_connections_per_ip=1))
    peer = caps.admit("127.0.0.1")
    assert peer is not None and caps.admit("127.0.0.1") is None
    caps.authenticated(peer)
    caps.authenticated(peer)  # twice frees nothing more
    assert caps.unauthenticated_from("127.0.0.1") == 0
    other = caps.admit("127.0.0.1")  # voters of a local cluster share an address
    assert other is not None and caps.open == 2
    caps.release(peer)
    caps.release(peer)  # idempotent
    caps.release(other)
    assert caps.open == 0 and caps.unauthenticated_from("127.0.0.1") == 0
