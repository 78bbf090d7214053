"""Any well-formed request of every served api and version: it decodes, translates, and
each way of answering it (success shapes are tested per api elsewhere; here every failure
answer) encodes to bytes that decode again as that version's response."""

from __future__ import annotations

import datetime
import io
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka_front_end import StaticView
from kio.serial import entity_reader, entity_writer
from kio.serial.errors import OutOfBoundValue
from kio.static.primitive import Records, i64Timedelta

from rillet.broker.kafka.api_table import ApiSchema, served_schema, served_versions
from rillet.broker.kafka.codec import decode_body, decode_header, encode_response, frame_parts
from rillet.broker.kafka.front_end import translate
from rillet.broker.kafka.translation import Answer, KafkaEndpoint, RawBody
from rillet.wire.api import ApiKey
from rillet.wire.error_codes import ErrorCode

VIEW = StaticView({1: KafkaEndpoint(1, "h", 9, None)})
st.register_type_strategy(Records, st.binary(max_size=32).map(Records))
# An int64 millisecond duration beyond what a timedelta holds (about 2.7e8 years) cannot be
# decoded (the request is then malformed, see the fuzz tests); draw durations it can hold.
st.register_type_strategy(
    i64Timedelta,
    st.timedeltas(
        min_value=datetime.timedelta(milliseconds=-(2**31)),
        max_value=datetime.timedelta(days=10**8),
    ).map(
        lambda d: i64Timedelta.parse(
            datetime.timedelta(milliseconds=d // datetime.timedelta(milliseconds=1))
        )
    ),
)


def _schema(api_key: int, version: int) -> ApiSchema:
    schema = served_schema(api_key, version)
    assert schema is not None
    return schema


def requests() -> st.SearchStrategy[tuple[ApiSchema, Any]]:
    return (
        st.sampled_from(served_versions())
        .map(lambda key: _schema(*key))
        .flatmap(lambda schema: st.tuples(st.just(schema), st.from_type(schema.request_type)))
    )


def framed_request(schema: ApiSchema, entity: Any) -> bytes:
    """Header v1 (v2 for flexible versions) and the body, as a client sends it."""
    out = io.BytesIO()
    out.write(schema.api_key.to_bytes(2, "big") + schema.version.to_bytes(2, "big"))
    out.write((9).to_bytes(4, "big") + b"\x00\x02id")
    if schema.flexible:
        out.write(b"\x00")  # no tagged fields
    entity_writer(schema.request_type)(out, entity)
    return out.getvalue()


def decodes_as_response(schema: ApiSchema, data: bytes) -> None:
    assert int.from_bytes(data[:4], "big") == len(data) - 4
    assert int.from_bytes(data[4:8], "big") == 9
    start = 8
    if schema.flexible and schema.api_key != ApiKey.API_VERSIONS:
        assert data[8] == 0, "response header v1: no tagged fields"
        start = 9
    try:
        _response, size = entity_reader(schema.response_type)(data, start)
    except OutOfBoundValue:
        # kio's reader refuses a negative timestamp, which Kafka itself sends (-1: no
        # transaction started) and Kafka's clients read: only DescribeTransactions has one.
        assert schema.api_key == ApiKey.DESCRIBE_TRANSACTIONS
        return
    assert size == len(data) - start, "the whole response is read back"


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(drawn=requests(), code=st.sampled_from(list(ErrorCode)))
def test_every_request_translates_and_every_failure_answer_encodes(
    drawn: tuple[ApiSchema, Any], code: ErrorCode
) -> None:
    schema, entity = drawn
    frame = framed_request(schema, entity)
    header, start = decode_header(frame)
    assert (header.api_key, header.api_version, header.client_id) == (
        schema.api_key,
        schema.version,
        "id",
    )
    action = translate(schema, decode_body(frame, start, schema), VIEW)
    response = action.response if isinstance(action, Answer) else action.fail(int(code))
    if isinstance(response, RawBody):
        data = b"".join(bytes(p) for p in frame_parts(9, response.parts))
    else:
        data = encode_response(9, schema, response)
    decodes_as_response(schema, data)
