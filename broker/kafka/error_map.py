"""rillet's error codes as Kafka's.

rillet numbers its errors like Kafka wherever Kafka has the same error (wire/error_codes.py),
so most codes pass through; the few of its own become the nearest Kafka error a client
handles sensibly.
"""

from __future__ import annotations

from kio.schema.errors import ErrorCode as KafkaError

from rillet.wire.error_codes import ErrorCode

_OWN_CODES: dict[int, KafkaError] = {
    ErrorCode.UNKNOWN_API: KafkaError.invalid_request,
    ErrorCode.NOT_CONTROLLER: KafkaError.not_controller,
}


def kafka_error(code: int) -> KafkaError:
    """The Kafka error for a rillet error code; codes Kafka lacks become UNKNOWN_SERVER_ERROR."""
    mapped = _OWN_CODES.get(code)
    if mapped is not None:
        return mapped
    try:
        return KafkaError(code)
    except ValueError:
        return KafkaError.unknown_server_error
