"""Whether a topic a command is working on still exists, asked the way a command can afford.

Clients retry UNKNOWN_TOPIC_OR_PARTITION (it is what a node says before it has applied a new
topic), so a consumer or producer whose topic was deleted under it waits and retries quietly.
Long-running console commands ask the metadata instead, through an admin client that has
already seen the topic: its requests name the metadata offset at which the topic existed, so
a node that says "unknown" really has applied its deletion.
"""

from __future__ import annotations

import trio

from rillet.client import Admin
from rillet.client.errors import (
    ClientTimeoutError,
    ConnectionFailedError,
    UnknownTopicOrPartitionError,
)

CHECK_TIMEOUT_S = 5.0


async def topic_exists(admin: Admin, topic: str, timeout_s: float = CHECK_TIMEOUT_S) -> bool | None:
    """True or False; None when no node answered within ``timeout_s`` (ask again later)."""
    with trio.move_on_after(timeout_s):
        try:
            await admin.describe_topics([topic])
        except UnknownTopicOrPartitionError:
            return False
        except (ConnectionFailedError, ClientTimeoutError):
            return None
        return True
    return None


def deleted_error(topic: str) -> UnknownTopicOrPartitionError:
    return UnknownTopicOrPartitionError(f"topic {topic!r} was deleted")
