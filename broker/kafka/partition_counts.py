"""CreatePartitions: Kafka's request to grow topics, on the native CreatePartitions api.

Manual assignments of the new partitions' replicas are refused (INVALID_REQUEST), as for
CreateTopics: the controller places replicas itself.
"""

from __future__ import annotations

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.error_map import kafka_message
from rillet.broker.kafka.translation import Answer, Forward, KafkaResponse, millis
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import CreatePartitionsRequest, CreatePartitionsResponse, PartitionCount

MANUAL = "manual replica assignment is not supported"


def translate_create_partitions(
    schema: ApiSchema, req: shapes.CreatePartitionsRequests
) -> Forward[CreatePartitionsResponse] | Answer:
    names = [str(t.name) for t in req.topics]
    local: dict[str, tuple[int, str | None]] = {
        str(t.name): (int(ErrorCode.INVALID_REQUEST), MANUAL) for t in req.topics if t.assignments
    }

    def respond(results: dict[str, tuple[int, str | None]]) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "results": [
                    {"name": n, "error_code": results[n][0], "error_message": results[n][1]}
                    for n in dict.fromkeys(names)
                ],
            },
        )

    wanted = [PartitionCount(str(t.name), int(t.count)) for t in req.topics if not t.assignments]
    if not wanted:
        return Answer(respond(local))
    native = CreatePartitionsRequest(wanted, millis(req.timeout), bool(req.validate_only))

    def reply(resp: CreatePartitionsResponse) -> KafkaResponse:
        results = dict(local)
        results.update(
            {
                r.name: (r.error_code, kafka_message(r.error_code, r.error_message))
                for r in resp.topics
            }
        )
        return respond(results)

    def fail(code: int) -> KafkaResponse:
        return respond({n: local.get(n, (code, kafka_message(code, None))) for n in names})

    return Forward(native, reply, fail)
