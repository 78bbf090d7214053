"""Changing topic configs (handlers/topic_config_changes.py): the controller computes the
new override map (set, delete, append to a list setting), checks it as at creation and
commits it; unknown topics and keys and bad values are refused naming them; another node
forwards the change once."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing
from broker_context import middle
from voter_context import answer, voter

from rillet.broker.handlers.topic_config_changes import handle_alter_topic_configs
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import AlterTopicConfigsRequest, TopicConfigChange


async def test_configs_are_changed_checked_and_forwarded(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        await v.live_brokers(1)
        await v.topic("t")
        await v.topic("u")
        change = TopicConfigChange(
            "t", set={"retention.ms": "60000"}, append={"cleanup.policy": "compact"}
        )
        changes = [
            change,
            TopicConfigChange("u", set={"no.such.key": "1"}),
            TopicConfigChange("ghost", set={"retention.ms": "1"}),
            TopicConfigChange("u", set={"retention.ms": "soon"}),
        ]
        done = await answer(handle_alter_topic_configs(v.ctx, AlterTopicConfigsRequest(changes)))
        codes = [(r.name, r.error_code) for r in done.topics]
        assert codes == [
            ("t", ErrorCode.NONE),
            ("u", ErrorCode.INVALID_REQUEST),  # named twice
            ("ghost", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
            ("u", ErrorCode.INVALID_REQUEST),
        ]
        t = v.state.topic_by_name("t")
        assert t is not None
        assert t.configs["retention.ms"] == "60000"
        assert set(t.configs["cleanup.policy"].split(",")) == {"delete", "compact"}
        bad_key = await answer(
            handle_alter_topic_configs(
                v.ctx, AlterTopicConfigsRequest([TopicConfigChange("u", set={"no.such.key": "1"})])
            )
        )
        (result,) = bad_key.topics
        assert result.error_code == ErrorCode.INVALID_CONFIG and "no.such.key" in (
            result.error_message or ""
        )
        dry = await answer(
            handle_alter_topic_configs(
                v.ctx,
                AlterTopicConfigsRequest(
                    [TopicConfigChange("t", delete=["retention.ms"])], validate_only=True
                ),
            )
        )
        assert [r.error_code for r in dry.topics] == [ErrorCode.NONE]
        assert v.state.topic_by_name("t").configs["retention.ms"] == "60000"  # type: ignore[union-attr]
        broker = await v.broker_only(tmp_path / "broker")
        forwarded = await answer(
            handle_alter_topic_configs(
                broker,
                AlterTopicConfigsRequest([TopicConfigChange("t", delete=["retention.ms"])]),
            )
        )
        assert [r.error_code for r in forwarded.topics] == [ErrorCode.NONE]
        assert "retention.ms" not in broker.metadata.state.topic_by_name("t").configs  # type: ignore[union-attr]
    elsewhere = middle(tmp_path / "other").ctx
    refused = await answer(
        handle_alter_topic_configs(
            elsewhere, AlterTopicConfigsRequest([TopicConfigChange("t")], forwarded=True)
        )
    )
    assert [r.error_code for r in refused.topics] == [ErrorCode.NOT_CONTROLLER]
