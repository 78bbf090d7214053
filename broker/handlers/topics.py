"""CreateTopics and DeleteTopics, answered per topic."""

from __future__ import annotations

import logging

from rillet.broker.errors import TopicError
from rillet.broker.handlers.context import BrokerContext
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    TopicResult,
)

log = logging.getLogger(__name__)


def handle_create_topics(ctx: BrokerContext, req: CreateTopicsRequest) -> CreateTopicsResponse:
    results = []
    seen: set[str] = set()
    for t in req.topics:
        if t.name in seen:
            results.append(
                TopicResult(t.name, ErrorCode.INVALID_REQUEST, "topic named twice in request")
            )
            continue
        seen.add(t.name)
        try:
            configs = ctx.replicas.validate_new_topic(
                t.name, t.num_partitions, t.replication_factor, t.configs
            )
            if not req.validate_only:
                ctx.replicas.create_topic(t.name, t.num_partitions, configs)
                log.info("created topic %s with %d partitions", t.name, t.num_partitions)
        except TopicError as exc:
            results.append(TopicResult(t.name, exc.code, str(exc)))
            continue
        except OSError as exc:
            log.error("creating topic %s failed: %s", t.name, exc)
            results.append(TopicResult(t.name, ErrorCode.STORAGE_ERROR, str(exc)))
            continue
        results.append(TopicResult(t.name, ErrorCode.NONE))
    return CreateTopicsResponse(results)


def handle_delete_topics(ctx: BrokerContext, req: DeleteTopicsRequest) -> DeleteTopicsResponse:
    results = []
    for name in req.topics:
        try:
            ctx.replicas.delete_topic(name)
            log.info("deleted topic %s", name)
        except TopicError as exc:
            results.append(TopicResult(name, exc.code, str(exc)))
            continue
        except OSError as exc:
            results.append(TopicResult(name, ErrorCode.STORAGE_ERROR, str(exc)))
            continue
        results.append(TopicResult(name, ErrorCode.NONE))
    return DeleteTopicsResponse(results)
