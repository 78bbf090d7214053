"""A decided transaction that holds group offsets only (no partition, so no marker to
write) is reported done by the marker writer, so the controller completes it; it used to
stay PrepareCommit for ever and its producer's next InitProducerId waited on it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from rillet.broker.cluster.cluster_auth import ClusterAuth
from rillet.broker.replica.txn_marker_writer import TxnMarkerWriter
from rillet.metadata_quorum.txn_coordinator import MarkerTask
from rillet.metadata_quorum.txn_registry import TxnPartition
from rillet.wire.transaction_messages import TxnMarkersWrittenRequest, TxnMarkersWrittenResponse


class RecordingLink:
    """The controller's side of the link: records each report and accepts it."""

    def __init__(self) -> None:
        self.calls: list[Any] = []

    async def call(self, request: Any, timeout_s: float) -> TxnMarkersWrittenResponse:
        self.calls.append(request)
        return TxnMarkersWrittenResponse(0)


async def test_a_transaction_without_partitions_is_reported_with_none_left() -> None:
    link = RecordingLink()
    writer = TxnMarkerWriter(
        2,
        cast(Any, None),  # no partition to look up
        cast(Any, None),
        cast(Any, link),
        ClusterAuth("cluster", "secret"),
        5.0,
    )
    await writer._write(MarkerTask("app-1", 1000, 3, True, []))
    (report,) = link.calls
    assert isinstance(report, TxnMarkersWrittenRequest)
    assert (report.transactional_id, report.producer_id, report.producer_epoch) == (
        "app-1",
        1000,
        3,
    )
    assert report.partitions == []


class FakeReplica:
    """A partition this node leads: records the markers appended, commits them at once."""

    is_leader = True
    deleted = False
    leader_epoch = 4

    def __init__(self) -> None:
        self.markers: list[Any] = []

    def append_marker_as_leader(self, marker: Any, now_ms: int) -> Any:
        self.markers.append(marker)
        return SimpleNamespace(last_offset=len(self.markers))

    async def wait_for_high_watermark(self, offset: int, leader_epoch: int) -> bool:
        return True


async def test_the_next_transaction_of_the_same_producer_gets_its_own_marker() -> None:
    """A producer keeps its id and epoch from one transaction to the next. A node that sees
    the next decision before the previous one's completion (both arrive in one metadata
    catch-up) must still write the new marker: it used to take it for the one written."""
    replica = FakeReplica()
    replicas = SimpleNamespace(
        get=lambda topic, partition: replica, clock=SimpleNamespace(now_ms=lambda: 0)
    )
    writer = TxnMarkerWriter(
        2,
        cast(Any, replicas),
        cast(Any, None),
        cast(Any, RecordingLink()),
        ClusterAuth("cluster", "secret"),
        5.0,
    )
    partitions = [TxnPartition("t", 0)]
    writer._forget_finished([MarkerTask("app-1", 1000, 3, True, partitions, 100)])
    await writer._write(MarkerTask("app-1", 1000, 3, True, partitions, 100))
    # The next transaction was decided (to abort) before this node saw the first complete.
    writer._forget_finished([MarkerTask("app-1", 1000, 3, False, partitions, 250)])
    await writer._write(MarkerTask("app-1", 1000, 3, False, partitions, 250))
    assert [m.committed for m in replica.markers] == [True, False]
    # A retry pass of the same decision writes nothing again.
    await writer._write(MarkerTask("app-1", 1000, 3, False, partitions, 250))
    assert len(replica.markers) == 2
