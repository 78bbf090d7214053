"""Turning the ``[quorum]`` config into a running Raft member (voters and observers).

Resolves who the voters are and where they listen, refuses configurations that cannot work
(a voter whose listener differs from the configured one; broker/cluster/node_secret.py refuses a
missing secret), and builds the engine. With no voters configured the node is a cluster of
one: it is the only voter, and its Raft port is ``quorum.raft_port`` (0 picks a free one).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path

import trio

from rillet.broker.config import NodeConfig
from rillet.broker.config.quorum_config import parse_address
from rillet.broker.errors import ConfigError
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


def runs_raft(config: NodeConfig, voters: VoterAddresses) -> bool:
    """A configured voter, or an observer (``quorum.observer``): either runs a replica."""
    return voters.is_voter(config.node_id) or config.quorum.observer


def observer_address(config: NodeConfig) -> str:
    """Where an observer's Raft port is reached (what it asks the leader to send to)."""
    return f"{config.quorum.raft_host}:{config.quorum.raft_port}"


def resolve_voters(config: NodeConfig, bound_port: int) -> VoterAddresses:
    q = config.quorum
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
    return VoterAddresses({v.id: v.raft for v in q.voters}, listeners)


def build_quorum(
    config: NodeConfig,
    voters: VoterAddresses,
    secret: str,
    token: trio.lowlevel.TrioToken,
    tls: PeerTls | None = None,
) -> Quorum:
    """Construct the Raft member. Call on the trio thread (pysyncobj's tick thread stops
    when the thread that built it exits). ``secret``: the node's (broker/cluster/node_secret.py),
    never empty: our engine's transport authenticates with it, and pysyncobj encrypts with
    it and so never unpickles what a peer without it sent. ``tls``: TLS on the raft
    engine's transport."""
    q = config.quorum
    if q.engine == "raft":
        peers = {
            nid: PeerAddress(*parse_address(addr, f"quorum.voters[{nid}].raft"))
            for nid, addr in voters.raft.items()
        }
        raft_settings = RaftSettings(
            tick_ms=q.raft_heartbeat_ms,
            election_timeout_ticks=max(2, q.election_timeout_min_ms // q.raft_heartbeat_ms),
            commit_timeout_s=q.request_timeout_ms / 1000,
            catch_up_timeout_ms=q.voter_catch_up_timeout_ms,
            inbound=InboundLimits(
                max_connections=q.raft_max_connections,
                max_connections_per_ip=q.raft_max_connections_per_ip,
                handshake_timeout_ms=q.raft_handshake_timeout_ms,
            ),
        )
        listen = None
        if config.node_id not in peers:  # an observer (quorum.observer)
            listen = PeerAddress(*parse_address(observer_address(config), "quorum.raft_port"))
        return RaftQuorum(
            config.node_id,
            peers,
            Path(config.data_dir) / RAFT_DIR / "raft",
            secret,
            raft_settings,
            tls=tls,
            listen=listen,
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
        secret,
        token,
        bind_host=q.raft_host,
        settings=settings,
    )


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port
