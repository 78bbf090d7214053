"""A few seeds of the store-level power-cut simulation (``bench/power_cut_store_sweep.py``
runs hundreds): after a cut at any moment the log holds a prefix of what was appended and
at least everything its flushes made durable."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_power_cut_sim import run_seed


@pytest.mark.parametrize("seed", range(1, 4))
def test_a_power_cut_at_any_moment_keeps_a_durable_prefix(tmp_path: Path, seed: int) -> None:
    assert run_seed(seed, tmp_path / "run") is None
