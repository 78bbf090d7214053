"""Changing topics' configs at run time (the native form of Kafka's IncrementalAlterConfigs
and AlterConfigs), decided by the controller, accepted by any node.

The same path as CreateTopics (handlers/topics.py): forwarded to the controller (one hop),
answered once this node has applied the change, with its metadata offset. The controller
computes the topic's new override map from the committed one, checks it exactly as at
creation (unknown keys and bad values are INVALID_CONFIG, naming the key), and commits it
as one record that every node applies to the topic's replicas on the spot: retention,
segment, flush, timestamp and min.insync.replicas settings take effect without a restart.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import replace

import trio

from rillet.broker.errors import TopicError
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
from rillet.broker.replica.topic_config import (
    LIST_TOPIC_CONFIGS,
    STRING_TOPIC_CONFIGS,
    edited_list,
    validate_topic_configs,
)
from rillet.metadata_quorum.controller import Controller
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.state import MetadataState
from rillet.partition_store.config import LogConfig
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import (
    AlterTopicConfigsRequest,
    AlterTopicConfigsResponse,
    NewTopic,
    TopicConfigChange,
    TopicResult,
)

log = logging.getLogger(__name__)


def new_overrides(
    current: dict[str, str], change: TopicConfigChange, defaults: LogConfig
) -> dict[str, str]:
    """The override map after ``change`` (deleted keys fall back to the node's defaults; a
    list setting without an override is appended to or subtracted from its default)."""
    out = {} if change.replace else dict(current)
    for key in change.delete:
        out.pop(key, None)
    out.update(change.set)
    for key in sorted(change.append.keys() | change.subtract.keys()):
        if key not in LIST_TOPIC_CONFIGS:
            raise TopicError(
                ErrorCode.INVALID_CONFIG, f"{key} is not a list: no APPEND or SUBTRACT"
            )
        now = out.get(key) or str(getattr(defaults, STRING_TOPIC_CONFIGS[key][0]))
        out[key] = edited_list(now, change.append.get(key, ""), change.subtract.get(key, ""))
    return out


def decide_change(
    ctl: Controller,
    state: MetadataState,
    change: TopicConfigChange,
    defaults: LogConfig,
    validate_only: bool,
) -> Decision:
    topic = state.topic_by_name(change.name)
    if topic is None:
        return Decision([], ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"unknown topic {change.name!r}")
    try:
        configs = validate_topic_configs(new_overrides(topic.configs, change, defaults), defaults)
    except TopicError as exc:
        return Decision([], ErrorCode(exc.code), str(exc))
    if validate_only:
        return Decision([])
    return ctl.alter_topic_configs(state, change.name, configs)


async def handle_alter_topic_configs(
    ctx: BrokerContext, req: AlterTopicConfigsRequest
) -> AlterTopicConfigsResponse:
    results: dict[str, TopicResult] = {}
    counts = Counter(t.name for t in req.topics)
    pending = [t for t in req.topics if counts[t.name] == 1]
    for name in (n for n, c in counts.items() if c > 1):
        results[name] = TopicResult(name, ErrorCode.INVALID_REQUEST, "topic named twice")
    by_name = {t.name: t for t in pending}
    seen = SeenOffset()
    with trio.move_on_after(request_timeout_s(req.timeout_ms)):
        if ctx.metadata.controller_is_local():
            for t in pending:
                results[t.name] = await _alter_one(ctx, t, req.validate_only)
        elif req.forwarded:
            results.update(not_forwarded_again(t.name for t in pending))
        else:
            results.update(
                await forward_to_controller(
                    ctx,
                    [NewTopic(t.name, 1) for t in pending],  # carriers of the names
                    lambda ts: replace(req, topics=[by_name[t.name] for t in ts], forwarded=True),
                    seen,
                )
            )
    return AlterTopicConfigsResponse(
        [result_or_timeout(results, t.name) for t in req.topics],
        max(seen.offset, ctx.metadata.applied_offset),
    )


async def _alter_one(
    ctx: BrokerContext, change: TopicConfigChange, validate_only: bool
) -> TopicResult:
    defaults = ctx.config.log
    outcome = await decide_on_controller(
        ctx, lambda ctl, state, now: decide_change(ctl, state, change, defaults, validate_only)
    )
    if outcome.error == ErrorCode.NONE and changed(outcome):
        log.info("topic %s: configs changed (%s)", change.name, _described(change))
    return TopicResult(change.name, outcome.error, outcome.message)


def _described(change: TopicConfigChange) -> str:
    parts = [f"{k}={v}" for k, v in sorted(change.set.items())]
    parts += [f"{k} back to default" for k in change.delete]
    parts += [f"{k} += {v}" for k, v in sorted(change.append.items())]
    parts += [f"{k} -= {v}" for k, v in sorted(change.subtract.items())]
    return ", ".join(parts) or ("cleared" if change.replace else "no change")
