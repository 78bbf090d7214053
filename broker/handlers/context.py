"""What every handler may use: the node config, the replica manager and the clock."""

from __future__ import annotations

import time
from dataclasses import dataclass

from rillet.broker.config import NodeConfig
from rillet.broker.replica_manager import ReplicaManager


@dataclass(frozen=True, slots=True)
class BrokerContext:
    config: NodeConfig
    replicas: ReplicaManager
    advertised_port: int

    @staticmethod
    def now_ms() -> int:
        return time.time_ns() // 1_000_000
