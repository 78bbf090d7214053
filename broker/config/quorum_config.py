"""The ``[quorum]`` section: who the Raft voters are, the cluster secret and the timeouts.

A node is a *voter* (runs Raft and the controller, and is also a broker: combined mode) when
its ``node_id`` is among ``voters``, and *broker only* otherwise. With no voters configured
the node is a one-voter cluster of its own, which is what ``rillet node`` with no config
runs. Every voter names two addresses: its Raft port (voters only talk Raft to each other)
and its client listener (where brokers register, heartbeat and fetch metadata).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from rillet.broker.errors import ConfigError

SECRET_ENV = "RILLET_CLUSTER_SECRET"
MIN_SECRET_CHARS = 16


def parse_address(text: str, key: str) -> tuple[str, int]:
    """``host:port`` → (host, port), with a config error that names the key."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"{key} must be host:port with a port in 1-65535, got {text!r}")
    return host, int(port)


# raft: our own engine (fsynced log, authenticated transport), the default. pysyncobj: the
# first engine (no fsync), still supported for clusters that were built on it.
ENGINES = ("pysyncobj", "raft")


@dataclass(frozen=True, slots=True)
class VoterConfig:
    id: int = -1  # every key is required; defaults only let the loader check types
    raft: str = ""  # host:port of its Raft transport
    listener: str = ""  # host:port of its client listener

    def __post_init__(self) -> None:
        if self.id < 0:
            raise ValueError(f"every voter needs an id >= 0, got {self.id}")
        parse_address(self.raft, f"quorum.voters[{self.id}].raft")
        parse_address(self.listener, f"quorum.voters[{self.id}].listener")


@dataclass(frozen=True, slots=True)
class QuorumConfig:
    voters: tuple[VoterConfig, ...] = field(default=(), metadata={"item": VoterConfig})
    engine: str = "raft"
    secret: str = ""  # prefer secret_file or the RILLET_CLUSTER_SECRET environment variable
    secret_file: str = ""
    raft_host: str = "127.0.0.1"  # bind address of the Raft port
    raft_port: int = 0  # single-node mode (0 picks a free port), and an observer's port
    # A node not among the voters runs a Raft replica without a vote on raft_host:raft_port
    # (engine "raft"): it gets the metadata log from the leader and can be added as a voter.
    observer: bool = False
    election_timeout_min_ms: int = 1_000  # KRaft's controller.quorum.election.timeout.ms
    election_timeout_max_ms: int = 2_000
    raft_heartbeat_ms: int = 50
    broker_session_timeout_ms: int = 9_000
    broker_heartbeat_interval_ms: int = 250
    broker_connection_lost_grace_ms: int = 500
    new_controller_grace_ms: int = 3_000
    controller_tick_ms: int = 100
    auto_leader_rebalance_enable: bool = True
    leader_rebalance_interval_ms: int = 10_000  # how often the controller checks it
    snapshot_every_records: int = 10_000
    request_timeout_ms: int = 5_000
    # A node being added as a voter (AddRaftVoter) must catch up with the leader's log
    # within this, or the change is given up (engine "raft" only).
    voter_catch_up_timeout_ms: int = 30_000
    max_records_per_batch: int = 500  # records per metadata Raft entry (entry_split)
    # Inbound connections to the Raft port of our own engine (raft/inbound_connections.py):
    # all of them, those of one address not yet authenticated, and how long a connection
    # may take to authenticate (TLS handshake and hello) before it is closed.
    raft_max_connections: int = 32
    raft_max_connections_per_ip: int = 4
    raft_handshake_timeout_ms: int = 3_000

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(
                f"quorum.engine must be one of {', '.join(ENGINES)}, got {self.engine!r}"
            )
        ids = [v.id for v in self.voters]
        if len(set(ids)) != len(ids):
            raise ValueError("quorum.voters has duplicate ids")
        if not 0 < self.election_timeout_min_ms < self.election_timeout_max_ms:
            raise ValueError("need 0 < election_timeout_min_ms < election_timeout_max_ms")
        if not 0 < self.raft_heartbeat_ms < self.election_timeout_min_ms:
            raise ValueError("raft_heartbeat_ms must be below election_timeout_min_ms")
        if not 0 < self.broker_heartbeat_interval_ms < self.broker_session_timeout_ms:
            raise ValueError("broker_heartbeat_interval_ms must be below the session timeout")
        if self.observer and self.engine != "raft":
            raise ValueError('quorum.observer needs quorum.engine = "raft"')
        if self.observer and not 0 < self.raft_port < 65536:
            raise ValueError("quorum.observer needs quorum.raft_port: the port it listens on")
        if self.voter_catch_up_timeout_ms < 1:
            raise ValueError("voter_catch_up_timeout_ms must be positive")
        if self.max_records_per_batch < 1:
            raise ValueError("max_records_per_batch must be at least 1")
        if self.snapshot_every_records < 1 or self.controller_tick_ms < 1:
            raise ValueError("snapshot_every_records and controller_tick_ms must be positive")
        self._check_raft_port_limits()

    def _check_raft_port_limits(self) -> None:
        if self.raft_max_connections < max(2, len(self.voters)):
            raise ValueError(
                "quorum.raft_max_connections must leave a connection for each other voter "
                f"and one more: at least {max(2, len(self.voters))}, not "
                f"{self.raft_max_connections}"
            )
        if not 1 <= self.raft_max_connections_per_ip <= self.raft_max_connections:
            raise ValueError(
                "quorum.raft_max_connections_per_ip must be between 1 and "
                f"raft_max_connections ({self.raft_max_connections}), not "
                f"{self.raft_max_connections_per_ip}"
            )
        if self.raft_handshake_timeout_ms < 1:
            raise ValueError(
                f"quorum.raft_handshake_timeout_ms must be >= 1, not "
                f"{self.raft_handshake_timeout_ms}"
            )

    def voter(self, node_id: int) -> VoterConfig | None:
        return next((v for v in self.voters if v.id == node_id), None)

    def load_secret(self) -> str:
        """The cluster secret from the file, the environment or the config (in that order)."""
        if self.secret_file:
            try:
                text = Path(self.secret_file).read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ConfigError(f"cannot read quorum.secret_file: {exc}") from exc
        else:
            text = os.environ.get(SECRET_ENV, "") or self.secret
        if text and len(text) < MIN_SECRET_CHARS:
            raise ConfigError(f"the cluster secret must have at least {MIN_SECRET_CHARS} chars")
        return text
