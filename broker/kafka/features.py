"""The feature levels ApiVersions (v3+) reports, what ``kafka-features describe`` prints.

Kafka ties what a cluster may use to ``metadata.version`` levels. rillet's metadata log is
its own, so its level only says which Kafka release's broker-facing surface rillet answers
like: level 7 (3.3-IV3), the first KRaft level and the lowest Kafka 4's tools know, since
rillet serves none of what later levels add (topic ids in Fetch, KIP-848's consumer
protocol in Kafka's form, transactions, eligible leader replicas). ``kraft.version`` 0 is a
quorum with a fixed voter set, as rillet's is. Levels never change here (UpdateFeatures is
not served), so the finalized epoch is 0.
"""

from __future__ import annotations

from typing import Any

# feature -> (lowest, highest level supported, level in force)
FEATURES: dict[str, tuple[int, int, int]] = {
    "metadata.version": (7, 7, 7),
    "kraft.version": (0, 0, 0),
}
FINALIZED_EPOCH = 0


def feature_fields() -> dict[str, Any]:
    """ApiVersions' feature fields, as :func:`~rillet.broker.kafka.entities.build` takes
    them; levels of 0 are supported but not finalized, as Kafka reports them."""
    return {
        "supported_features": [
            {"name": name, "min_version": low, "max_version": high}
            for name, (low, high, _) in sorted(FEATURES.items())
        ],
        "finalized_features_epoch": FINALIZED_EPOCH,
        "finalized_features": [
            {"name": name, "max_version_level": level, "min_version_level": level}
            for name, (_, _, level) in sorted(FEATURES.items())
            if level > 0
        ],
    }
