"""Metadata: brokers, topics and partition leadership from the committed metadata state.

A client names the highest metadata log offset it has seen (``min_metadata_offset``); a node
that has not applied it yet waits until it has (at most the quorum request timeout), so a
client told "created" by one node never hears "unknown topic" from another that lags.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from rillet.broker.handlers.context import BrokerContext
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    BrokerInfo,
    MetadataRequest,
    MetadataResponse,
    TopicMetadata,
)


def handle_metadata_request(
    ctx: BrokerContext, req: MetadataRequest
) -> MetadataResponse | Coroutine[Any, Any, MetadataResponse]:
    """Answer now when the client's offset is applied here, else once it is (bounded)."""
    if req.min_metadata_offset <= ctx.metadata.applied_offset:
        return handle_metadata(ctx, req)
    return _after_applied(ctx, req)


async def _after_applied(ctx: BrokerContext, req: MetadataRequest) -> MetadataResponse:
    # On timeout the answer is what this node has; its metadata_offset tells the client so.
    await ctx.metadata.wait_applied(
        req.min_metadata_offset, ctx.config.quorum.request_timeout_ms / 1000
    )
    return handle_metadata(ctx, req)


def handle_metadata(ctx: BrokerContext, req: MetadataRequest) -> MetadataResponse:
    """The metadata as applied on this node now."""
    state = ctx.metadata.state
    names = sorted(state.topic_ids) if req.topics is None else req.topics
    answers = ctx.metadata_answers
    answers.forget_removed(state)
    topics = []
    for name in names:
        topic = state.topic_by_name(name)
        if topic is None:
            topics.append(TopicMetadata(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []))
            continue
        topics.append(answers.topic(state, topic))  # kept until the topic changes
    brokers = [
        BrokerInfo(b.broker_id, b.host, b.port, b.rack)
        for b in sorted(state.brokers.values(), key=lambda b: b.broker_id)
        if not b.fenced
    ]
    return MetadataResponse(
        ctx.config.cluster_id,
        ctx.metadata.controller_id(),
        brokers,
        topics,
        state.last_applied_index,
    )
