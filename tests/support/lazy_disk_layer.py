"""Put the chaos harness's LazyDisk file layer under the stores for one test."""

from __future__ import annotations

from pathlib import Path

import pytest

from rillet.chaos.lazy_disk import LazyDisk
from rillet.wire import disk_io


def install_lazy_disk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> LazyDisk:
    """A LazyDisk over ``tmp_path / "data"`` (created), routed through ``disk_io`` until
    ``monkeypatch.undo()`` (after a power cut the layer takes no more calls: undo, then
    reopen the stores through the real calls)."""
    (tmp_path / "data").mkdir(exist_ok=True)
    layer = LazyDisk(tmp_path / "data", tmp_path / "graveyard")
    for name in disk_io._NAMES:
        monkeypatch.setattr(disk_io, name, getattr(layer, name))
    return layer
