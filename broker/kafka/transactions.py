"""AddPartitionsToTxn (24), AddOffsetsToTxn (25) and EndTxn (26), v0-2 each, TxnOffsetCommit
(28) v0-3, DescribeTransactions (65) and ListTransactions (66), v0 each: Kafka's nested lists to
rillet's transaction requests (docs/transactions.md). TxnOffsetCommit v3 (Kafka Streams'
exactly_once_v2 needs it) names the committing member and its group generation, which the
coordinator checks against the group (KIP-447).
InitProducerId with a transactional id and FindCoordinator with key type 1 go through their
own translators (admin.py)."""

from __future__ import annotations

from rillet.broker.kafka import shapes
from rillet.broker.kafka.api_table import ApiSchema
from rillet.broker.kafka.data_path import grouped_by_topic
from rillet.broker.kafka.entities import build
from rillet.broker.kafka.translation import Forward, KafkaResponse, field_or, optional_field
from rillet.wire import transaction_messages as tm


def _codes(
    pairs: list[tuple[str, int]], results: list[tm.TxnPartitionResult], fallback: int
) -> list[int]:
    """Each partition's code in request order (the request's own code where none is given)."""
    by_partition = {(r.topic, r.partition): r.error_code for r in results}
    return [by_partition.get(pair, fallback) for pair in pairs]


def translate_add_partitions_to_txn(
    schema: ApiSchema, req: shapes.AddPartitionsToTxnRequests
) -> Forward[tm.AddPartitionsToTxnResponse]:
    pairs = [(str(t.name), int(p)) for t in req.v3_and_below_topics for p in t.partitions]

    def respond(codes: list[int]) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "results_by_topic_v3_and_below": [
                    {
                        "name": topic,
                        "results_by_partition": [
                            {"partition_index": p, "partition_error_code": code}
                            for p, code in entries
                        ],
                    }
                    for topic, entries in grouped_by_topic(
                        pairs, [(p, c) for (_, p), c in zip(pairs, codes, strict=True)]
                    )
                ],
            },
        )

    def reply(resp: tm.AddPartitionsToTxnResponse) -> KafkaResponse:
        return respond(_codes(pairs, resp.results, resp.error_code))

    native = tm.AddPartitionsToTxnRequest(
        str(req.v3_and_below_transactional_id),
        int(req.v3_and_below_producer_id),
        int(req.v3_and_below_producer_epoch),
        [tm.TxnTopicPartition(t, p) for t, p in pairs],
    )
    return Forward(native, reply, lambda code: respond([code] * len(pairs)))


def translate_end_txn(schema: ApiSchema, req: shapes.EndTxnRequests) -> Forward[tm.EndTxnResponse]:
    def respond(code: int) -> KafkaResponse:
        return build(schema.response_type, {"throttle_time": 0, "error_code": code})

    native = tm.EndTxnRequest(
        str(req.transactional_id), int(req.producer_id), int(req.producer_epoch), req.committed
    )
    return Forward(native, lambda resp: respond(resp.error_code), respond)


def translate_add_offsets_to_txn(
    schema: ApiSchema, req: shapes.AddOffsetsToTxnRequests
) -> Forward[tm.AddOffsetsToTxnResponse]:
    def respond(code: int) -> KafkaResponse:
        return build(schema.response_type, {"throttle_time": 0, "error_code": code})

    native = tm.AddOffsetsToTxnRequest(
        str(req.transactional_id), int(req.producer_id), int(req.producer_epoch), str(req.group_id)
    )
    return Forward(native, lambda resp: respond(resp.error_code), respond)


def translate_txn_offset_commit(
    schema: ApiSchema, req: shapes.TxnOffsetCommitRequests
) -> Forward[tm.TxnOffsetCommitResponse]:
    offsets = [
        tm.TxnCommitOffset(
            str(t.name),
            int(p.partition_index),
            int(p.committed_offset),
            p.committed_metadata or "",
            field_or(p, "committed_leader_epoch", -1),
        )
        for t in req.topics
        for p in t.partitions
    ]
    pairs = [(o.topic, o.partition) for o in offsets]

    def respond(codes: list[int]) -> KafkaResponse:
        entries: list[shapes.TxnOffsetCommitResponsePartitionShape] = [
            {"partition_index": p, "error_code": c} for (_, p), c in zip(pairs, codes, strict=True)
        ]
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "topics": [
                    {"name": topic, "partitions": items}
                    for topic, items in grouped_by_topic(pairs, entries)
                ],
            },
        )

    def reply(resp: tm.TxnOffsetCommitResponse) -> KafkaResponse:
        return respond(_codes(pairs, resp.results, resp.error_code))

    native = tm.TxnOffsetCommitRequest(
        str(req.transactional_id),
        str(req.group_id),
        int(req.producer_id),
        int(req.producer_epoch),
        offsets,
        # v3 (KIP-447): the committing member, fenced by the group's generation
        field_or(req, "member_id", ""),
        field_or(req, "generation_id", -1),
        optional_field(req, "group_instance_id", str),
    )
    return Forward(native, reply, lambda code: respond([code] * len(pairs)))


def translate_list_transactions(
    schema: ApiSchema, req: shapes.ListTransactionsRequests
) -> Forward[tm.ListTransactionsResponse]:
    def respond(
        code: int, listed: list[tm.TxnListing] | None = None, unknown: list[str] | None = None
    ) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "error_code": code,
                "unknown_state_filters": tuple(unknown or ()),
                "transaction_states": [
                    {
                        "transactional_id": t.transactional_id,
                        "producer_id": t.producer_id,
                        "transaction_state": t.state,
                    }
                    for t in listed or ()
                ],
            },
        )

    native = tm.ListTransactionsRequest(
        [str(s) for s in req.state_filters], [int(p) for p in req.producer_id_filters]
    )

    def reply(resp: tm.ListTransactionsResponse) -> KafkaResponse:
        return respond(resp.error_code, resp.transactions, resp.unknown_state_filters)

    return Forward(native, reply, respond)


def translate_describe_transactions(
    schema: ApiSchema, req: shapes.DescribeTransactionsRequests
) -> Forward[tm.DescribeTransactionsResponse]:
    ids = [str(t) for t in req.transactional_ids]

    def respond(described: list[tm.TxnDescription]) -> KafkaResponse:
        return build(
            schema.response_type,
            {
                "throttle_time": 0,
                "transaction_states": [
                    {
                        "error_code": d.error_code,
                        "transactional_id": d.transactional_id,
                        "transaction_state": d.state,
                        "transaction_timeout": d.timeout_ms,
                        "transaction_start_time": d.start_ms,  # -1: not started
                        "producer_id": d.producer_id,
                        "producer_epoch": d.producer_epoch,
                        "topics": [
                            {"topic": topic, "partitions": [p.partition for p in parts]}
                            for topic, parts in grouped_by_topic(
                                [(p.topic, p.partition) for p in d.partitions], d.partitions
                            )
                        ],
                    }
                    for d in described
                ],
            },
        )

    def fail(code: int) -> KafkaResponse:
        return respond([tm.TxnDescription(code, t) for t in ids])

    def reply(resp: tm.DescribeTransactionsResponse) -> KafkaResponse:
        return respond(resp.transactions)

    return Forward(tm.DescribeTransactionsRequest(ids), reply, fail)
