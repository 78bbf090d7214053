"""CreateTopics and DeleteTopics: decided by the controller, accepted by any node.

A node that is not the controller forwards the request to it (like Kafka's KIP-590
forwarding), retrying topics that met a controller change, and answers once its own metadata
has applied the controller's answer. Every answer carries the metadata log offset it
reflects: the client sends it with its next Metadata request, and whichever node gets that
waits until it has applied as much (handlers/metadata.py), so "created" is never followed by
"unknown topic". Each request carries the client's request id, recorded with the change, so
a retry of a create or delete that was carried out succeeds (metadata_quorum/topic_requests).
Topic names, partition counts and configs are checked on the controller.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Protocol, TypeVar

import trio

from rillet.broker.errors import BrokerError, TopicError
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.controller_calls import decide_on_controller
from rillet.broker.handlers.controller_decisions import ControllerOutcome
from rillet.broker.replica.topic_config import validate_topic_configs, validate_topic_name
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
from rillet.wire.request import Request

log = logging.getLogger(__name__)
T = TypeVar("T", bound="_TopicsAnswer")

MIN_TIMEOUT_MS = 100
MAX_TIMEOUT_MS = 120_000


def request_timeout_s(timeout_ms: int) -> float:
    return min(max(timeout_ms, MIN_TIMEOUT_MS), MAX_TIMEOUT_MS) / 1000


async def handle_create_topics(
    ctx: BrokerContext, req: CreateTopicsRequest
) -> CreateTopicsResponse:
    results: dict[str, TopicResult] = {}
    counts = Counter(t.name for t in req.topics)
    pending = [t for t in req.topics if counts[t.name] == 1]
    for name in (n for n, c in counts.items() if c > 1):
        results[name] = TopicResult(name, ErrorCode.INVALID_REQUEST, "topic named twice")
    timeout_s = request_timeout_s(req.timeout_ms)
    seen = SeenOffset()
    with trio.move_on_after(timeout_s):
        if ctx.metadata.controller_is_local():
            for t in pending:
                results[t.name] = await _create_one(ctx, t, req.validate_only, req.request_id)
        elif req.forwarded:
            results.update(not_forwarded_again(t.name for t in pending))
        else:
            forwarded = await forward_to_controller(
                ctx,
                pending,
                lambda ts: replace(req, topics=ts, forwarded=True),
                seen,
            )
            results.update(forwarded)
    return CreateTopicsResponse(
        [result_or_timeout(results, t.name) for t in req.topics],
        max(seen.offset, ctx.metadata.applied_offset),
    )


async def _create_one(
    ctx: BrokerContext, t: NewTopic, validate_only: bool, request_id: str
) -> TopicResult:
    defaults = ctx.config.topics
    partitions = defaults.num_partitions if t.num_partitions == -1 else t.num_partitions
    factor = (
        defaults.default_replication_factor if t.replication_factor == -1 else t.replication_factor
    )
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
        ctx,
        lambda ctl, state, now: ctl.create_topic(
            state, t.name, partitions, factor, configs, request_id
        ),
    )
    if outcome.error == ErrorCode.NONE and changed(outcome):
        log.info("created topic %s: %d partitions x %d replicas", t.name, partitions, factor)
    elif outcome.error == ErrorCode.NONE:
        log.info("topic %s: a resent create, carried out already", t.name)
    return TopicResult(t.name, outcome.error, outcome.message)


async def handle_delete_topics(
    ctx: BrokerContext, req: DeleteTopicsRequest
) -> DeleteTopicsResponse:
    results: dict[str, TopicResult] = {}
    timeout_s = request_timeout_s(req.timeout_ms)
    names = list(dict.fromkeys(req.topics))
    seen = SeenOffset()
    with trio.move_on_after(timeout_s):
        if ctx.metadata.controller_is_local():
            for name in names:
                outcome = await decide_on_controller(ctx, _deleting(name, req.request_id))
                if outcome.error == ErrorCode.NONE and changed(outcome):
                    log.info("deleted topic %s", name)
                results[name] = TopicResult(name, outcome.error, outcome.message)
        elif req.forwarded:
            results.update(not_forwarded_again(names))
        else:
            forwarded = await forward_to_controller(
                ctx,
                [NewTopic(n, 1) for n in names],
                lambda ts: replace(req, topics=[t.name for t in ts], forwarded=True),
                seen,
            )
            results.update(forwarded)
    return DeleteTopicsResponse(
        [result_or_timeout(results, n) for n in req.topics],
        max(seen.offset, ctx.metadata.applied_offset),
    )


def changed(outcome: ControllerOutcome) -> bool:
    """Whether the decision committed records (not a resend of a change already made)."""
    return outcome.decision is not None and bool(outcome.decision.records)


def _deleting(name: str, request_id: str) -> DecideFn:
    return lambda ctl, state, now: ctl.delete_topic(state, name, request_id)


async def forward_to_controller(
    ctx: BrokerContext,
    topics: list[NewTopic],
    make_request: Callable[[list[NewTopic]], Request[T]],
    seen: SeenOffset,
) -> dict[str, TopicResult]:
    """Send the topics to the controller until each has an answer other than NOT_CONTROLLER,
    then wait until this node has applied the metadata the controller answered from: the
    client may ask this node for metadata next."""
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
        seen.offset = max(seen.offset, response.metadata_offset)
        if remaining:
            await trio.sleep(0.05)  # a controller change mid-request: retry the rest
    # Bounded by the caller's timeout, which then answers REQUEST_TIMED_OUT (the client's
    # retry, with the same request id, succeeds). Waiting for the partitions to be taken up
    # too means a produce or fetch sent here right after the answer finds them led.
    await ctx.metadata.wait_hosted(seen.offset)
    return done


class SeenOffset:
    """The highest metadata offset the controller answered with (-1: none yet)."""

    __slots__ = ("offset",)

    def __init__(self) -> None:
        self.offset = -1


def not_forwarded_again(names: Iterable[str]) -> dict[str, TopicResult]:
    """A forwarded request that reached a node which is no longer the controller is refused,
    not forwarded a second time (one hop, as Kafka's KIP-590 envelopes). The forwarding node
    retries at the controller it finds; a second hop would let a request its sender has
    given up on — held up by the network, then delivered — take effect long after its
    retry was answered: chaos seed 37 saw a topic created again after its deletion."""
    return {
        n: TopicResult(n, ErrorCode.NOT_CONTROLLER, "not the controller (forwarded request)")
        for n in names
    }


class _TopicsAnswer(Protocol):
    """The controller's answer to topics forwarded to it (CreateTopics and alike)."""

    @property
    def topics(self) -> Sequence[TopicResult]: ...

    @property
    def metadata_offset(self) -> int: ...


def _all_not_controller(response: _TopicsAnswer) -> int | None:
    topics = response.topics
    if topics and all(r.error_code == ErrorCode.NOT_CONTROLLER for r in topics):
        return -1
    return None


def result_or_timeout(results: dict[str, TopicResult], name: str) -> TopicResult:
    return results.get(name) or TopicResult(
        name, ErrorCode.REQUEST_TIMED_OUT, "the controller did not answer within timeout_ms"
    )
