"""AlterUserScramCredentials answers, decoded by kafka-python: every refused user carries a
message, since kafka-python reports a user's result by its message alone (an empty one
read as success)."""

from __future__ import annotations

import pytest
from kafka.protocol.admin import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
)
from kafka_front_end import forwarded

from rillet.broker.kafka.codec import encode_response
from rillet.wire.error_codes import ErrorCode
from rillet.wire.user_messages import AlterUserScramCredentialsResponse as Altered

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def results(schema: object, answer: object) -> dict[str, tuple[int, str | None]]:
    decoded = AlterUserScramCredentialsResponse.decode(
        encode_response(3, schema, answer),  # type: ignore[arg-type]
        version=0,
        header=True,
        framed=True,
    )
    return {r.user: (r.error_code, r.error_message) for r in decoded.results}


def test_every_refusal_carries_a_message() -> None:
    request = AlterUserScramCredentialsRequest(deletions=[("bob", 1)], upsertions=[])
    schema, action = forwarded(request, 0)
    # Refused before any handler runs (no ACL): the listener answers from the error code.
    refused = results(schema, action.fail(ErrorCode.CLUSTER_AUTHORIZATION_FAILED))
    assert refused == {"bob": (31, "Cluster authorization failed.")}
    # A handler's refusal without a message gets Kafka's for its code.
    answer = action.reply(Altered(ErrorCode.RESOURCE_NOT_FOUND, None))
    assert results(schema, answer) == {
        "bob": (91, "Attempt to delete a user credential that does not exist")
    }
    kept = action.reply(Altered(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few"))
    assert results(schema, kept) == {"bob": (93, "Too few")}
    assert results(schema, action.reply(Altered(0, None))) == {"bob": (0, None)}
