"""The real-Kafka launcher turns a missing Java, Maven or download into a one-line reason."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest
import real_kafka
from real_kafka import KafkaUnavailable, ensure_jars


def test_no_java_is_a_reason_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(KafkaUnavailable, match="java is not on PATH"):
        ensure_jars()


def test_no_maven_and_no_cache_is_a_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RILLET_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/java" if name == "java" else None)
    with pytest.raises(KafkaUnavailable, match="mvn is not on PATH"):
        ensure_jars("4.4.0")


def test_a_complete_cache_needs_no_maven(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RILLET_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/java" if name == "java" else None)
    jars = tmp_path / "kafka-4.4.0" / "jars"
    jars.mkdir(parents=True)
    (jars / real_kafka.COMPLETE_MARKER).write_text("4.4.0")
    assert ensure_jars("4.4.0") == jars


def test_a_failed_download_is_a_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RILLET_CACHE_DIR", str(tmp_path))
    fake_mvn = tmp_path / "mvn"
    fake_mvn.write_text("#!/bin/sh\necho 'Could not resolve dependencies'\nexit 1\n")
    fake_mvn.chmod(0o755)
    monkeypatch.setattr(
        shutil, "which", lambda name: "/usr/bin/java" if name == "java" else str(fake_mvn)
    )
    with pytest.raises(KafkaUnavailable, match="Could not resolve dependencies"):
        ensure_jars("4.4.0")
    assert not (tmp_path / "kafka-4.4.0" / "jars" / real_kafka.COMPLETE_MARKER).exists()


def test_a_failed_download_names_maven_s_error_not_its_colour_codes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RILLET_CACHE_DIR", str(tmp_path))
    fake_mvn = tmp_path / "mvn"
    fake_mvn.write_text(
        "#!/bin/sh\nprintf '\\033[0m[ERROR] Could not find artifact x:connect-file\\n'\n"
        "printf '[ERROR] Re-run Maven\\n\\033[0m\\033[0m\\n'\nexit 1\n"
    )
    fake_mvn.chmod(0o755)
    monkeypatch.setattr(
        shutil, "which", lambda name: "/usr/bin/java" if name == "java" else str(fake_mvn)
    )
    with pytest.raises(KafkaUnavailable) as raised:
        ensure_jars("4.4.0", artifact="connect-file")
    assert str(raised.value) == (
        "mvn could not fetch connect-file 4.4.0: [ERROR] Could not find artifact x:connect-file"
    )


def test_a_slow_download_is_a_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RILLET_CACHE_DIR", str(tmp_path))
    fake_mvn = tmp_path / "mvn"
    fake_mvn.write_text("#!/bin/sh\nexec sleep 30\n")
    fake_mvn.chmod(0o755)
    monkeypatch.setattr(
        shutil, "which", lambda name: "/usr/bin/java" if name == "java" else str(fake_mvn)
    )
    with pytest.raises(KafkaUnavailable, match="took over 0s"):
        ensure_jars("4.4.0", timeout_s=0.2)


def test_cluster_ids_are_kafka_s_base64_uuids() -> None:
    cluster_id = real_kafka.kafka_cluster_id()
    assert len(cluster_id) == 22
    assert len(base64.urlsafe_b64decode(cluster_id + "==")) == 16
