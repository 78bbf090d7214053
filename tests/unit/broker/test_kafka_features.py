"""ApiVersions v3+ carries the feature levels kafka-features describe prints (decoded by
kafka-python, which reads the tagged fields); UpdateFeatures refuses what it cannot do with
Kafka's error and message."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.protocol.admin import UpdateFeaturesRequest, UpdateFeaturesResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from kafka_front_end import StaticView, received

from rillet.broker.kafka.codec import encode_response
from rillet.broker.kafka.front_end import translate
from rillet.broker.kafka.translation import Answer, Forward
from rillet.wire.feature_messages import UpdateFeaturesRequest as NativeUpdate
from rillet.wire.feature_messages import UpdateFeaturesResponse as NativeAnswer


def test_metadata_version_is_supported_and_finalized_in_the_flexible_versions() -> None:
    for version in (3, 4):
        _h, schema, entity = received(ApiVersionsRequest(), version)
        action = translate(schema, entity, StaticView())
        assert isinstance(action, Answer)
        data = encode_response(1, schema, action.response)
        decoded = ApiVersionsResponse.decode(data, version=version, header=True, framed=True)
        supported = {f.name: (f.min_version, f.max_version) for f in decoded.supported_features}
        assert supported == {
            "metadata.version": (7, 7),
            "kraft.version": (0, 0),
            "rillet.metadata.version": (1, 2),
        }
        finalized = {
            f.name: (f.min_version_level, f.max_version_level) for f in decoded.finalized_features
        }
        assert finalized == {"metadata.version": (7, 7), "rillet.metadata.version": (2, 2)}
        assert decoded.finalized_features_epoch == 2  # rillet's level: it only rises


def test_api_versions_finalizes_rillet_feature_at_the_cluster_level() -> None:
    """A cluster upgraded from 0.1.0, not raised yet: level 1 in force, 1-2 supported."""
    view = StaticView()
    view.rillet_level = 1
    _h, schema, entity = received(ApiVersionsRequest(), 3)
    action = translate(schema, entity, view)
    assert isinstance(action, Answer)
    data = encode_response(1, schema, action.response)
    decoded = ApiVersionsResponse.decode(data, version=3, header=True, framed=True)
    finalized = {f.name: f.max_version_level for f in decoded.finalized_features}
    assert finalized["rillet.metadata.version"] == 1
    assert decoded.finalized_features_epoch == 1


def test_an_update_of_rillet_feature_goes_to_the_controller_and_answers_with_its_verdict() -> None:
    r = UpdateFeaturesRequest
    request = r(
        timeout_ms=1000,
        validate_only=False,
        feature_updates=[
            r.FeatureUpdateKey(feature="metadata.version", max_version_level=7, upgrade_type=1),
            r.FeatureUpdateKey(
                feature="rillet.metadata.version", max_version_level=2, upgrade_type=1
            ),
        ],
    )
    _h, schema, entity = received(request, 1)
    action = translate(schema, entity, StaticView())
    assert isinstance(action, Forward)
    assert action.native == NativeUpdate("rillet.metadata.version", 2, False)
    refused = NativeAnswer(42, "rillet.metadata.version 2 is not supported by node(s) 3")
    data = encode_response(1, schema, action.reply(refused))
    decoded = UpdateFeaturesResponse.decode(data, version=1, header=True, framed=True)
    results = [(x.feature, x.error_code, x.error_message) for x in decoded.results]
    assert results == [
        ("metadata.version", 0, None),
        ("rillet.metadata.version", 95, refused.error_message),
    ]
    data = encode_response(1, schema, action.reply(NativeAnswer(0, None, level=2)))
    decoded = UpdateFeaturesResponse.decode(data, version=1, header=True, framed=True)
    assert [x.error_code for x in decoded.results] == [0, 0]


def _update(version: int, *updates: tuple[str, int, int], validate_only: bool = True) -> Any:
    r = UpdateFeaturesRequest
    request = r(
        timeout_ms=1000,
        validate_only=validate_only,
        feature_updates=[
            r.FeatureUpdateKey(
                feature=f, max_version_level=level, upgrade_type=kind, allow_downgrade=kind != 1
            )
            for f, level, kind in updates
        ],
    )
    _h, schema, entity = received(request, version)
    action = translate(schema, entity, StaticView())
    assert isinstance(action, Answer)
    data = encode_response(1, schema, action.response)
    return UpdateFeaturesResponse.decode(data, version=version, header=True, framed=True)


@pytest.mark.parametrize("version", [0, 1])
def test_update_features_accepts_the_level_in_force_and_refuses_others_per_feature(
    version: int,
) -> None:
    decoded = _update(
        version,
        ("metadata.version", 7, 1),
        ("metadata.version", 30, 1),
        ("group.version", 1, 1),
        validate_only=version == 1,
    )
    assert decoded.error_code == 0
    results = [(r.feature, r.error_code, r.error_message) for r in decoded.results]
    assert results[0] == ("metadata.version", 0, None)
    assert results[1][1:] == (
        95,
        "Invalid update version 30 for feature metadata.version. Local controller 1 only "
        "supports versions 7-7",
    )
    assert results[2][1] == 95 and results[2][2].endswith(
        "Local controller 1 does not support this feature."
    )


def test_update_features_v2_answers_the_first_refusal_and_a_downgrade_needs_its_type() -> None:
    decoded = _update(2, ("metadata.version", 6, 1), ("kraft.version", 1, 1))
    assert decoded.error_code == 95
    assert decoded.error_message.startswith("The update failed for all features since")
    assert "without setting the upgrade type" in decoded.error_message
    assert _update(2, ("metadata.version", 7, 1), ("kraft.version", 0, 2)).error_code == 0
    decoded = _update(2, ("metadata.version", 6, 2))
    assert (decoded.error_code, decoded.error_message) == (
        95,
        "The update failed for all features since the following feature had an error: "
        "Invalid update version 6 for feature metadata.version. Local controller 1 only "
        "supports versions 7-7",
    )
