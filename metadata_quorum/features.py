"""The cluster's feature level: which formats every node can read, so a node may write them.

A cluster is upgraded one node at a time, so for a while nodes of two releases share one
metadata log and talk to each other. A node of the previous release stops at the first
record type it does not know and drops Raft messages of a form it cannot read, so a new
form may be written only once *every* node understands it. That is what the feature level
says (Kafka's ``metadata.version`` idea, under rillet's own feature name
:data:`FEATURE_NAME`; Kafka's ``metadata.version`` keeps describing the Kafka surface rillet
answers like):

- a log without a :class:`FeatureLevel` record is at :data:`BASE_LEVEL`, the level of
  release 0.1.0, the first one;
- each node states the highest level it supports when it registers and in its heartbeats;
- the controller raises the level (one :class:`FeatureLevel` record) only when every
  registered broker supports the new level (:func:`refusal_to_raise`); the level never
  goes down. A node of an older release that comes back after a raise stops at the first
  record it cannot read (it exits with the record's type in its log);
- every writer of a newer form asks :func:`refusal_below` first and keeps to the old form
  (or refuses the request) until the level is raised;
- a new cluster (a metadata log with no broker and no topic yet) starts at
  :data:`LATEST_LEVEL` (:func:`bootstrap_records`).

The levels, and what each one lets nodes write, are listed in :data:`LEVELS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rillet.metadata_quorum.state import MetadataState

FEATURE_NAME = "rillet.metadata.version"
BASE_LEVEL = 1  # release 0.1.0: a log without a FeatureLevel record
LATEST_LEVEL = 2  # this release
# What each level lets nodes write (the user-facing list is docs/upgrades.md).
LEVELS: dict[int, str] = {
    1: "0.1.0: the first release",
    2: (
        "0.2.0: Raft vote requests and snapshots with directory ids, partition reassignment "
        "records, transaction records, compacted logs (empty batches, delete horizons), "
        "dynamic broker configs (replication throttles)"
    ),
}
RAFT_DIRECTORY_IDS = 2
PARTITION_REASSIGNMENT = 2
TRANSACTIONS = 2
LOG_COMPACTION = 2
BROKER_CONFIGS = 2


@dataclass(frozen=True, slots=True)
class FeatureLevel:
    """The cluster's feature level from this record on (record type 62)."""

    name: str
    level: int


def refusal_below(state: MetadataState, level: int, what: str) -> str | None:
    """Why ``what`` cannot be written yet (None: the level in force allows it)."""
    if state.feature_level >= level:
        return None
    return (
        f"{what} needs {FEATURE_NAME} {level}, the cluster is at {state.feature_level}: "
        f"upgrade every node, then run `rillet cluster features --upgrade`"
    )


def broker_supports(state: MetadataState, broker_id: int, heard: dict[int, tuple[int, int]]) -> int:
    """The highest level ``broker_id`` is known to support: from its registration, or from a
    heartbeat of the same broker epoch (``heard``: broker id -> (epoch, level)); a broker
    registered by a controller of the previous release carries none in its registration."""
    broker = state.brokers[broker_id]
    level = state.broker_max_levels.get(broker_id, BASE_LEVEL)
    epoch, heard_level = heard.get(broker_id, (-1, BASE_LEVEL))
    if epoch == broker.broker_epoch:
        level = max(level, heard_level)
    return level


def refusal_to_raise(
    state: MetadataState, level: int, heard: dict[int, tuple[int, int]], supported: int
) -> str | None:
    """Why the controller (which supports up to ``supported``) may not set ``level`` now."""
    if level < state.feature_level:
        return f"{FEATURE_NAME} never goes down (at {state.feature_level}, asked {level})"
    if level > supported:
        return f"{FEATURE_NAME} {level} is above what the controller supports ({supported})"
    behind = sorted(b for b in state.brokers if broker_supports(state, b, heard) < level)
    if behind:
        nodes = ", ".join(str(b) for b in behind)
        return (
            f"{FEATURE_NAME} {level} is not supported by node(s) {nodes}: "
            "upgrade and restart them first"
        )
    return None


def bootstrap_records(state: MetadataState) -> list[FeatureLevel]:
    """A new cluster starts at the latest level: nothing older than this release ever
    wrote its log. An existing one (any broker or topic) keeps its level."""
    if state.feature_level_set or state.brokers or state.topics:
        return []
    return [FeatureLevel(FEATURE_NAME, LATEST_LEVEL)]
