"""A clean's job and answer as CBOR (partition_store/clean_job_codec.py): both round-trip,
and an answer the job could not have produced is refused before anything is installed."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cbor2
import pytest

from rillet.partition_store.clean_job_codec import (
    decode_answer,
    decode_job,
    encode_failure,
    encode_job,
    encode_result,
)
from rillet.partition_store.cleaning_pass import job_for, work
from rillet.partition_store.config import LogConfig
from rillet.partition_store.errors import CleanerProcessError, CorruptLog
from rillet.partition_store.log import PartitionLog
from rillet.partition_store.segment_cleaner import CleanJob, CleanResult, IoBudget, staging_dir
from rillet.wire.batch import build_batch

T0 = 1_700_000_000_000


def cleaned_job(directory: Path) -> tuple[CleanJob, CleanResult]:
    """A job for a log of overwrites, and the result of running it (staged, not installed)."""
    log = PartitionLog.open(
        directory, LogConfig(segment_bytes=2048, cleanup_policy="compact"), T0, "t", 0
    )
    for i in range(200):
        log.append_as_leader(build_batch([(T0 + i, b"k%d" % (i % 7), b"v" * 20, None)]), 0, T0)
    job = job_for(log, T0 + 1000, map_max_bytes=1 << 20)
    assert job is not None
    sent = dataclasses.replace(job, sources=dict(job.sources))
    result = work(job, IoBudget(-1))  # closes the job's descriptors; ``sent`` names them still
    return sent, result


def test_a_job_round_trips(tmp_path: Path) -> None:
    job, _ = cleaned_job(tmp_path / "t-0")
    assert decode_job(encode_job(job, 8_000_000, 10)) == (job, 8_000_000.0, 10)
    assert decode_job(encode_job(job, -1, 0))[1:] == (-1.0, 0)


def test_an_answer_round_trips(tmp_path: Path) -> None:
    job, result = cleaned_job(tmp_path / "t-0")
    assert result.staged
    assert decode_answer(encode_result(result), job) == result


def test_a_failed_clean_answers_its_error(tmp_path: Path) -> None:
    job, _ = cleaned_job(tmp_path / "t-0")
    with pytest.raises(CleanerProcessError, match="CorruptLog: segment 0: bad CRC"):
        decode_answer(encode_failure(CorruptLog("segment 0: bad CRC")), job)


def _staged(doc: dict[str, Any], change: Callable[[list[Any]], None]) -> None:
    change(doc["staged"][0])


MUTATIONS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "version": (lambda d: d.update(version=2), "not a version 1 map"),
    "missing-field": (lambda d: d.pop("keys"), "keys is not int"),
    "bool-for-int": (lambda d: d.update(bytes_read=True), "bytes_read is not int"),
    "stats-short": (lambda d: d.update(stats=[1, 2]), "stats is not a list of integers"),
    "dirty-end-past-plan": (lambda d: d.update(dirty_end=10**9), "dirty end 1000000000 outside"),
    "unasked-segment": (
        lambda d: _staged(d, lambda s: s.__setitem__(0, s[0] + 1)),
        "is not one the job asked for",
    ),
    "wrong-sources": (
        lambda d: _staged(d, lambda s: s[3].pop()),
        "is not one the job asked for",
    ),
    "wrong-size": (
        lambda d: _staged(d, lambda s: s.__setitem__(2, s[2] + 1)),
        "bytes, not",
    ),
    "too-many": (lambda d: d["staged"].extend(d["staged"]), "staged segments, not"),
    "too-few": (lambda d: d["staged"].pop(), "staged segments, not"),
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_an_answer_the_job_could_not_have_is_refused(tmp_path: Path, mutation: str) -> None:
    job, result = cleaned_job(tmp_path / "t-0")
    change, error = MUTATIONS[mutation]
    doc = cbor2.loads(encode_result(result))
    change(doc)
    with pytest.raises(CleanerProcessError, match=error):
        decode_answer(cbor2.dumps(doc), job)


def test_a_staged_file_that_is_gone_is_refused(tmp_path: Path) -> None:
    job, result = cleaned_job(tmp_path / "t-0")
    for path in staging_dir(job.directory).glob("*.log"):
        path.unlink()
    with pytest.raises(CleanerProcessError, match="No such file"):
        decode_answer(encode_result(result), job)


@pytest.mark.parametrize("data", [b"", b"\xff\xfe", cbor2.dumps([1, 2]), b"garbage"])
def test_what_is_not_a_job_is_refused(data: bytes) -> None:
    with pytest.raises(CleanerProcessError, match="cleaner job"):
        decode_job(data)
