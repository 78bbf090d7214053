"""CreateTopics and DeleteTopics: decided by the controller, accepted by any node.

A node that is not the controller forwards the request to it (like Kafka's KIP-590
forwarding), retrying topics that met a controller change, and answers once its own metadata
shows the result, so a client that creates a topic and then asks the same node for metadata
sees it. Topic names, partition counts and configs are checked on the controller.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

import trio

from rillet.broker.errors import BrokerError, TopicError
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller
from rillet.broker.topic_config import validate_topic_configs, validate_topic_name
from rillet.metadata_quorum.controller_service import DecideFn
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    NewTopic,
    TopicResult,
)

log = logging.getLogger(__name__)

MIN_TIMEOUT_MS = 100
MAX_TIMEOUT_MS = 120_000


def handle_create_topics(
    ctx: BrokerContext, req: CreateTopicsRequest
) -> Coroutine[Any, Any, CreateTopicsResponse]:
    return _create_topics(ctx, req)


def handle_delete_topics(
    ctx: BrokerContext, req: DeleteTopicsRequest
) -> Coroutine[Any, Any, DeleteTopicsResponse]:
    return _delete_topics(ctx, req)


def _timeout_s(timeout_ms: int) -> float:
    return min(max(timeout_ms, MIN_TIMEOUT_MS), MAX_TIMEOUT_MS) / 1000


async def _create_topics(ctx: BrokerContext, req: CreateTopicsRequest) -> CreateTopicsResponse:
    results: dict[str, TopicResult] = {}
    counts = Counter(t.name for t in req.topics)
    pending = [t for t in req.topics if counts[t.name] == 1]
    for name in (n for n, c in counts.items() if c > 1):
        results[name] = TopicResult(name, ErrorCode.INVALID_REQUEST, "topic named twice")
    timeout_s = _timeout_s(req.timeout_ms)
    with trio.move_on_after(timeout_s):
        if ctx.metadata.controller_is_local():
            for t in pending:
                results[t.name] = await _create_one(ctx, t, req.validate_only)
        elif req.forwarded:
            results.update(_not_forwarded_again(t.name for t in pending))
        else:
            forwarded = await _forward(
                ctx,
                pending,
                lambda ts: CreateTopicsRequest(ts, req.timeout_ms, req.validate_only, True),
            )
            results.update(forwarded)
            if not req.validate_only:
                created = [n for n, r in forwarded.items() if r.error_code == ErrorCode.NONE]
                await ctx.metadata.wait_until(
                    lambda s: all(s.topic_by_name(n) is not None for n in created), timeout_s
                )
    return CreateTopicsResponse([_result_or_timeout(results, t.name) for t in req.topics])


async def _create_one(ctx: BrokerContext, t: NewTopic, validate_only: bool) -> TopicResult:
    defaults = ctx.config.topics
    partitions = defaults.num_partitions if t.num_partitions == -1 else t.num_partitions
    factor = defaults.replication_factor if t.replication_factor == -1 else t.replication_factor
    try:
        validate_topic_name(t.name)
        if not 1 <= partitions <= defaults.max_partitions_per_topic:
            raise TopicError(
                ErrorCode.INVALID_PARTITIONS,
                f"num_partitions must be between 1 and {defaults.max_partitions_per_topic}",
            )
        if factor < 1:
            raise TopicError(ErrorCode.INVALID_REPLICATION_FACTOR, "replication factor < 1")
        configs = validate_topic_configs(t.configs, ctx.config.log)
    except TopicError as exc:
        return TopicResult(t.name, exc.code, str(exc))
    if validate_only:
        state = ctx.metadata.state
        if state.topic_by_name(t.name) is not None:
            return TopicResult(t.name, ErrorCode.TOPIC_ALREADY_EXISTS, "topic exists")
        return TopicResult(t.name, ErrorCode.NONE)
    outcome = await decide_on_controller(
        ctx, lambda ctl, state, now: ctl.create_topic(state, t.name, partitions, factor, configs)
    )
    if outcome.error == ErrorCode.NONE:
        log.info("created topic %s: %d partitions x %d replicas", t.name, partitions, factor)
    return TopicResult(t.name, outcome.error, outcome.message)


async def _delete_topics(ctx: BrokerContext, req: DeleteTopicsRequest) -> DeleteTopicsResponse:
    results: dict[str, TopicResult] = {}
    timeout_s = _timeout_s(req.timeout_ms)
    names = list(dict.fromkeys(req.topics))
    with trio.move_on_after(timeout_s):
        if ctx.metadata.controller_is_local():
            for name in names:
                outcome = await decide_on_controller(ctx, _deleting(name))
                if outcome.error == ErrorCode.NONE:
                    log.info("deleted topic %s", name)
                results[name] = TopicResult(name, outcome.error, outcome.message)
        elif req.forwarded:
            results.update(_not_forwarded_again(names))
        else:
            forwarded = await _forward(
                ctx,
                [NewTopic(n, 1) for n in names],
                lambda ts: DeleteTopicsRequest([t.name for t in ts], req.timeout_ms, True),
            )
            results.update(forwarded)
            gone = [n for n, r in forwarded.items() if r.error_code == ErrorCode.NONE]
            await ctx.metadata.wait_until(
                lambda s: all(s.topic_by_name(n) is None for n in gone), timeout_s
            )
    return DeleteTopicsResponse([_result_or_timeout(results, n) for n in req.topics])


def _deleting(name: str) -> DecideFn:
    return lambda ctl, state, now: ctl.delete_topic(state, name)


async def _forward(
    ctx: BrokerContext,
    topics: list[NewTopic],
    make_request: Callable[[list[NewTopic]], Any],
) -> dict[str, TopicResult]:
    """Send the topics to the controller until each has an answer other than NOT_CONTROLLER."""
    link = ctx.metadata.link
    done: dict[str, TopicResult] = {}
    if link is None:
        return done
    remaining = list(topics)
    while remaining:
        try:
            response = await link.call(
                make_request(remaining),
                ctx.config.quorum.request_timeout_ms / 1000,
                not_controller=_all_not_controller,
            )
        except BrokerError as exc:
            for t in remaining:
                done[t.name] = TopicResult(t.name, ErrorCode.NOT_CONTROLLER, str(exc))
            return done
        for r in response.topics:
            if r.error_code != ErrorCode.NOT_CONTROLLER:
                done[r.name] = r
        remaining = [t for t in remaining if t.name not in done]
        if remaining:
            await trio.sleep(0.05)  # a controller change mid-request: retry the rest
    return done


def _not_forwarded_again(names: Iterable[str]) -> dict[str, TopicResult]:
    """A forwarded request that reached a node which is no longer the controller is refused,
    not forwarded a second time (one hop, as Kafka's KIP-590 envelopes). The forwarding node
    retries at the controller it finds; a second hop would let a request its sender has
    given up on — held up by the network, then delivered — take effect long after its
    retry was answered: chaos seed 37 saw a topic created again after its deletion."""
    return {
        n: TopicResult(n, ErrorCode.NOT_CONTROLLER, "not the controller (forwarded request)")
        for n in names
    }


def _all_not_controller(response: Any) -> int | None:
    topics = response.topics
    if topics and all(r.error_code == ErrorCode.NOT_CONTROLLER for r in topics):
        return -1
    return None


def _result_or_timeout(results: dict[str, TopicResult], name: str) -> TopicResult:
    return results.get(name) or TopicResult(
        name, ErrorCode.REQUEST_TIMED_OUT, "the controller did not answer within timeout_ms"
    )
