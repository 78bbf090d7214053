"""Turning the ``[quorum]`` config into a running Raft member (voters only).

Resolves who the voters are and where they listen, refuses configurations that cannot work
(a multi-voter quorum without a secret, a voter whose listener differs from the configured
one), and builds the engine. With no voters configured the node is a cluster of one: it is
the only voter, and its Raft port is ``quorum.raft_port`` (0 picks a free one at start).
"""

from __future__ import annotations

import ipaddress
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path

import trio

from rillet.broker.config import NodeConfig
from rillet.broker.errors import ConfigError
from rillet.broker.quorum_config import parse_address
from rillet.raft.pysyncobj_engine import PysyncobjQuorum, PysyncobjSettings
from rillet.raft.quorum import Quorum
from rillet.raft.raft_quorum import RaftQuorum, RaftSettings
from rillet.raft.transport import InboundLimits, PeerAddress, PeerTls

RAFT_DIR = "__raft"


@dataclass(frozen=True, slots=True)
class VoterAddresses:
    raft: dict[int, str]  # node id -> host:port of its Raft transport
    listeners: dict[int, tuple[str, int]]  # node id -> its client listener

    def is_voter(self, node_id: int) -> bool:
        return node_id in self.raft


def resolve_voters(config: NodeConfig, bound_port: int) -> VoterAddresses:
    q = config.quorum
    check_pysyncobj_exposure(config)
    if not q.voters:
        raft_port = q.raft_port or _free_port(q.raft_host)
        return VoterAddresses(
            {config.node_id: f"{q.raft_host}:{raft_port}"},
            {config.node_id: (config.advertised_host, bound_port)},
        )
    listeners = {
        v.id: parse_address(v.listener, f"quorum.voters[{v.id}].listener") for v in q.voters
    }
    me = q.voter(config.node_id)
    if me is not None and listeners[me.id][1] != bound_port:
        raise ConfigError(
            f"node {config.node_id} is voter with listener {me.listener}, but it listens on "
            f"port {bound_port}: set listener.port to the voter's port"
        )
    if len(q.voters) > 1 and not q.load_secret():
        raise ConfigError(
            "a multi-node quorum needs a cluster secret: set quorum.secret_file or the "
            "RILLET_CLUSTER_SECRET environment variable"
        )
    return VoterAddresses({v.id: v.raft for v in q.voters}, listeners)


def build_quorum(
    config: NodeConfig,
    voters: VoterAddresses,
    secret: str,
    token: trio.lowlevel.TrioToken,
    tls: PeerTls | None = None,
) -> Quorum:
    """Construct the Raft member. Call on the trio thread (pysyncobj's tick thread stops
    when the thread that built it exits). ``tls``: TLS on the raft engine's transport
    (pysyncobj encrypts with the cluster secret instead, see check_pysyncobj_exposure)."""
    q = config.quorum
    if q.engine == "raft":
        if not secret:
            # A cluster of one has no peer to share a secret with; the transport still
            # authenticates, with a key nobody else has.
            secret = secrets.token_urlsafe(32)
        peers = {
            nid: PeerAddress(*parse_address(addr, f"quorum.voters[{nid}].raft"))
            for nid, addr in voters.raft.items()
        }
        raft_settings = RaftSettings(
            tick_ms=q.raft_heartbeat_ms,
            election_timeout_ticks=max(2, q.election_timeout_min_ms // q.raft_heartbeat_ms),
            commit_timeout_s=q.request_timeout_ms / 1000,
            inbound=InboundLimits(
                max_connections=q.raft_max_connections,
                max_connections_per_ip=q.raft_max_connections_per_ip,
                handshake_timeout_ms=q.raft_handshake_timeout_ms,
            ),
        )
        return RaftQuorum(
            config.node_id,
            peers,
            Path(config.data_dir) / RAFT_DIR / "raft",
            secret,
            raft_settings,
            tls=tls,
        )
    settings = PysyncobjSettings(
        election_timeout_min_s=q.election_timeout_min_ms / 1000,
        election_timeout_max_s=q.election_timeout_max_ms / 1000,
        heartbeat_s=q.raft_heartbeat_ms / 1000,
        commit_timeout_s=q.request_timeout_ms / 1000,
    )
    return PysyncobjQuorum(
        config.node_id,
        voters.raft,
        Path(config.data_dir) / RAFT_DIR,
        secret or None,
        token,
        bind_host=q.raft_host,
        settings=settings,
    )


def check_pysyncobj_exposure(config: NodeConfig) -> None:
    """Refuse a pysyncobj voter that listens off loopback without a secret.

    pysyncobj unpickles what its peers send; with a secret it only accepts peers that prove
    it (its own encrypted, authenticated channel), without one anyone who reaches the port
    can make the node unpickle a crafted payload, which runs code.
    """
    q = config.quorum
    if q.engine != "pysyncobj" or _is_loopback(q.raft_host) or q.load_secret():
        return
    raise ConfigError(
        f"quorum.raft_host {q.raft_host!r} is not a loopback address and there is no cluster "
        "secret: pysyncobj would unpickle anything sent to its port; set quorum.secret_file "
        "(or RILLET_CLUSTER_SECRET), or bind raft_host to 127.0.0.1"
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name other than localhost: it may resolve anywhere


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port
