"""rillet's error codes as Kafka's.

rillet numbers its errors like Kafka wherever Kafka has the same error (wire/error_codes.py),
so most codes pass through; ``to_kafka`` turns the few of its own into the nearest Kafka
error. Here the number becomes kio's error enum.
"""

from __future__ import annotations

from kio.schema.errors import ErrorCode as KafkaError

from rillet.wire.error_codes import ErrorCode, to_kafka


def kafka_error(code: int) -> KafkaError:
    """The Kafka error for a rillet error code; numbers Kafka lacks become
    UNKNOWN_SERVER_ERROR."""
    try:
        return KafkaError(to_kafka(ErrorCode.from_wire(code)) if code in _RILLET else code)
    except ValueError:
        return KafkaError.unknown_server_error


_RILLET = frozenset(int(c) for c in ErrorCode)
