"""The feature levels ApiVersions (v3+) reports, what ``kafka-features describe`` prints.

Kafka ties what a cluster may use to ``metadata.version`` levels. rillet's metadata log is
its own, so its level only says which Kafka release's broker-facing surface rillet answers
like: level 7 (3.3-IV3), the first KRaft level and the lowest Kafka 4's tools know, since
rillet serves none of what later levels add (topic ids in Fetch, KIP-848's consumer
protocol in Kafka's form, transactions, eligible leader replicas). ``kraft.version`` 0 is a
quorum with a fixed voter set, as rillet's is. Levels never change here, so the finalized
epoch is 0: UpdateFeatures (``kafka-features upgrade/downgrade``, with or without
``--dry-run``) checks each update as Kafka's controller does and accepts only the level in
force; any other level, or a feature rillet does not have, is refused with Kafka's error
and message.
"""

from __future__ import annotations

from typing import Any

from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Answer

# feature -> (lowest, highest level supported, level in force)
FEATURES: dict[str, tuple[int, int, int]] = {
    "metadata.version": (7, 7, 7),
    "kraft.version": (0, 0, 0),
}
FINALIZED_EPOCH = 0
INVALID_UPDATE_VERSION = 95  # Kafka's error (rillet's own apis have no feature updates)
UPGRADE, SAFE_DOWNGRADE = 1, 2
V2_REFUSAL = "The update failed for all features since the following feature had an error: "


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


def update_refusal(feature: str, level: int, upgrade_type: int, node_id: int) -> str | None:
    """Why Kafka's controller would refuse to set ``feature`` to ``level`` here, in its words
    (None: the update is allowed, which here means it leaves the level as it is)."""
    prefix = f"Invalid update version {level} for feature {feature}."
    span = FEATURES.get(feature)
    if span is None:
        return f"{prefix} Local controller {node_id} does not support this feature."
    low, high, current = span
    if level == current:
        return None
    if level < current and upgrade_type == UPGRADE:
        return (
            f"{prefix} Can't downgrade the version of this feature without setting the "
            "upgrade type to either safe or unsafe downgrade."
        )
    if not low <= level <= high:
        return f"{prefix} Local controller {node_id} only supports versions {low}-{high}"
    return f"{prefix} rillet does not change feature levels"  # unreachable while low == high


def translate_update_features(schema: ApiSchema, req: Any, node_id: int) -> Answer:
    """Each update checked (``validate_only`` or not: nothing ever changes); v0 and v1
    answer per feature, v2 with the first refusal only, as Kafka does."""
    refusals = [
        (
            str(u.feature),
            update_refusal(str(u.feature), int(u.max_version_level), _type(u), node_id),
        )
        for u in req.feature_updates
    ]
    first = next((why for _, why in refusals if why is not None), None)
    top: tuple[int, str | None] = (0, None)
    if first is not None and schema.version >= 2:
        top = (INVALID_UPDATE_VERSION, V2_REFUSAL + first)
    return Answer(
        build(
            schema.response_type,
            {
                "error_code": top[0],
                "error_message": top[1],
                "results": [
                    {
                        "feature": feature,
                        "error_code": 0 if why is None else INVALID_UPDATE_VERSION,
                        "error_message": why,
                    }
                    for feature, why in refusals
                ],
            },
        )
    )


def _type(update: Any) -> int:
    """v1's upgrade type; v0's ``allow_downgrade`` as a safe downgrade."""
    if hasattr(update, "upgrade_type"):
        return int(update.upgrade_type)
    return SAFE_DOWNGRADE if getattr(update, "allow_downgrade", False) else UPGRADE
