"""Kafka Streams and Kafka Connect, run unchanged on Kafka 4.4 and on rillet alike.

- Kafka Streams' WordCount (java/WordCount.java, compiled with javac at test time against
  the cached ``kafka-streams`` jars) with ``processing.guarantee=exactly_once_v2``: the
  counts read back with read_committed are exact and the same on both brokers, also when the
  Streams instance is killed with SIGKILL mid-run and started again.
- Kafka Connect in distributed mode (``ConnectDistributed``, creating its compacted config,
  offset and status topics itself) moves a file through the broker with a file source and a
  file sink connector (our own, java/connect/, compiled at test time against the worker's
  connect-api: Apache's connect-file jar of 4.4.0 is not on Maven Central, and 4.1.0's
  does not load on a 4.4 worker): the sink file equals the source file.

Each starts JVMs for tens of seconds, so the module runs only with
``RILLET_ECOSYSTEM_TESTS=1``; without Java, Maven or the artifacts on Maven Central it is
skipped with the reason (jars are cached under ~/.cache/rillet, never in the repository).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from broker_pair import Broker
from real_kafka import KafkaUnavailable, ensure_jars

pytestmark = pytest.mark.skipif(
    os.environ.get("RILLET_ECOSYSTEM_TESTS") != "1",
    reason="JVM apps, minutes: run with RILLET_ECOSYSTEM_TESTS=1",
)

JAVA_DIR = Path(__file__).parent / "java"
TIMEOUT_S = 120.0
POLL_S = 0.2
PARTITIONS = 2
WORDS = [f"w{i:02d}" for i in range(40)]


class App:
    """A JVM process in its own session, stopped (SIGKILL at the latest) when the test ends."""

    def __init__(self, cmd: list[str], log: Path) -> None:
        self.log = log
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def check_alive(self) -> None:
        assert self.proc.poll() is None, f"exited with {self.proc.returncode}:\n{self.tail()}"


def _jars_or_skip(artifact: str) -> Path:
    try:
        return ensure_jars(artifact=artifact)
    except KafkaUnavailable as exc:
        pytest.skip(f"no {artifact} jars: {exc}")


def _java(work: Path, log_level: str) -> list[str]:
    """A small, fast-starting JVM logging to stdout, up to its ``-cp`` (the caller adds the
    class path and what follows)."""
    log4j = work / "log4j2.properties"
    log4j.write_text(
        "status = error\nappender.out.type = Console\nappender.out.name = out\n"
        "appender.out.layout.type = PatternLayout\n"
        "appender.out.layout.pattern = [%d] %p %m (%c)%n\n"
        f"rootLogger.level = {log_level}\nrootLogger.appenderRef.out.ref = out\n"
    )
    jvm = ["-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
    return ["java", *jvm, f"-Dlog4j2.configurationFile=file:{log4j}", "-cp"]


@pytest.fixture(scope="module")
def word_count(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The java command line that runs WordCount (without its arguments)."""
    jars = _jars_or_skip("kafka-streams")
    classes = tmp_path_factory.mktemp("word-count-classes")
    done = subprocess.run(
        ["javac", "-cp", f"{jars}/*", "-d", str(classes), str(JAVA_DIR / "WordCount.java")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [*_java(classes, "WARN"), f"{classes}:{jars}/*", "WordCount"]


def _create_topics(broker: Broker, *topics: str, partitions: int = PARTITIONS) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    rf = broker.replication_factor
    new = [NewTopic(t, partitions, replication_factor=rf) for t in topics]
    for future in admin.create_topics(new).values():
        future.result(30)


def _lines(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS).upper() for _ in range(8)) for _ in range(count)]


def _produce(broker: Broker, topic: str, lines: list[str]) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True})
    for n, line in enumerate(lines):
        producer.produce(topic, key=str(n).encode(), value=line.encode())
    assert producer.flush(30) == 0


class Counts:
    """The WordCount output read with read_committed: every count seen per word, in order."""

    def __init__(self, broker: Broker, topic: str) -> None:
        from confluent_kafka import Consumer, TopicPartition

        self.consumer = Consumer(
            {
                "bootstrap.servers": broker.bootstrap,
                "group.id": f"{topic}-reader",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
            }
        )
        self.consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        self.seen: dict[str, list[int]] = {}

    def poll(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            msg = self.consumer.poll(POLL_S)
            if msg is None or msg.error() is not None:
                continue
            word = msg.key().decode()
            self.seen.setdefault(word, []).append(int.from_bytes(msg.value(), "big", signed=True))

    def latest(self) -> dict[str, int]:
        return {word: counts[-1] for word, counts in self.seen.items()}

    def wait_for(self, expected: dict[str, int], app: App) -> None:
        deadline = time.monotonic() + TIMEOUT_S
        while self.latest() != expected and time.monotonic() < deadline:
            app.check_alive()
            self.poll(1.0)
        assert self.latest() == expected, app.tail()

    def close(self) -> None:
        self.consumer.close()


@pytest.fixture
def apps() -> Iterator[list[App]]:
    started: list[App] = []
    yield started
    for app in started:
        app.kill()


def _run_word_count(
    broker: Broker, topic: str, cmd: list[str], tmp_path: Path, apps: list[App], kill: bool
) -> tuple[dict[str, int], dict[str, list[int]]]:
    """(the final counts, every count seen per word) on one broker; with ``kill`` the
    instance is killed once its first counts are committed, half the text still to come."""
    source, sink = f"{topic}-{broker.name}-text", f"{topic}-{broker.name}-counts"
    _create_topics(broker, source, sink)
    first, second = _lines(39, 300), _lines(40, 300)
    expected = dict(Counter(w.lower() for line in first + second for w in line.split()))
    state = tmp_path / f"state-{broker.name}"
    args = [broker.bootstrap, f"{topic}-{broker.name}-app", source, sink, str(state)]
    log = tmp_path / f"streams-{broker.name}.log"
    counts = Counts(broker, sink)
    try:
        _produce(broker, source, first)
        apps.append(App(cmd + args, log))
        if kill:
            deadline = time.monotonic() + TIMEOUT_S
            while not counts.seen and time.monotonic() < deadline:
                apps[-1].check_alive()
                counts.poll(0.5)
            assert counts.seen, apps[-1].tail()
            apps[-1].kill(signal.SIGKILL)
        _produce(broker, source, second)
        if kill:
            apps.append(App(cmd + args, log))
        counts.wait_for(expected, apps[-1])
        apps[-1].kill(signal.SIGTERM)
        counts.poll(1.0)  # nothing more may come: a late duplicate would show here
        return counts.latest(), counts.seen
    finally:
        counts.close()


@pytest.mark.parametrize("kill", [False, True], ids=["steady", "killed"])
def test_streams_exactly_once_word_count(
    brokers: list[Broker],
    word_count: list[str],
    topic: str,
    tmp_path: Path,
    apps: list[App],
    kill: bool,
) -> None:
    final: dict[str, dict[str, int]] = {}
    for broker in brokers:
        latest, seen = _run_word_count(broker, topic, word_count, tmp_path, apps, kill)
        # Exactly once: each word's committed counts only grow, none past the true count.
        for word, counts in seen.items():
            assert counts == sorted(set(counts)), (broker.name, word, counts)
        final[broker.name] = latest
    assert final["rillet"] == final["kafka"]


# Maven Central has no connect-file 4.4.0 here (4.3.0 and 4.2.0 did not resolve within the
# download timeout), and Apache's FileStream connectors of 4.1.0 fail on a 4.4 worker
# (NoClassDefFoundError: org.apache.kafka.common.utils.AppInfoParser). The pipeline runs
# our own minimal line-file connectors (java/connect/), compiled at test time against the
# worker's connect-api.
FILE_SOURCE = "rillet.connect.LineFileSource"
FILE_SINK = "rillet.connect.LineFileSink"
CONNECT_MAIN = "org.apache.kafka.connect.cli.ConnectDistributed"


@pytest.fixture(scope="module")
def connect_runtime(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The java command line of a Connect worker (without its properties file)."""
    jars = _jars_or_skip("connect-runtime")
    # INFO: the worker's "Joined group" line says it is up.
    return [*_java(tmp_path_factory.mktemp("connect"), "INFO"), f"{jars}/*"]


@pytest.fixture(scope="module")
def line_file_connectors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The classes of java/connect/ (the file source and sink connectors), compiled."""
    jars = _jars_or_skip("connect-runtime")
    classes = tmp_path_factory.mktemp("line-file-connectors")
    done = subprocess.run(
        [
            "javac",
            "-cp",
            f"{jars}/*",
            "-d",
            str(classes),
            *map(str, (JAVA_DIR / "connect").glob("*.java")),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return classes


def _rest(port: int, method: str, path: str, body: object = None) -> tuple[int, object]:
    """One call to the worker's REST API: (HTTP status, decoded JSON or None)."""
    import json
    import urllib.error
    import urllib.request

    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=data,
        method=method,
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw = resp.read()
            return resp.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as exc:
        return exc.code, None
    except OSError:
        return 0, None  # not listening yet


def _start_worker(
    broker: Broker, name: str, cmd: list[str], tmp_path: Path, apps: list[App]
) -> tuple[App, int]:
    """A distributed worker whose config, offset and status topics it creates itself."""
    from real_kafka import free_port

    port = free_port()
    rf = broker.replication_factor
    props = tmp_path / f"{name}-worker.properties"
    props.write_text(
        f"bootstrap.servers={broker.bootstrap}\n"
        f"group.id={name}-connect\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
        f"config.storage.topic={name}-configs\nconfig.storage.replication.factor={rf}\n"
        f"offset.storage.topic={name}-offsets\noffset.storage.replication.factor={rf}\n"
        f"offset.storage.partitions={PARTITIONS}\n"
        f"status.storage.topic={name}-status\nstatus.storage.replication.factor={rf}\n"
        f"status.storage.partitions={PARTITIONS}\n"
        "offset.flush.interval.ms=500\n"
        f"listeners=http://127.0.0.1:{port}\n"
    )
    app = App([*cmd, CONNECT_MAIN, str(props)], tmp_path / f"{name}-connect.log")
    apps.append(app)
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        app.check_alive()
        joined = "Joined group at generation" in app.log.read_text(errors="replace")
        if joined and _rest(port, "GET", "/connectors")[0] == 200:
            return app, port
        time.sleep(POLL_S)
    raise AssertionError(f"the Connect worker did not join its group:\n{app.tail()}")


def _topic_configs(broker: Broker, topics: list[str]) -> dict[str, str]:
    from confluent_kafka.admin import AdminClient, ConfigResource

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    found = admin.describe_configs([ConfigResource("topic", t) for t in topics])
    return {
        res.name: str(future.result(30)["cleanup.policy"].value) for res, future in found.items()
    }


def test_connect_worker_creates_compacted_topics_and_joins(
    brokers: list[Broker], connect_runtime: list[str], topic: str, tmp_path: Path, apps: list[App]
) -> None:
    """A distributed worker starts on both: it creates its three internal topics compacted
    (and checks they are), reads them back and joins its group."""
    policies: dict[str, dict[str, str]] = {}
    for broker in brokers:
        name = f"{topic}-{broker.name}"
        app, _ = _start_worker(broker, name, connect_runtime, tmp_path, apps)
        internal = [f"{name}-configs", f"{name}-offsets", f"{name}-status"]
        policies[broker.name] = _topic_configs(broker, internal)
        assert set(policies[broker.name].values()) == {"compact"}, policies
        app.kill(signal.SIGTERM)
    assert len(policies["rillet"]) == len(policies["kafka"]) == 3


def test_connect_file_pipeline(
    brokers: list[Broker],
    connect_runtime: list[str],
    line_file_connectors: Path,
    topic: str,
    tmp_path: Path,
    apps: list[App],
) -> None:
    """A file source connector reads a file into a topic, a file sink connector writes it
    out (our own line-file connectors, java/connect/): the sink file equals the source file
    on both brokers."""
    cmd = [*connect_runtime[:-1], f"{connect_runtime[-1]}:{line_file_connectors}"]
    text = "".join(f"{line}\n" for line in _lines(41, 500))
    copies: dict[str, str] = {}
    for broker in brokers:
        name = f"{topic}-{broker.name}"
        _create_topics(broker, name, partitions=1)  # one partition: the file's order holds
        source, sink = tmp_path / f"{name}-in.txt", tmp_path / f"{name}-out.txt"
        source.write_text(text)
        app, port = _start_worker(broker, name, cmd, tmp_path, apps)
        connectors = {
            f"{name}-source": {"connector.class": FILE_SOURCE, "file": str(source), "topic": name},
            f"{name}-sink": {"connector.class": FILE_SINK, "file": str(sink), "topics": name},
        }
        for connector, config in connectors.items():
            body = {"name": connector, "config": {"tasks.max": "1", **config}}
            deadline = time.monotonic() + TIMEOUT_S
            while _rest(port, "POST", "/connectors", body)[0] != 201:
                app.check_alive()  # 409 while the group rebalances: ask again
                assert time.monotonic() < deadline, app.tail()
                time.sleep(POLL_S)
        deadline = time.monotonic() + TIMEOUT_S
        while (not sink.exists() or sink.read_text() != text) and time.monotonic() < deadline:
            app.check_alive()
            time.sleep(POLL_S)
        copies[broker.name] = sink.read_text() if sink.exists() else ""
        assert copies[broker.name] == text, app.tail()
        app.kill(signal.SIGTERM)
    assert copies["rillet"] == copies["kafka"]
