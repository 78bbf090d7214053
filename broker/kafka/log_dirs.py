"""DescribeLogDirs (Kafka api 35, v1 to v4) and AlterReplicaLogDirs (api 34, v1 and v2) onto
the native requests of the same numbers.

``kafka-log-dirs --describe`` sends it to every broker; each answers for the replicas it
hosts, in its one log directory. No replica is ever being moved between directories here,
so ``is_future_key`` is always false.
"""

from __future__ import annotations

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Forward, KafkaResponse
from rillet.wire.log_dir_messages import (
    AlterReplicaLogDirsRequest,
    AlterReplicaLogDirsResponse,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    LogDirMove,
    LogDirTopic,
)


def translate_describe_log_dirs(
    schema: ApiSchema, req: shapes.DescribeLogDirsRequests
) -> Forward[DescribeLogDirsResponse]:
    topics = (
        None
        if req.topics is None
        else [LogDirTopic(str(t.topic), [int(p) for p in t.partitions]) for t in req.topics]
    )

    def reply(resp: DescribeLogDirsResponse) -> KafkaResponse:
        by_topic: dict[str, list[shapes.DescribeLogDirsPartitionShape]] = {}
        for p in resp.partitions:
            by_topic.setdefault(p.topic, []).append(
                {
                    "partition_index": p.partition,
                    "partition_size": p.size_bytes,
                    "offset_lag": p.offset_lag,
                    "is_future_key": False,
                }
            )
        result: shapes.DescribeLogDirsResultShape = {
            "error_code": resp.error_code,
            "log_dir": resp.log_dir,
            "topics": [{"name": n, "partitions": ps} for n, ps in by_topic.items()],
            "total_bytes": resp.total_bytes,
            "usable_bytes": resp.usable_bytes,
        }
        return build(schema.response_type, {"error_code": 0, "results": [result]})

    def fail(code: int) -> KafkaResponse:
        return build(schema.response_type, {"error_code": code, "results": []})

    return Forward(DescribeLogDirsRequest(topics), reply, fail)


def translate_alter_replica_log_dirs(
    schema: ApiSchema, req: shapes.AlterReplicaLogDirsRequests
) -> Forward[AlterReplicaLogDirsResponse]:
    moves = [
        LogDirMove(
            str(d.path),
            [LogDirTopic(str(t.name), [int(p) for p in t.partitions]) for t in d.topics],
        )
        for d in req.dirs
    ]

    def answer(codes: dict[tuple[str, int], int]) -> KafkaResponse:
        by_topic: dict[str, list[shapes.AlterReplicaLogDirsAlterReplicaLogDirPartitionResultShape]]
        by_topic = {}
        for (topic, partition), code in codes.items():
            by_topic.setdefault(topic, []).append(
                {"partition_index": partition, "error_code": code}
            )
        results: list[shapes.AlterReplicaLogDirsAlterReplicaLogDirTopicResultShape] = [
            {"topic_name": n, "partitions": ps} for n, ps in by_topic.items()
        ]
        return build(schema.response_type, {"results": results})

    def reply(resp: AlterReplicaLogDirsResponse) -> KafkaResponse:
        return answer({(r.topic, r.partition): r.error_code for r in resp.results})

    def fail(code: int) -> KafkaResponse:  # every partition asked about gets the request's error
        return answer({(t.topic, p): code for m in moves for t in m.topics for p in t.partitions})

    return Forward(AlterReplicaLogDirsRequest(moves), reply, fail)
