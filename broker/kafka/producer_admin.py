"""DescribeProducers (61) v0 and WriteTxnMarkers (27) v1, both flexible: Kafka's nested
lists to rillet's producer admin requests (broker/handlers/producer_admin.py)."""

from __future__ import annotations

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.data_path import grouped_by_topic
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Forward, KafkaResponse
from rillet.wire import producer_admin_messages as pam
from rillet.wire.transaction_messages import TxnPartitionResult, TxnTopicPartition


def translate_describe_producers(
    schema: ApiSchema, req: shapes.DescribeProducersRequests
) -> Forward[pam.DescribeProducersResponse]:
    wanted = [
        TxnTopicPartition(str(t.name), int(p)) for t in req.topics for p in t.partition_indexes
    ]

    def respond(found: list[pam.PartitionProducers]) -> KafkaResponse:
        pairs = [(f.topic, f.partition) for f in found]
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "topics": [
                    {
                        "name": topic,
                        "partitions": [
                            {
                                "partition_index": f.partition,
                                "error_code": f.error_code,
                                "error_message": None,
                                "active_producers": [
                                    {
                                        "producer_id": p.producer_id,
                                        "producer_epoch": p.producer_epoch,
                                        "last_sequence": p.last_sequence,
                                        "last_timestamp": p.last_timestamp_ms,
                                        "coordinator_epoch": p.coordinator_epoch,
                                        "current_txn_start_offset": p.current_txn_start_offset,
                                    }
                                    for p in f.producers
                                ],
                            }
                            for f in entries
                        ],
                    }
                    for topic, entries in grouped_by_topic(pairs, found)
                ],
            },
        )

    def fail(code: int) -> KafkaResponse:
        return respond([pam.PartitionProducers(tp.topic, tp.partition, code) for tp in wanted])

    def reply(resp: pam.DescribeProducersResponse) -> KafkaResponse:
        return respond(resp.partitions)

    return Forward(pam.DescribeProducersRequest(wanted), reply, fail)


def translate_write_txn_markers(
    schema: ApiSchema, req: shapes.WriteTxnMarkersRequests
) -> Forward[pam.WriteTxnMarkersResponse]:
    specs = [
        pam.TxnMarkerSpec(
            int(m.producer_id),
            int(m.producer_epoch),
            bool(m.transaction_result),
            int(m.coordinator_epoch),
            [TxnTopicPartition(str(t.name), int(p)) for t in m.topics for p in t.partition_indexes],
        )
        for m in req.markers
    ]

    def respond(results: list[pam.MarkerResult]) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "markers": [
                    {
                        "producer_id": r.producer_id,
                        "topics": [
                            {
                                "name": topic,
                                "partitions": [
                                    {"partition_index": x.partition, "error_code": x.error_code}
                                    for x in items
                                ],
                            }
                            for topic, items in grouped_by_topic(
                                [(x.topic, x.partition) for x in r.results], r.results
                            )
                        ],
                    }
                    for r in results
                ]
            },
        )

    def fail(code: int) -> KafkaResponse:
        return respond(
            [
                pam.MarkerResult(
                    s.producer_id,
                    [TxnPartitionResult(tp.topic, tp.partition, code) for tp in s.partitions],
                )
                for s in specs
            ]
        )

    def reply(resp: pam.WriteTxnMarkersResponse) -> KafkaResponse:
        return respond(resp.markers)

    return Forward(pam.WriteTxnMarkersRequest(specs), reply, fail)
