"""The feature levels ApiVersions (v3+) reports, what ``kafka-features describe`` prints.

Kafka ties what a cluster may use to ``metadata.version`` levels. rillet's metadata log is
its own, so its level only says which Kafka release's broker-facing surface rillet answers
like: level 7 (3.3-IV3), the first KRaft level and the lowest Kafka 4's tools know, since
rillet serves none of what later levels add (topic ids in Fetch, KIP-848's consumer
protocol in Kafka's form, transactions, eligible leader replicas). ``kraft.version`` 0 is a
quorum with a fixed voter set, as rillet's is. Those two never change: UpdateFeatures
(``kafka-features upgrade/downgrade``, with or without ``--dry-run``) checks each update of
them as Kafka's controller does and accepts only the level in force; any other level, or a
feature rillet does not have, is refused with Kafka's error and message.

``rillet.metadata.version`` is rillet's own feature level (metadata_quorum/features.py,
docs/upgrades.md): finalized at the cluster's level, and raised for real by an update of it
(``kafka-features upgrade --feature rillet.metadata.version=2``), which goes to the
controller as the native UpdateFeatures request. The finalized epoch is that level (it only
ever rises, as Kafka's epoch does).
"""

from __future__ import annotations

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Answer, Forward, KafkaResponse, field_or
from rillet.metadata_quorum.features import BASE_LEVEL, FEATURE_NAME, LATEST_LEVEL
from rillet.wire.feature_messages import UpdateFeaturesRequest, UpdateFeaturesResponse

# feature -> (lowest, highest level supported, level in force)
FEATURES: dict[str, tuple[int, int, int]] = {
    "metadata.version": (7, 7, 7),
    "kraft.version": (0, 0, 0),
}
INVALID_UPDATE_VERSION = 95  # Kafka's error (rillet's own apis have no feature updates)
UPGRADE, SAFE_DOWNGRADE = 1, 2
V2_REFUSAL = "The update failed for all features since the following feature had an error: "


def _features(rillet_level: int) -> dict[str, tuple[int, int, int]]:
    return {**FEATURES, FEATURE_NAME: (BASE_LEVEL, LATEST_LEVEL, rillet_level)}


def feature_fields(rillet_level: int = 0) -> shapes.ApiVersionsResponseShape:
    """ApiVersions' feature fields, as :func:`~rillet.broker.kafka.entities.build` takes
    them; levels of 0 are supported but not finalized, as Kafka reports them
    (``rillet_level`` 0: the cluster's level is not known here)."""
    features = _features(rillet_level)
    return {
        "supported_features": [
            {"name": name, "min_version": low, "max_version": high}
            for name, (low, high, _) in sorted(features.items())
        ],
        "finalized_features_epoch": rillet_level,
        "finalized_features": [
            {"name": name, "max_version_level": level, "min_version_level": level}
            for name, (_, _, level) in sorted(features.items())
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


def translate_update_features(
    schema: ApiSchema, req: shapes.UpdateFeaturesRequests, node_id: int
) -> Answer | Forward[UpdateFeaturesResponse]:
    """Each update checked; v0 and v1 answer per feature, v2 with the first refusal only,
    as Kafka does. An update of rillet's own feature goes to the controller (the other
    updates of the request are checked here); any other never changes anything."""
    updates = [u for u in req.feature_updates]  # (list() would join the versions to object)
    names = [str(u.feature) for u in updates]
    own = [u for u in updates if str(u.feature) == FEATURE_NAME]
    refusals: dict[int, str | None] = {
        i: update_refusal(str(u.feature), int(u.max_version_level), _type(u), node_id)
        for i, u in enumerate(updates)
        if str(u.feature) != FEATURE_NAME
    }
    if not own:
        return Answer(_answer(schema, names, refusals))
    native = UpdateFeaturesRequest(
        FEATURE_NAME, int(own[-1].max_version_level), field_or(req, "validate_only", False)
    )

    def reply(resp: UpdateFeaturesResponse) -> KafkaResponse:
        why = None if resp.error_code == 0 else resp.error_message or "refused"
        mine = {i: why for i, name in enumerate(names) if name == FEATURE_NAME}
        return _answer(schema, names, {**refusals, **mine})

    def fail(code: int) -> KafkaResponse:
        mine = {i: f"error {code}" for i, name in enumerate(names) if name == FEATURE_NAME}
        return _answer(schema, names, {**refusals, **mine})

    return Forward(native, reply, fail)


def _answer(schema: ApiSchema, names: list[str], refusals: dict[int, str | None]) -> KafkaResponse:
    ordered = [(name, refusals.get(i)) for i, name in enumerate(names)]
    first = next((why for _, why in ordered if why is not None), None)
    top: tuple[int, str | None] = (0, None)
    if first is not None and schema.version >= 2:
        top = (INVALID_UPDATE_VERSION, V2_REFUSAL + first)
    return build(
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
                for feature, why in ordered
            ],
        },
    )


def _type(update: object) -> int:
    """v1's upgrade type; v0's ``allow_downgrade`` as a safe downgrade."""
    upgrade_type = field_or(update, "upgrade_type", -1)
    if upgrade_type >= 0:
        return upgrade_type
    return SAFE_DOWNGRADE if field_or(update, "allow_downgrade", False) else UPGRADE
