"""Bit rot in trusted segments: never served, found by reads and scrubs, cut by the repair."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_batches import T0, batch, open_log, records_of

from rillet.partition_store.batch_verify import verify_buffer, verify_file_range
from rillet.partition_store.errors import LogDamaged
from rillet.partition_store.log import PartitionLog
from rillet.partition_store.scrub_plan import ScrubPlan, ScrubStep, ScrubTarget
from rillet.wire.batch import assign_offset_and_epoch


def _filled_log(directory: Path, batches: int = 60) -> PartitionLog:
    log = open_log(directory, segment_bytes=1024, index_interval_bytes=100)
    for i in range(batches):
        log.append_as_leader(batch([b"v%03d" % i + bytes(50)], ts=T0 + i), 0, T0)
    return log


def _flip(path: Path, position: int, count: int = 8) -> None:
    with path.open("r+b") as f:
        f.seek(position)
        data = f.read(count)
        f.seek(position)
        f.write(bytes(b ^ 0xFF for b in data))


def _damaged_reopened(directory: Path) -> tuple[PartitionLog, Path, int]:
    """A log closed cleanly, 8 bytes flipped in the middle of its second segment, reopened:
    the clean-shutdown marker makes the open trust the segment without re-reading it."""
    log = _filled_log(directory)
    second = log.segments()[1]
    log.close()
    middle = second.size_bytes // 2
    _flip(second.log_path, middle)
    reopened = open_log(directory, segment_bytes=1024, index_interval_bytes=100)
    assert reopened.recovery_stats.segments_recovered == 0  # trusted, as before the fix
    return reopened, second.log_path, second.base_offset


def _all_offsets(log: PartitionLog, start: int) -> list[int]:
    """Offsets readable from ``start`` on, stopping (as a consumer would) at an error."""
    out: list[int] = []
    offset = start
    while offset < log.log_end_offset:
        data = log.read_bytes(offset, 1 << 20)
        if not data:
            break
        got = [o for o, _ in records_of(data)]
        out += [o for o in got if o >= offset]
        offset = got[-1] + 1
    return out


def test_a_read_never_serves_a_batch_whose_crc_fails(tmp_path: Path) -> None:
    log, path, base = _damaged_reopened(tmp_path / "t-0")
    # Everything before the damaged batch is served, byte-checked, up to it.
    served = log.read_bytes(base, 1 << 20)
    offsets = [o for o, _ in records_of(served)]  # decoding checks every CRC
    assert offsets == list(range(base, base + len(offsets)))
    damaged_offset = base + len(offsets)
    with pytest.raises(LogDamaged) as caught:
        log.read(damaged_offset, 1 << 20)
    damage = caught.value.damage
    assert (damage.segment_path, damage.offset) == (path, damaged_offset)
    assert damage.reason  # here the flip hit a header: the offset chain breaks
    assert log.damage == damage
    # Later segments are checked on their first serve and are intact.
    third = log.segments()[2].base_offset
    assert records_of(log.read_bytes(third, 1 << 20))[0][0] == third


def test_verified_ranges_are_not_read_again(tmp_path: Path) -> None:
    log = _filled_log(tmp_path / "t-0")
    log.close()
    log = open_log(tmp_path / "t-0", segment_bytes=1024, index_interval_bytes=100)
    first = log.segments()[0]
    assert _all_offsets(log, 0) == list(range(60))
    # Now flip a byte behind the log's back: the range was checked, so it is trusted (the
    # scrub re-checks it; the serving path stays sendfile-only).
    _flip(first.log_path, first.size_bytes // 2)
    whole = log.read(0, 1 << 20).region
    assert whole is not None and whole.length == first.size_bytes
    assert log.damage is None
    # A reader that could not use those bytes (a follower asking for them again) makes the
    # log check them again: only the batches before the damage are served.
    checked = log.read(0, 1 << 20, recheck=True).region
    assert checked is not None and checked.length <= first.size_bytes // 2
    assert log.damage is not None and log.damage.segment_path == first.log_path


def test_truncate_to_damage_cuts_before_the_batch_and_appends_continue(tmp_path: Path) -> None:
    log, _, base = _damaged_reopened(tmp_path / "t-0")
    with pytest.raises(LogDamaged) as caught:
        _all_offsets(log, 0)
    damage = caught.value.damage
    end = log.truncate_to_damage(damage)
    assert end == damage.offset == log.log_end_offset
    assert log.damage is None
    assert _all_offsets(log, 0) == list(range(end))
    assert [s.base_offset for s in log.segments()][-1] == base
    # The follower re-fetches: appends continue at the cut, and the log reopens whole.
    log.append_as_follower(_batch_at(end), T0)
    log.close()
    again = open_log(tmp_path / "t-0", segment_bytes=1024, index_interval_bytes=100)
    assert _all_offsets(again, 0) == list(range(end + 1))


# Header fields the CRC does not cover: (name, byte position in the batch, byte count).
UNCOVERED_HEADER_FIELDS = [
    ("base offset", 0, 8),
    ("base offset's low byte", 7, 1),
    ("batch length", 8, 4),
    ("batch length's low byte", 11, 1),
    ("magic", 16, 1),
]


@pytest.mark.parametrize(("field", "at", "count"), UNCOVERED_HEADER_FIELDS)
def test_a_damaged_header_field_outside_the_crc_is_damage_not_an_empty_read(
    tmp_path: Path, field: str, at: int, count: int
) -> None:
    log = _filled_log(tmp_path / "t-0")
    second = log.segments()[1]
    log.close()
    data = second.log_path.read_bytes()
    third_batch = 0
    for _ in range(2):
        third_batch += 12 + int.from_bytes(data[third_batch + 8 : third_batch + 12], "big")
    with second.log_path.open("r+b") as f:
        f.seek(third_batch + at)
        f.write(bytes(b ^ 0x40 for b in data[third_batch + at : third_batch + at + count]))
    damaged_offset = second.base_offset + 2
    reopened = open_log(tmp_path / "t-0", segment_bytes=1024, index_interval_bytes=100)
    # Every offset before the damaged batch is served; reading on raises LogDamaged (which
    # the broker repairs) instead of returning nothing forever or a CorruptLog no one acts on.
    with pytest.raises(LogDamaged) as caught:
        _all_offsets(reopened, 0)
    assert caught.value.damage.offset == damaged_offset, field
    assert caught.value.damage.position == third_batch
    prefix = records_of(reopened.read_bytes(second.base_offset, 1 << 20))
    assert [o for o, _ in prefix] == list(range(second.base_offset, damaged_offset))
    with pytest.raises(LogDamaged):
        reopened.read(damaged_offset, 1 << 20)
    assert reopened.truncate_to_damage(caught.value.damage) == damaged_offset
    assert _all_offsets(reopened, 0) == list(range(damaged_offset))


def _batch_at(offset: int) -> bytes:
    data = bytearray(batch([b"refetched"]))
    assign_offset_and_epoch(data, 0, offset, 0)
    return bytes(data)


def test_damage_in_the_first_batch_of_the_log_restarts_it_there(tmp_path: Path) -> None:
    log = _filled_log(tmp_path / "t-0")
    first = log.segments()[0]
    log.close()
    _flip(first.log_path, 70)  # inside the first batch's payload
    log = open_log(tmp_path / "t-0", segment_bytes=1024, index_interval_bytes=100)
    with pytest.raises(LogDamaged) as caught:
        log.read(0, 100)
    assert log.truncate_to_damage(caught.value.damage) == 0
    assert (log.log_start_offset, log.log_end_offset) == (0, 0)


def test_a_scrub_pass_finds_the_damage_and_marks_the_rest_verified(tmp_path: Path) -> None:
    log, path, _ = _damaged_reopened(tmp_path / "t-0")
    plan = ScrubPlan([(0, t) for t in log.scrub_targets()], bytes_per_second=1 << 30, now_ms=0)
    plan.step_bytes = 300  # several steps per segment
    found = []
    now = 0
    while (step := plan.next_step(now)) is not None:
        if isinstance(step, int):
            now += step  # the pacing's wait
            continue
        fd = log.open_for_scrub(step.target)
        assert fd is not None
        try:
            outcome = verify_file_range(
                fd, step.start, step.target.size, step.expected_offset, step.max_bytes
            )
        finally:
            os.close(fd)
        damage = log.note_scrubbed(step.target, step.start, outcome)
        if damage is not None:
            found.append(damage)
        plan.step_done(step, outcome)
    assert [d.segment_path for d in found] == [path]
    assert plan.stats.damaged == 1
    assert plan.stats.segments_checked == len(log.segments())
    # A read of the damaged batch now fails at once, without re-reading.
    with pytest.raises(LogDamaged):
        log.read(found[0].offset, 100)


def test_a_scrub_finding_for_a_log_cut_since_is_dropped(tmp_path: Path) -> None:
    log, _, _ = _damaged_reopened(tmp_path / "t-0")
    target = log.scrub_targets()[1]
    log.truncate_to(log.segments()[1].base_offset)
    assert log.open_for_scrub(target) is None
    outcome = verify_buffer(b"", 0, 0, final=True)
    assert log.note_scrubbed(target, 0, outcome) is None


def test_scrub_pacing_keeps_the_average_rate() -> None:
    target = ScrubTarget(0, 10_000, Path("x.log"), 0)
    plan: ScrubPlan[int] = ScrubPlan([(0, target)], bytes_per_second=1000, now_ms=0)
    step = plan.next_step(0)
    assert isinstance(step, ScrubStep) and step.max_bytes == 1000
    plan.step_done(step, verify_buffer(b"", 1000, 0, final=False)._replace(end_position=1000))
    wait = plan.next_step(10)
    assert isinstance(wait, int) and 980 <= wait <= 1000
    assert isinstance(plan.next_step(1000), ScrubStep)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=10_000), st.integers(min_value=1, max_value=255))
def test_any_flipped_byte_is_caught_or_harmless(position_seed: int, mask: int) -> None:
    data = bytearray()
    for i in range(5):
        b = bytearray(batch([b"x" * (i + 10)]))
        assign_offset_and_epoch(b, 0, i, 0)
        data += b
    position = position_seed % len(data)
    data[position] ^= mask
    outcome = verify_buffer(bytes(data), 0, 0, final=True)
    # Only the leader epoch (outside the CRC and the chain) may change unnoticed.
    if outcome.damage_reason is None:
        assert outcome.next_offset == 5
    else:
        assert outcome.end_position <= position


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=8),
    st.integers(min_value=0, max_value=10_000),
    st.booleans(),
    st.integers(min_value=16, max_value=700),
    st.integers(min_value=1, max_value=900),
)
def test_reading_in_chunks_and_steps_finds_what_one_buffer_finds(
    tmp_path_factory: pytest.TempPathFactory,
    sizes: list[int],
    flip_seed: int,
    flip: bool,
    chunk_bytes: int,
    step_bytes: int,
) -> None:
    data = bytearray()
    for i, size in enumerate(sizes):
        b = bytearray(batch([bytes([i]) * size]))
        assign_offset_and_epoch(b, 0, i, 0)
        data += b
    if flip:
        data[flip_seed % len(data)] ^= 0x5A
    expected = verify_buffer(bytes(data), 0, 0, final=True)
    path = tmp_path_factory.mktemp("v") / "x.log"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        whole = verify_file_range(fd, 0, len(data), 0, chunk_bytes=chunk_bytes)
        position, offset = 0, 0
        while True:  # a scrub's bounded steps
            step = verify_file_range(
                fd, position, len(data), offset, max_bytes=step_bytes, chunk_bytes=chunk_bytes
            )
            if step.damage_reason is not None or step.end_position >= len(data):
                break
            assert step.end_position > position
            position, offset = step.end_position, step.next_offset
    finally:
        os.close(fd)
    for outcome in (whole, step):
        assert outcome.end_position == expected.end_position
        assert outcome.next_offset == expected.next_offset
        assert (outcome.damage_reason is None) == (expected.damage_reason is None)
