"""Kafka's APPEND and SUBTRACT on a list setting (cleanup.policy): what librdkafka's 0011 and
Kafka's tools do to make a topic compacted and back, computed from the current value."""

from __future__ import annotations

import pytest

from rillet.broker.errors import TopicError
from rillet.broker.handlers.topic_config_changes import new_overrides
from rillet.broker.replica.topic_config import edited_list, validate_topic_configs
from rillet.partition_store.config import LogConfig
from rillet.wire.messages import TopicConfigChange


def test_append_to_the_default_and_subtract_back() -> None:
    defaults = LogConfig()  # cleanup.policy delete
    compact = {"cleanup.policy": "compact"}
    added = validate_topic_configs(
        new_overrides({}, TopicConfigChange("t", append=compact), defaults), defaults
    )
    assert added == {"cleanup.policy": "compact,delete"}
    again = new_overrides(added, TopicConfigChange("t", append=compact), defaults)
    assert validate_topic_configs(again, defaults) == added  # already there: no change
    back = new_overrides(added, TopicConfigChange("t", subtract=compact), defaults)
    assert validate_topic_configs(back, defaults) == {"cleanup.policy": "delete"}


def test_a_setting_that_is_no_list_is_refused() -> None:
    with pytest.raises(TopicError, match=r"retention\.ms is not a list"):
        new_overrides({}, TopicConfigChange("t", append={"retention.ms": "5"}), LogConfig())


def test_edited_list_keeps_order_and_drops_duplicates() -> None:
    assert edited_list("delete", "compact, delete") == "delete,compact"
    assert edited_list("compact,delete", subtract="delete,compact") == ""
    assert edited_list("", "compact") == "compact"
