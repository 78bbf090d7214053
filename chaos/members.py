"""The consuming side of the workload: group member processes and a sampler of the group.

``MemberProcesses`` runs ``rillet.chaos.member_process`` children (or, with ``--client
kafka``, ``rillet.chaos.kafka_member_process``) and always stops them (``close``: SIGTERM,
then SIGKILL after a grace period); their files are read back as ``Received`` records.
``GroupSampler`` is a thread asking the coordinator, every ``interval_s``, for the group's
ownership (DescribeGroups; for Kafka classic-group members also their assignments, through
``ClassicGroupView``) and committed offsets (OffsetFetch), and records both in the history:
the checker looks for a partition with two owners in one sample and for committed offsets
that go backwards.
"""

from __future__ import annotations

import json
import logging
import signal
import subprocess
import sys
import threading
from pathlib import Path

from rillet.chaos import kafka_events
from rillet.chaos.errors import ChaosError
from rillet.chaos.final_state import Received
from rillet.chaos.history import HistoryWriter
from rillet.chaos.kafka_clients import ClassicGroupView
from rillet.client import BlockingAdmin
from rillet.client.errors import RilletError

log = logging.getLogger(__name__)
STOP_TIMEOUT_S = 15.0
NATIVE_MEMBER_MODULE = "rillet.chaos.member_process"
KAFKA_MEMBER_MODULE = "rillet.chaos.kafka_member_process"
SAMPLE_TIMEOUT_MS = 2_000


class MemberProcesses:
    def __init__(
        self,
        base_dir: Path,
        bootstrap: str,
        group: str,
        topic: str,
        t0: float,
        session_ms: int = 6_000,
        module: str = NATIVE_MEMBER_MODULE,
    ) -> None:
        self.base_dir = base_dir
        self._module = module
        self._bootstrap, self._group, self._topic = bootstrap, group, topic
        self._t0, self._session_ms = t0, session_ms
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        base_dir.mkdir(parents=True, exist_ok=True)

    def __enter__(self) -> MemberProcesses:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def out_file(self, name: str) -> Path:
        return self.base_dir / f"{name}.jsonl"

    def start(self, name: str) -> None:
        argv = [
            sys.executable,
            "-m",
            self._module,
            "--bootstrap",
            self._bootstrap,
            "--group",
            self._group,
            "--topic",
            self._topic,
            "--out",
            str(self.out_file(name)),
            "--name",
            name,
            "--session-ms",
            str(self._session_ms),
            "--t0",
            repr(self._t0),
        ]
        with open(self.base_dir / f"{name}.err", "ab") as err:
            self.procs[name] = subprocess.Popen(
                argv, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL
            )

    def exited(self) -> dict[str, int]:
        """Members that are no longer running, with their exit status."""
        return {n: p.returncode for n, p in self.procs.items() if p.poll() is not None}

    def close(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """SIGTERM every member (it commits and leaves), SIGKILL what overstays."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout_s)

    def received(self) -> list[Received]:
        out: list[Received] = []
        for name in sorted(self.procs):
            path = self.out_file(name)
            if not path.exists():
                continue
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut by SIGKILL
                if "o" in row:
                    out.append(Received(name, int(row["p"]), int(row["o"]), str(row["v"])))
        return out


class GroupSampler:
    """Samples the group's ownership and committed offsets into the history."""

    def __init__(
        self,
        bootstrap: str,
        group: str,
        topic: str,
        history: HistoryWriter,
        interval_s: float = 0.25,
        classic_group: bool = False,
    ) -> None:
        self._bootstrap, self._group, self._topic = bootstrap, group, topic
        self._classic_group = classic_group
        self._classic_view: ClassicGroupView | None = None
        self._history = history
        self._interval_s = interval_s
        self._stop = threading.Event()
        self.samples = 0
        self.failures = 0
        self._thread = threading.Thread(target=self._main, name="chaos-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout_s: float = 30.0) -> None:
        self._stop.set()
        self._thread.join(timeout_s)

    def _main(self) -> None:
        admin: BlockingAdmin | None = None
        try:
            while not self._stop.wait(self._interval_s):
                try:
                    if admin is None:
                        admin = BlockingAdmin(self._bootstrap, request_timeout_ms=SAMPLE_TIMEOUT_MS)
                    self._sample(admin)
                    self.samples += 1
                except (RilletError, ChaosError) as exc:
                    self.failures += 1
                    log.debug("group sample failed: %r", exc)
                    if admin is not None and self.failures % 10 == 0:
                        _close_quietly(admin)  # start afresh now and then
                        admin = None
        finally:
            if admin is not None:
                _close_quietly(admin)

    def _sample(self, admin: BlockingAdmin) -> None:
        if self._classic_group:
            self._sample_classic_group()
        else:
            self._sample_native_group(admin)
        offsets = admin.group_offsets(self._group)
        committed = {
            str(tp.partition): o for tp, o in offsets.items() if tp.topic == self._topic and o >= 0
        }
        self._history.write({"type": "offsets", "offsets": committed})

    def _sample_classic_group(self) -> None:
        """A classic group's assignments are its leader's bytes, which the native
        DescribeGroups does not list: ``ClassicGroupView`` reads and decodes them."""
        if self._classic_view is None:
            self._classic_view = ClassicGroupView(
                self._bootstrap, self._group, SAMPLE_TIMEOUT_MS / 1000
            )
        sample = self._classic_view.sample()
        if sample is not None:
            generation, members = sample
            self._history.write(kafka_events.group_sample(generation, members, self._topic))

    def _sample_native_group(self, admin: BlockingAdmin) -> None:
        group = admin.describe_group(self._group)
        owned = {
            m.member_id: sorted(
                p for tp in m.owned if tp.topic == self._topic for p in tp.partitions
            )
            for m in group.members
        }
        self._history.write({"type": "group", "generation": group.generation, "owned": owned})


def _close_quietly(admin: BlockingAdmin) -> None:
    try:
        admin.close()
    except RilletError as exc:
        log.debug("closing the sampler's admin: %r", exc)
