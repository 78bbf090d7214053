"""The node raises its open-file limit to what the system allows and knows how many
segments fit beside its connections."""

from __future__ import annotations

import resource

from rillet.broker.runtime.open_files import (
    RESERVED_DESCRIPTORS,
    raise_open_file_limit,
    segment_capacity,
)


def test_the_soft_limit_is_raised_to_the_hard_one() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        if hard != resource.RLIM_INFINITY and hard > 64:
            resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
        raised = raise_open_file_limit()
        now, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        assert raised == now
        assert hard in (resource.RLIM_INFINITY, now)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_segment_capacity_leaves_room_for_connections() -> None:
    assert segment_capacity(20_000, 10_000) == 10_000 - RESERVED_DESCRIPTORS
    assert segment_capacity(1_024, 10_000) == 0
