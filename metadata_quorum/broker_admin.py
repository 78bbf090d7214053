"""Controller decisions on brokers themselves: their dynamic configs and unregistration.

A broker is unregistered (Kafka's UnregisterBroker, KIP-631) only once no partition names it
any more, not even as a replica still being added or removed: its registration is what lets
the others reach it, so dropping it earlier would strand the copies it holds. A broker that
is unregistered while it still runs registers again at its next heartbeat, as in Kafka; the
operator stops it first (``rillet cluster decommission`` waits for that).
"""

from __future__ import annotations

from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.features import BROKER_CONFIGS, refusal_below
from rillet.metadata_quorum.records import BrokerConfigsRecord, UnregisterBroker
from rillet.metadata_quorum.state import MetadataState
from rillet.wire.error_codes import ErrorCode

CLUSTER_DEFAULT = -1  # the broker id of the cluster-wide defaults (Kafka's resource "")


def partitions_on(state: MetadataState, broker_id: int) -> list[tuple[str, int]]:
    """(topic name, partition) of every partition that names ``broker_id`` as a replica."""
    out = []
    for (topic_id, partition), s in state.partitions.items():
        if broker_id in s.replicas or broker_id in s.adding_replicas:
            topic = state.topics.get(topic_id)
            out.append((topic.name if topic is not None else topic_id, partition))
    return sorted(out)


def unregister_broker(state: MetadataState, broker_id: int) -> Decision:
    broker = state.brokers.get(broker_id)
    if broker is None:
        return Decision(
            [], ErrorCode.BROKER_ID_NOT_REGISTERED, f"broker {broker_id} is not registered"
        )
    held = partitions_on(state, broker_id)
    if held:
        topic, partition = held[0]
        return Decision(
            [],
            ErrorCode.INVALID_REQUEST,
            f"broker {broker_id} still holds replicas of {len(held)} partition(s), "
            f"{topic}-{partition} first: move them off first (rillet cluster decommission)",
        )
    records: list[BrokerConfigsRecord | UnregisterBroker] = [
        UnregisterBroker(broker_id, broker.broker_epoch)
    ]
    if broker_id in state.broker_configs:
        records.append(BrokerConfigsRecord(broker_id, {}))  # its settings go with it
    return Decision(list(records))


def alter_broker_configs(state: MetadataState, broker_id: int, configs: dict[str, str]) -> Decision:
    """Make ``configs`` the broker's dynamic settings (validated by the caller). The same map
    again commits nothing: a resent change succeeds. Refused below the feature level of
    broker-config records, which a node of the previous release could not read."""
    refusal = refusal_below(state, BROKER_CONFIGS, "dynamic broker configs")
    if refusal is not None:
        return Decision([], ErrorCode.UNSUPPORTED_VERSION, refusal)
    if broker_id != CLUSTER_DEFAULT and broker_id not in state.brokers:
        return Decision(
            [], ErrorCode.BROKER_ID_NOT_REGISTERED, f"broker {broker_id} is not registered"
        )
    if state.broker_configs.get(broker_id, {}) == configs:
        return Decision([])
    return Decision([BrokerConfigsRecord(broker_id, dict(configs))])
