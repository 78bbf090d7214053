"""ApiVersions v3+ carries the feature levels kafka-features describe prints (decoded by
kafka-python, which reads the tagged fields)."""

from __future__ import annotations

from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from kafka_front_end import StaticView, received

from rillet.broker.kafka.codec import encode_response
from rillet.broker.kafka.front_end import translate
from rillet.broker.kafka.translation import Answer


def test_metadata_version_is_supported_and_finalized_in_the_flexible_versions() -> None:
    for version in (3, 4):
        _h, schema, entity = received(ApiVersionsRequest(), version)
        action = translate(schema, entity, StaticView())
        assert isinstance(action, Answer)
        data = encode_response(1, schema, action.response)
        decoded = ApiVersionsResponse.decode(data, version=version, header=True, framed=True)
        supported = {f.name: (f.min_version, f.max_version) for f in decoded.supported_features}
        assert supported == {"metadata.version": (7, 7), "kraft.version": (0, 0)}
        finalized = {
            f.name: (f.min_version_level, f.max_version_level) for f in decoded.finalized_features
        }
        assert finalized == {"metadata.version": (7, 7)}
        assert decoded.finalized_features_epoch == 0
