"""Metadata requests that create the topics they name (broker/handlers/auto_topic_creation.py
decides; this driver sends the creations to the controller and patches the answer).

The request that starts a creation waits for the controller's answer (bounded by
``quorum.request_timeout_ms``) before answering, so its client usually sees the topic, led,
in the first answer instead of retrying; a creation not finished by then, or started by
another request, is answered LEADER_NOT_AVAILABLE as Kafka answers it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace

from rillet.broker.handlers.auto_topic_creation import MayCreate, anyone, creation_answer
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.deferred import Deferred
from rillet.broker.handlers.topics import handle_create_topics
from rillet.wire.error_codes import ErrorCode
from rillet.wire.forwarding import ForwardedFor
from rillet.wire.messages import (
    CreateTopicsRequest,
    MetadataRequest,
    MetadataResponse,
    NewTopic,
    TopicMetadata,
)

log = logging.getLogger(__name__)
LOGGED_NAMES = 5  # a request may name thousands: the log line names the first few

Answer = Callable[[BrokerContext, MetadataRequest], MetadataResponse | Awaitable[MetadataResponse]]


def names_unknown_topics(ctx: BrokerContext, req: MetadataRequest) -> bool:
    """Whether ``req`` may create topics: it allows it and names one this node does not
    know (a request for every topic creates none, as in Kafka)."""
    if not req.allow_auto_topic_creation or not req.topics:
        return False
    state = ctx.metadata.state
    return any(state.topic_by_name(name) is None for name in req.topics)


def answer_creating(
    ctx: BrokerContext,
    req: MetadataRequest,
    may_create: MayCreate | None,
    answer: Answer,
    asker: ForwardedFor | None = None,
) -> Deferred[MetadataResponse]:
    """``asker``: the client the creation is made for. Its ACLs were checked here
    (``may_create``), and a controller elsewhere checks them again: it decides a creation
    this node forwards as the client named in it, never as this node."""
    return _creating(ctx, req, may_create or anyone, answer, asker)


async def _creating(
    ctx: BrokerContext,
    req: MetadataRequest,
    may_create: MayCreate,
    answer: Answer,
    asker: ForwardedFor | None,
) -> MetadataResponse:
    timeout_s = ctx.config.quorum.request_timeout_ms / 1000
    if req.min_metadata_offset > ctx.metadata.applied_offset:
        # What the client has seen comes first: a topic created since is not created again.
        await ctx.metadata.wait_applied(req.min_metadata_offset, timeout_s)
    state = ctx.metadata.state
    unknown = [name for name in req.topics or () if state.topic_by_name(name) is None]
    plan = ctx.auto_topics.plan(unknown, ctx.config.topics.auto_create_topics_enable, may_create)
    patches = dict(plan.answers)
    if plan.create:
        shown = ", ".join(plan.create[:LOGGED_NAMES])
        more = (
            f" and {len(plan.create) - LOGGED_NAMES} more"
            if len(plan.create) > LOGGED_NAMES
            else ""
        )
        log.info("auto-creating topic(s) named in a Metadata request: %s%s", shown, more)
        try:
            created = await handle_create_topics(
                ctx,
                CreateTopicsRequest(
                    [NewTopic(name, -1, -1) for name in plan.create],
                    ctx.config.quorum.request_timeout_ms,
                    forwarded_for=asker,
                ),
            )
        finally:
            ctx.auto_topics.finished(plan.create)
        for r in created.topics:
            patches[r.name] = creation_answer(r.name, r.error_code, r.error_message)
    # The plain answer now (the client's offset was waited for above), creating nothing more.
    response = answer(ctx, replace(req, min_metadata_offset=-1, allow_auto_topic_creation=False))
    if not isinstance(response, MetadataResponse):
        response = await response
    return replace(response, topics=[_patched(t, patches) for t in response.topics])


def _patched(topic: TopicMetadata, patches: dict[str, TopicMetadata]) -> TopicMetadata:
    """A topic still unknown here is answered as the plan or the creation says; one that
    exists now (created, and applied here) keeps its own answer."""
    if topic.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
        return patches.get(topic.name, topic)
    return topic
