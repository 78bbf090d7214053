"""Per-test outcomes from pytest's JUnit XML, and the side-by-side table of two runs.

A client's own test suite run against rillet and against Apache Kafka gives one JUnit file
each; the table lines the tests up and marks every one whose outcome differs, so the
differences (the work left, or the deliberate departures) are read at a glance.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

OUTCOMES = ("passed", "failed", "skipped")
MESSAGE_CHARS = 160


def outcomes(junit_xml: Path) -> dict[str, dict[str, str]]:
    """``{test id: {"outcome": passed|failed|skipped, "message": first line}}``; a test
    that errored in setup or teardown counts as failed (pytest reports it as an error)."""
    root = ET.parse(junit_xml).getroot()
    found: dict[str, dict[str, str]] = {}
    for case in root.iter("testcase"):
        module = case.get("classname", "").rsplit(".", 1)[-1]
        test_id = f"{module}::{case.get('name', '?')}"
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, message = "failed", child.get("message", "") or (child.text or "")
                break
            if child.tag == "skipped":
                outcome, message = "skipped", child.get("message", "")
        if found.get(test_id, {}).get("outcome") == "failed":
            continue  # a teardown error after a failure: keep the first report
        found[test_id] = {"outcome": outcome, "message": _first_line(message)}
    return found


def _first_line(text: str) -> str:
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return line[:MESSAGE_CHARS]


def counts(run: dict[str, dict[str, str]]) -> dict[str, int]:
    tally = Counter(r["outcome"] for r in run.values())
    return {outcome: tally.get(outcome, 0) for outcome in OUTCOMES}


def table(runs: dict[str, dict[str, dict[str, str]]]) -> str:
    """A plain-text table: one row per test, one column per run, ``*`` where they differ."""
    names = list(runs)
    tests = sorted({t for run in runs.values() for t in run})
    width = max((len(t) for t in tests), default=4)
    head = f"{'test':<{width}}  " + "  ".join(f"{n:<8}" for n in names) + "  diff"
    lines = [head, "-" * len(head)]
    for test in tests:
        got = [runs[n].get(test, {}).get("outcome", "-") for n in names]
        mark = "*" if len(set(got)) > 1 else ""
        lines.append(f"{test:<{width}}  " + "  ".join(f"{g:<8}" for g in got) + f"  {mark}")
    lines.append("-" * len(head))
    for name in names:
        tally = counts(runs[name])
        lines.append(f"{name}: " + ", ".join(f"{v} {k}" for k, v in tally.items()))
    return "\n".join(lines)


def differences(runs: dict[str, dict[str, dict[str, str]]]) -> dict[str, dict[str, str]]:
    """Tests whose outcome differs between the runs: ``{test: {run: "outcome: message"}}``."""
    diff: dict[str, dict[str, str]] = {}
    for test in sorted({t for run in runs.values() for t in run}):
        got = {n: runs[n].get(test, {"outcome": "-", "message": ""}) for n in runs}
        if len({g["outcome"] for g in got.values()}) > 1:
            diff[test] = {n: f"{g['outcome']}: {g['message']}".rstrip(": ") for n, g in got.items()}
    return diff
