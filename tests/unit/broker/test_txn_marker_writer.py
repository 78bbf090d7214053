"""A decided transaction that holds group offsets only (no partition, so no marker to
write) is reported done by the marker writer, so the controller completes it; it used to
stay PrepareCommit for ever and its producer's next InitProducerId waited on it."""

from __future__ import annotations

from typing import Any, cast

from rillet.broker.cluster_auth import ClusterAuth
from rillet.broker.txn_marker_writer import TxnMarkerWriter
from rillet.metadata_quorum.txn_coordinator import MarkerTask
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
