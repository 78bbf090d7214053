"""bench/compat/librdkafka_suite.py reads librdkafka's test-runner output right: a summary
row decides, a crash or a hang after a PASSED row is a failure, the reason is the runner's
own failure line, and a missing tool is a one-line skip, not a crash."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "compat" / "librdkafka_suite.py"


@pytest.fixture(scope="module")
def suite() -> ModuleType:
    spec = importlib.util.spec_from_file_location("librdkafka_suite", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


GREEN, RESET = "\x1b[32m", "\x1b[0m"
PASSED = f"|{GREEN} 0012_produce_consume                     |     PASSED |   2.000s {RESET}|\n"
FAILED = (
    '### Test "0054_offset_time" failed at testcpp.h:77:() at Sun Nov 29 10:00:00 2026: ###\n'
    "Delivery failed to t [1]: Broker: Invalid timestamp\n"
    "| 0054_offset_time                         |     FAILED |   1.200s |\n"
)
SKIPPED = "| 0004_conf        |    SKIPPED |   0.000s | Filtered due to negative test flags\n"


def test_the_summary_row_decides(suite: ModuleType) -> None:
    assert suite.judge(PASSED, "0012", 0) == {"outcome": "pass", "state": "PASSED", "why": ""}
    skipped = suite.judge(SKIPPED, "0004", 0)
    assert skipped["outcome"] == "skip"
    assert skipped["why"] == "Filtered due to negative test flags"
    failed = suite.judge(FAILED, "0054", 134)
    assert failed["outcome"] == "fail"
    assert failed["why"] == "testcpp.h:77:(): Delivery failed to t [1]: Broker: Invalid timestamp"


def test_a_crash_or_hang_after_a_passed_row_fails(suite: ModuleType) -> None:
    assert suite.judge(PASSED, "0012", 134)["outcome"] == "fail"  # threads left: abort
    hung = suite.judge(PASSED, "0012", None)
    assert (hung["outcome"], hung["state"]) == ("fail", "TIMEOUT")
    assert suite.judge("loading shared libraries failed\n", "0012", 127)["state"] == "exit 127"
    assert suite.judge(PASSED, "0013", 0)["outcome"] == "fail"  # another test's row


def test_ranges_and_the_share_of_kafka_passes(suite: ModuleType) -> None:
    assert suite.parse_selection("0001-0003,0150") == ["0001", "0002", "0003", "0150"]
    with pytest.raises(Exception, match="NNNN"):
        suite.parse_selection("01-x")
    results = {
        "kafka": {n: {"outcome": "pass"} for n in ("0001", "0002", "0003", "0004")},
        "rillet": {n: {"outcome": "pass"} for n in ("0001", "0002", "0003")},
    }
    results["rillet"]["0004"] = {"outcome": "fail", "why": "a|b"}
    summary = suite.summary(results)
    assert (summary["kafka_passing"], summary["rillet_passing_of_those"]) == (4, 3)
    assert summary["percent"] == 75.0
    assert summary["fail_on_rillet_only"] == ["0004"]
    row = suite.table({"0004": "x"}, results).splitlines()[-1]
    assert row == "| 0004_x | pass | fail | **yes** | a\\|b |"


def test_no_npm_is_a_skip_reason(
    suite: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RILLET_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(suite.SuiteUnavailable, match="npm is not on PATH"):
        suite.ensure_suite()
