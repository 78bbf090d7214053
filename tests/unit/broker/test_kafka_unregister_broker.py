"""UnregisterBroker (api 64, v0 flexible) on the Kafka listener: the native request, and
its refusal carried back with Kafka's error number and the controller's message."""

from __future__ import annotations

from test_kafka_consumer_groups import answered, through_listener

from rillet.broker.kafka.api_table import SUPPORTED
from rillet.wire.broker_admin_messages import UnregisterBrokerRequest, UnregisterBrokerResponse
from rillet.wire.error_codes import ErrorCode


def test_unregister_broker_is_forwarded_and_answered() -> None:
    assert SUPPORTED[64] == (0, 0)
    schema, action = through_listener(64, 0, broker_id=4)
    assert action.native == UnregisterBrokerRequest(4)
    refused = answered(
        schema,
        action.reply(
            UnregisterBrokerResponse(ErrorCode.INVALID_REQUEST, "broker 4 still holds replicas")
        ),
    )
    assert refused.error_code == 42 and refused.error_message == "broker 4 still holds replicas"
    done = answered(schema, action.reply(UnregisterBrokerResponse(ErrorCode.NONE)))
    assert done.error_code == 0
    unknown = answered(schema, action.fail(ErrorCode.BROKER_ID_NOT_REGISTERED))
    assert unknown.error_code == 102
