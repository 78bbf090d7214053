"""A revoked partition's records never reach the application after its position is taken.

Found by the consumer-group integration test under load: the membership task revoked
partitions while ``poll`` kept running. Records polled while the listener or the commit on
revoke was in flight lay beyond the committed position, so the next owner delivered them
again — whole partitions twice, without any failure. Revocation now holds the partitions'
records back before its first await.
"""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from rillet.client import GroupConsumer, TopicPartition
from rillet.client.buffered_records import BufferedRecords, RecordColumns
from rillet.client.types import ConsumerRecord

KEPT, GIVEN_UP = TopicPartition("t", 0), TopicPartition("t", 1)


def member_with_buffered_records() -> GroupConsumer:
    consumer = GroupConsumer("127.0.0.1:1", "g", topics=["t"])
    consumer.member_id, consumer.generation = "m", 3
    consumer._owned = {KEPT, GIVEN_UP}
    consumer.assign([KEPT, GIVEN_UP])
    for tp in (KEPT, GIVEN_UP):
        state = consumer._sub.state(tp)
        state.set_position(0)
        consumer._sub.buffer(
            tp,
            state,
            BufferedRecords(
                tp.topic, tp.partition, [RecordColumns(0, [0] * 5, [None] * 5, [b"v"] * 5, None)]
            ),
        )
        state.fetch_offset = 5
    return consumer


async def test_records_polled_during_a_revoke_commit_are_never_beyond_the_committed_offset() -> (
    None
):
    consumer = member_with_buffered_records()
    committed: dict[TopicPartition, int] = {}
    polled: list[ConsumerRecord] = []

    async def commit(offsets: Any, until_s: float) -> None:
        # The application polls while the commit is on the wire.
        polled.extend(consumer._sub.take(None))
        await trio.lowlevel.checkpoint()
        committed.update(offsets)

    consumer._commit = commit  # type: ignore[method-assign]
    await consumer._revoke({GIVEN_UP})
    assert committed == {GIVEN_UP: 0}
    assert {r.partition for r in polled} == {KEPT.partition}
    assert consumer.assignment() == {KEPT}


async def test_a_listener_still_sees_the_partitions_it_gives_up_with_their_positions() -> None:
    consumer = member_with_buffered_records()
    consumer._sub.take(None)  # the application got offsets 0-4 of both
    seen: list[dict[TopicPartition, int]] = []

    class Listener:
        async def on_partitions_revoked(self, partitions: set[TopicPartition]) -> None:
            assert partitions <= consumer.assignment()  # still assigned: it may commit them
            seen.append({tp: consumer._sub.state(tp).position or -1 for tp in partitions})

        def on_partitions_assigned(self, partitions: set[TopicPartition]) -> None:
            pass

    consumer._listener = Listener()
    consumer._auto_commit = False
    await consumer._revoke({GIVEN_UP})
    assert seen == [{GIVEN_UP: 5}]
