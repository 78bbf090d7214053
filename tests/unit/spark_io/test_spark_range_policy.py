"""The Spark source's policy for records a range read cannot return: DataLossError with
failOnDataLoss=true, otherwise one warning per gap and reading goes on."""

from __future__ import annotations

import pytest

from rillet.client.range_reader import RangeGap
from rillet.spark_io.errors import DataLossError
from rillet.spark_io.range_reader import RangeTask, on_gap, read_range_chunks

GAP = RangeGap(120, 150, "t-0: offsets 120..149 of the planned range [100, 200) were deleted")


def test_a_gap_is_data_loss_by_default() -> None:
    with pytest.raises(DataLossError, match="set failOnDataLoss=false"):
        on_gap(RangeTask("h:1", "t", 0, 100, 200), GAP)


def test_a_gap_is_a_warning_when_data_loss_is_allowed() -> None:
    warning = on_gap(RangeTask("h:1", "t", 0, 100, 200, fail_on_data_loss=False), GAP)
    assert warning == GAP.reason + "; skipped up to offset 150 (failOnDataLoss=false)"


def test_an_empty_range_reads_nothing_and_connects_nowhere() -> None:
    assert list(read_range_chunks(RangeTask("nowhere:1", "t", 0, 5, 5))) == []
