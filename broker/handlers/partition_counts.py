"""CreatePartitions: growing topics, decided by the controller, accepted by any node.

The same path as CreateTopics (handlers/topics.py): a node that is not the controller
forwards the request (one hop), and answers once it hosts what the controller decided, with
the metadata offset of the change so that the client's next Metadata request, to any node,
sees the new partitions. The count is checked on the controller against the topic's current
count (only growth, as in Kafka) and the node's ``max_partitions_per_topic``.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import replace

import trio

from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller
from rillet.broker.handlers.topics import (
    SeenOffset,
    changed,
    forward_to_controller,
    not_forwarded_again,
    request_timeout_s,
    result_or_timeout,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    NewTopic,
    PartitionCount,
    TopicResult,
)

log = logging.getLogger(__name__)


async def handle_create_partitions(
    ctx: BrokerContext, req: CreatePartitionsRequest
) -> CreatePartitionsResponse:
    results: dict[str, TopicResult] = {}
    counts = Counter(t.name for t in req.topics)
    pending = [t for t in req.topics if counts[t.name] == 1]
    for name in (n for n, c in counts.items() if c > 1):
        results[name] = TopicResult(name, ErrorCode.INVALID_REQUEST, "topic named twice")
    seen = SeenOffset()
    with trio.move_on_after(request_timeout_s(req.timeout_ms)):
        if ctx.metadata.controller_is_local():
            for t in pending:
                results[t.name] = await _grow_one(ctx, t, req.validate_only)
        elif req.forwarded:
            results.update(not_forwarded_again(t.name for t in pending))
        else:
            # forward_to_controller carries topics as NewTopic; here its count is the total.
            carried = [NewTopic(t.name, t.count) for t in pending]
            results.update(
                await forward_to_controller(
                    ctx,
                    carried,
                    lambda ts: replace(
                        req,
                        topics=[PartitionCount(t.name, t.num_partitions) for t in ts],
                        forwarded=True,
                    ),
                    seen,
                )
            )
    return CreatePartitionsResponse(
        [result_or_timeout(results, t.name) for t in req.topics],
        max(seen.offset, ctx.metadata.applied_offset),
    )


async def _grow_one(ctx: BrokerContext, t: PartitionCount, validate_only: bool) -> TopicResult:
    limit = ctx.config.topics.max_partitions_per_topic
    if not 1 <= t.count <= limit:
        return TopicResult(
            t.name, ErrorCode.INVALID_PARTITIONS, f"the count must be between 1 and {limit}"
        )
    outcome = await decide_on_controller(
        ctx, lambda ctl, state, now: ctl.create_partitions(state, t.name, t.count, validate_only)
    )
    if outcome.error == ErrorCode.NONE and changed(outcome):
        log.info("topic %s grown to %d partitions", t.name, t.count)
        await ctx.metadata.wait_hosted(ctx.metadata.applied_offset)
    return TopicResult(t.name, outcome.error, outcome.message)
