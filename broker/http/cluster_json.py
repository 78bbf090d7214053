"""The console's data: one JSON document describing the cluster as this node sees it."""

from __future__ import annotations

from typing import Any

from rillet.broker.http.group_lag import group_lags
from rillet.broker.http.node_probe import NodeProbe
from rillet.metadata_quorum.records import NO_LEADER
from rillet.metadata_quorum.state import TopicState


def cluster_document(probe: NodeProbe) -> dict[str, Any]:
    """Brokers, the quorum, topics and partitions, groups and recent decisions."""
    view = probe.view
    state = view.state
    quorum: dict[str, Any] = {
        "controller_id": view.controller_id(),
        "applied_index": state.last_applied_index,
    }
    if view.quorum is not None:
        lead = view.quorum.leadership()
        quorum.update(
            leader_id=-1 if lead.leader_id is None else lead.leader_id,
            term=lead.term,
            commit_index=view.quorum.commit_index(),
            voters=sorted(view.quorum.voters),
        )
    # Each broker's applied index: this node's own, and those heard in heartbeats (on the
    # controller); None when unknown here.
    applied = dict(probe.applied_by_broker)
    applied[probe.node_id] = state.last_applied_index
    brokers = [
        {
            "id": b.broker_id,
            "host": b.host,
            "port": b.port,
            "kafka_port": b.kafka_port,
            "rack": b.rack,
            "epoch": b.broker_epoch,
            "fenced": b.fenced,
            "applied_index": applied.get(b.broker_id),
        }
        for b in sorted(state.brokers.values(), key=lambda b: b.broker_id)
    ]
    topics = []
    for topic in sorted(state.topics.values(), key=lambda t: t.name):
        partitions = []
        for number, p in sorted(state.partitions_of(topic.topic_id).items()):
            replica = probe.replicas.get(topic.name, number)
            partitions.append(
                {
                    "partition": number,
                    "leader": p.leader,
                    "leader_epoch": p.leader_epoch,
                    "replicas": list(p.replicas),
                    "isr": list(p.isr),
                    "under_replicated": len(p.isr) < len(p.replicas),
                    "offline": p.leader == NO_LEADER,
                    "high_watermark": replica.high_watermark if replica is not None else None,
                    "log_end_offset": replica.log.log_end_offset if replica is not None else None,
                }
            )
        topics.append({"name": topic.name, "id": topic.topic_id, "partitions": partitions})
    return {
        "node_id": probe.node_id,
        "cluster_id": probe.config.cluster_id,
        "ready": probe.not_ready_reason() is None,
        "not_ready_reason": probe.not_ready_reason(),
        "quorum": quorum,
        "brokers": brokers,
        "topics": topics,
        "groups": _groups(probe),
        "decisions": [
            {
                "index": d.index,
                "term": d.term,
                "at_ms": d.applied_at_ms,
                "kind": d.kind,
                "text": _with_topic_name(d.text, d.topic_id, state.topics),
            }
            for d in reversed(probe.journal.recent)
        ],
    }


def _with_topic_name(text: str, topic_id: str, topics: dict[str, TopicState]) -> str:
    topic = topics.get(topic_id) if topic_id else None
    return text.replace(topic_id, topic.name) if topic is not None else text


def _groups(probe: NodeProbe) -> list[dict[str, Any]]:
    state = probe.view.state
    lags: dict[str, list[dict[str, Any]]] = {}
    for item in group_lags(probe):
        lags.setdefault(item.group_id, []).append(
            {
                "topic": item.topic,
                "partition": item.partition,
                "committed": item.committed_offset,
                "high_watermark": item.high_watermark,
                "lag": item.lag,
            }
        )

    def name_of(topic_id: str) -> str:
        topic = state.topics.get(topic_id)
        return topic.name if topic is not None else topic_id

    out = []
    ids = set(state.groups.groups) | set(state.classic_groups.groups) | set(lags)
    for group_id in sorted(ids):
        members: list[dict[str, Any]] = []
        group = state.groups.group(group_id)
        kind = "consumer"
        if group is not None:
            for member_id, m in sorted(group.members.items()):
                owned = sorted(f"{name_of(t)}-{p}" for t, p in m.owned)
                members.append({"id": member_id, "assignment": owned})
        classic = state.classic_groups.groups.get(group_id)
        if classic is not None:
            kind = "classic"
            members.extend({"id": mid, "assignment": []} for mid in sorted(classic.members))
        out.append(
            {"id": group_id, "kind": kind, "members": members, "lag": lags.get(group_id, [])}
        )
    return out
