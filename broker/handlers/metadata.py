"""Metadata: brokers, topics and partition leadership from the committed metadata state.

A client names the highest metadata log offset it has seen (``min_metadata_offset``); a node
that has not applied it yet waits until it has (at most the quorum request timeout), so a
client told "created" by one node never hears "unknown topic" from another that lags.

A client that names no offset (a new client, any Kafka client) is protected by the node
itself: until its metadata has caught up after a start, and whenever its state would be older
than an answer it already gave, the node refuses with LEADER_NOT_AVAILABLE (retriable)
instead of answering with what it has: a node that just restarted may hold no topics yet,
and a client told so drops their partitions and fails the records queued for them.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import replace

from rillet.broker.handlers.auto_topic_creation import MayCreate
from rillet.broker.handlers.auto_topics import answer_creating, names_unknown_topics
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.deferred import Deferred
from rillet.broker.handlers.refused import Refused
from rillet.broker.runtime.loop_slices import run_in_slices, run_whole
from rillet.wire.error_codes import ErrorCode
from rillet.wire.forwarding import ForwardedFor
from rillet.wire.messages import (
    BrokerInfo,
    MetadataRequest,
    MetadataResponse,
    TopicMetadata,
)

# An answer that may have more partition entries than this to build is built in slices of
# loop time, after the handler returns (the first answer for a 10,000-partition topic).
SLICED_BUILD_PARTITIONS = 256


def handle_metadata_request(
    ctx: BrokerContext,
    req: MetadataRequest,
    may_create: MayCreate | None = None,
    asker: ForwardedFor | None = None,
) -> MetadataResponse | Deferred[MetadataResponse] | Refused:
    """Refuse while this node is not caught up; answer now when the client's offset is
    applied here and the answer is cheap, else once it is applied (bounded), in slices.
    Unknown topics the request may create are created first (handlers/auto_topics.py;
    ``may_create``: the asker's ACLs; ``asker``: who the controller decides the creation
    as, when this node forwards it)."""
    not_ready = ctx.metadata.not_ready()
    if not_ready is not None:
        return Refused(ErrorCode.LEADER_NOT_AVAILABLE, not_ready.reason)
    if names_unknown_topics(ctx, req):
        return answer_creating(ctx, req, may_create, _answer_known, asker)
    return _answer_known(ctx, req)


def _answer_known(
    ctx: BrokerContext, req: MetadataRequest
) -> MetadataResponse | Deferred[MetadataResponse]:
    """The answer from what this node has applied, once the client's offset is applied."""
    if req.min_metadata_offset <= ctx.metadata.applied_offset and not _large_build(ctx, req):
        return handle_metadata(ctx, req)
    return _after_applied(ctx, req)


async def _after_applied(ctx: BrokerContext, req: MetadataRequest) -> MetadataResponse:
    if req.min_metadata_offset > ctx.metadata.applied_offset:
        # On timeout the answer is what this node has; its metadata_offset says so.
        await ctx.metadata.wait_applied(
            req.min_metadata_offset, ctx.config.quorum.request_timeout_ms / 1000
        )
    return await run_in_slices(_answering(ctx, req))


def handle_metadata(ctx: BrokerContext, req: MetadataRequest) -> MetadataResponse:
    """The metadata as applied on this node now."""
    return run_whole(_answering(ctx, req))


def _large_build(ctx: BrokerContext, req: MetadataRequest) -> bool:
    """Whether answering may build more than :data:`SLICED_BUILD_PARTITIONS` entries."""
    state = ctx.metadata.state
    answers = ctx.metadata_answers
    names = state.topic_ids if req.topics is None else req.topics
    to_build = 0
    for name in names:
        topic = state.topic_by_name(name)
        if topic is not None and not answers.is_current(state, topic):
            to_build += len(state.partitions_of(topic.topic_id))
            if to_build > SLICED_BUILD_PARTITIONS:
                return True
    return False


def _answering(ctx: BrokerContext, req: MetadataRequest) -> Generator[None, None, MetadataResponse]:
    """Builds the answer, yielding after each partition entry it had to build; the
    answer's metadata offset is the state's when it started (entries built after a yield
    may be newer, never older)."""
    state = ctx.metadata.state
    applied_index = state.last_applied_index
    ctx.metadata.readiness.answered(applied_index)
    names = sorted(state.topic_ids) if req.topics is None else req.topics
    answers = ctx.metadata_answers
    answers.forget_removed(state)
    topics = []
    for name in names:
        topic = state.topic_by_name(name)
        if topic is None:
            topics.append(TopicMetadata(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []))
            continue
        built = yield from answers.building(state, topic)  # kept until it changes
        stranded = _still_stranded(ctx, name)
        topics.append(built if not stranded else without_leader(built, stranded))
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
        applied_index,
        ctx.config.log.max_batch_bytes,
    )


def _still_stranded(ctx: BrokerContext, topic: str) -> frozenset[int]:
    """The topic's partitions whose leader here is stranded now: the watch's map (rebuilt
    every pass; nearly always empty) checked against each replica's own flag, which clears
    the moment committed state reaches it, so a healed leader is named again at once."""
    marked = ctx.replicas.stranded.get(topic)
    if not marked:
        return frozenset()
    return frozenset(
        p for p in marked if (r := ctx.replicas.get(topic, p)) is not None and r.stranded
    )


def without_leader(topic: TopicMetadata, partitions: frozenset[int]) -> TopicMetadata:
    """``topic`` with no leader named for ``partitions``, whose leader here is cut off from
    the cluster (replication/stranded_leaders.py): its clients must look for the new one."""
    return replace(
        topic,
        partitions=[
            replace(p, leader_id=-1, error_code=ErrorCode.LEADER_NOT_AVAILABLE)
            if p.partition in partitions
            else p
            for p in topic.partitions
        ],
    )
