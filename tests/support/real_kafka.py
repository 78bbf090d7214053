"""A real Apache Kafka 4.x broker (single-node KRaft) for differential tests and benchmarks.

The broker's jars come from Maven Central through ``mvn dependency:copy-dependencies`` run on
a throwaway pom in a cache directory outside the repository
(``~/.cache/rillet/kafka-<version>/``, or ``$RILLET_CACHE_DIR/kafka-<version>/``; Kafka's
command-line tools in ``kafka-tools-<version>/`` beside it), so the download happens once per
machine. ``ensure_jars`` raises ``KafkaUnavailable`` with a
one-line reason when Java, Maven or Maven Central is missing, or when the download does not
finish within its time limit: callers turn that into a skip, never a failure.

``RealKafka`` writes a ``server.properties`` for one process that is both broker and
controller (listeners on 127.0.0.1, free ports picked at start), formats the storage with
Kafka's StorageTool and runs ``kafka.Kafka``; it waits for the broker's port and its
"started" log line with a deadline, and always stops the process. Standard library only.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

KAFKA_VERSION = "4.4.0"
LOG4J_VERSION = "2.24.3"
SLF4J_VERSION = "2.0.16"  # log4j's SLF4J 2 binding needs the SLF4J 2 API (Kafka pins 1.7)
DOWNLOAD_TIMEOUT_S = 240.0
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 20.0
POLL_S = 0.1
HOST = "127.0.0.1"
COMPLETE_MARKER = ".complete"

_POM = """\
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>rillet.cache</groupId>
  <artifactId>kafka-jars</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId><artifactId>{artifact}</artifactId>
      <version>{kafka}</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>{slf4j}</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j2-impl</artifactId>
      <version>{log4j}</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId>
      <version>{log4j}</version>
    </dependency>
  </dependencies>
</project>
"""

_LOG4J2 = """\
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = {path}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = {level}
rootLogger.appenderRef.file.ref = file
"""

# Settings for a one-node test broker: nothing replicated more than once, rebalances start
# at once, and the broker's defaults otherwise (so differences to rillet are Kafka's own).
_SERVER_PROPERTIES = """\
process.roles=broker,controller
node.id={node_id}
controller.quorum.voters={voters}
listeners=PLAINTEXT://{host}:{port},CONTROLLER://{host}:{controller_port}
advertised.listeners=PLAINTEXT://{host}:{port}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs={log_dirs}
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
"""


class KafkaUnavailable(Exception):
    """A real Kafka broker cannot be had here; the message says why, in one line."""


def cache_root() -> Path:
    env = os.environ.get("RILLET_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "rillet"


BROKER_ARTIFACT = "kafka_2.13"
TOOLS_ARTIFACT = "kafka-tools"  # kafka-topics, console producer and consumer, group tools


def ensure_jars(
    version: str = KAFKA_VERSION,
    timeout_s: float = DOWNLOAD_TIMEOUT_S,
    artifact: str = BROKER_ARTIFACT,
) -> Path:
    """The directory holding the jars of Kafka's ``artifact`` (the broker by default) and
    its dependencies, downloading them first if the cache lacks them."""
    if shutil.which("java") is None:
        raise KafkaUnavailable("java is not on PATH (a real Kafka broker needs Java 17)")
    name = "kafka" if artifact == BROKER_ARTIFACT else artifact
    home = cache_root() / f"{name}-{version}"
    jars = home / "jars"
    if (jars / COMPLETE_MARKER).exists():
        return jars
    mvn = shutil.which("mvn")
    if mvn is None:
        raise KafkaUnavailable("mvn is not on PATH (it downloads Kafka's jars)")
    home.mkdir(parents=True, exist_ok=True)
    pom = _POM.format(artifact=artifact, kafka=version, log4j=LOG4J_VERSION, slf4j=SLF4J_VERSION)
    (home / "pom.xml").write_text(pom)
    log = home / "mvn.log"
    cmd = [
        mvn,
        "-q",
        "-B",
        "-f",
        str(home / "pom.xml"),
        "dependency:copy-dependencies",
        f"-DoutputDirectory={jars}",
        "-DincludeScope=runtime",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise KafkaUnavailable(
                f"downloading Kafka {version} from Maven Central took over {timeout_s:.0f}s"
            ) from None
    if rc != 0 or not any(jars.glob(f"{artifact}-{version}.jar")):
        raise KafkaUnavailable(f"mvn could not fetch {artifact} {version}: {_mvn_reason(log)}")
    (jars / COMPLETE_MARKER).write_text(version)
    return jars


def _mvn_reason(log: Path) -> str:
    """The first error line of Maven's output (its last line is often only colour codes)."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", log.read_text(errors="replace"))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("[ERROR]")]
    return ((errors or lines)[:1] or ["no output"])[0][:200]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


# JVM options: "test" starts fast and small (differential tests); "bench" is what Kafka's
# own start script uses (1 GB heap, G1, the full JIT), for side-by-side measurements.
JVM_OPTIONS = {
    "test": ["-Xms256m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"],
    "bench": [
        "-Xms1g",
        "-Xmx1g",
        "-server",
        "-XX:+UseG1GC",
        "-XX:MaxGCPauseMillis=20",
        "-XX:InitiatingHeapOccupancyPercent=35",
        "-XX:+ExplicitGCInvokesConcurrent",
    ],
}


class RealKafka:
    """One KRaft process (broker and controller) on 127.0.0.1; use as a context manager.

    Alone by default (its own one-voter quorum); ``real_kafka_cluster`` passes the node id,
    ports, voters and cluster id of one member of a larger cluster.
    """

    def __init__(
        self,
        jars: Path,
        work_dir: Path | None = None,
        log_level: str = "INFO",
        properties: dict[str, str] | None = None,
        jvm: str = "test",
        node_id: int = 1,
        ports: tuple[int, int] | None = None,  # (broker port, controller port)
        voters: str | None = None,
        cluster_id: str | None = None,
    ) -> None:
        self.jars = jars
        self.properties = properties or {}  # added to (or overriding) the generated file
        self._own_dir = work_dir is None
        self.work_dir = work_dir or Path(tempfile.mkdtemp(prefix="rillet-real-kafka-"))
        self.log_level = log_level
        self.jvm_options = JVM_OPTIONS[jvm]
        self.node_id = node_id
        self.port, self.controller_port = ports or (-1, -1)
        self.voters = voters
        self.cluster_id = cluster_id or ""
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.work_dir / "server.log"

    def __enter__(self) -> RealKafka:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _java(self, main: str, *args: str) -> list[str]:
        log4j = self.work_dir / "log4j2.properties"
        return [
            "java",
            *self.jvm_options,
            f"-Dlog4j2.configurationFile=file:{log4j}",
            "-cp",
            f"{self.jars}/*",
            main,
            *args,
        ]

    def start(self) -> RealKafka:
        self.launch()
        self.wait_started()
        return self

    def launch(self) -> None:
        """Format the storage and start the process, without waiting for it to serve (the
        members of a cluster start together: none serves before a quorum is up)."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        (self.work_dir / "log4j2.properties").write_text(
            _LOG4J2.format(path=self.log_path, level=self.log_level)
        )
        if self.port < 0:
            self.port, self.controller_port = free_port(), free_port()
        props = self.work_dir / "server.properties"
        props.write_text(
            _SERVER_PROPERTIES.format(
                host=HOST,
                node_id=self.node_id,
                voters=self.voters or f"{self.node_id}@{HOST}:{self.controller_port}",
                port=self.port,
                controller_port=self.controller_port,
                log_dirs=self.work_dir / "data",
            )
            + "".join(f"{k}={v}\n" for k, v in self.properties.items())
        )
        self.cluster_id = self.cluster_id or kafka_cluster_id()
        fmt = subprocess.run(
            self._java(
                "kafka.tools.StorageTool",
                "format",
                f"--cluster-id={self.cluster_id}",
                "--config",
                str(props),
            ),
            check=False,
            capture_output=True,
            timeout=START_TIMEOUT_S,
        )
        if fmt.returncode != 0:
            raise RuntimeError(f"kafka storage format failed: {fmt.stderr.decode()[-500:]}")
        out = open(self.work_dir / "stdout.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            self._java("kafka.Kafka", str(props)),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        out.close()

    def wait_started(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"kafka exited with {self.proc.returncode}: {self.log_tail()}")
            if self._port_open() and "Kafka Server started" in self._log_text():
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"kafka not started in {START_TIMEOUT_S}s: {self.log_tail()}")
            time.sleep(POLL_S)

    def _port_open(self) -> bool:
        try:
            with socket.create_connection((HOST, self.port), timeout=1):
                return True
        except OSError:
            return False

    def _log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, lines: int = 30) -> str:
        text = self._log_text() or (self.work_dir / "stdout.log").read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self._own_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)


def kafka_cluster_id() -> str:
    """A Kafka cluster id: 16 random bytes in URL-safe base64 without padding.

    One that starts with "-" is drawn again, as Kafka's own ``random-uuid`` does: a command
    line would read it as an option (the storage tool failed on one in CI)."""
    import base64

    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def main() -> int:
    """``python tests/support/real_kafka.py``: run a broker until Ctrl-C (for benchmarks)."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--version", default=KAFKA_VERSION)
    args = parser.parse_args()
    try:
        jars = ensure_jars(args.version)
    except KafkaUnavailable as exc:
        print(f"error: {exc}")
        return 1
    with RealKafka(jars) as kafka:
        print(f"kafka bootstrap servers: {kafka.bootstrap}", flush=True)
        try:
            kafka.proc.wait() if kafka.proc is not None else None
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
