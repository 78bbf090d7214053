"""A hand-driven cluster of Raft cores, for tests that need one exact interleaving.

Messages move only when the test says so: ``deliver_round`` delivers what is queued now
(replies wait for the next round), ``deliver`` repeats rounds until nothing moves. Storage is
a ``MemoryStorage`` per node that a Ready is written to in full before its messages leave, so
"processed" means "durable"; ``crash`` forgets a node's unprocessed Ready and its volatile
state, ``restart`` rebuilds the core from what was persisted. Partitions block directions
between pairs of nodes. Everything that happens is logged as text lines that golden files
compare against.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from rillet.raft.core import RaftCore
from rillet.raft.core_config import Config
from rillet.raft.core_errors import CoreContractError
from rillet.raft.log_storage import MemoryStorage
from rillet.raft.membership import Configuration
from rillet.raft.messages import LogEntry, Message, describe, entry_text
from rillet.raft.quorum import Snapshot
from rillet.raft.ready import Ready, Role


class LockstepCluster:
    def __init__(
        self,
        voters: Iterable[int],
        config: Config | None = None,
        seed: int = 0,
        core_type: type[RaftCore] = RaftCore,
        nodes: int | None = None,
        directories: bool = False,
    ):
        """``voters`` is the bootstrap voter set; nodes ``1..nodes`` (default: the voters)
        all run, those outside the voter set as observers. With ``directories`` every node
        has a directory id (``wipe`` draws a new one)."""
        self.voters = sorted(set(voters))
        self.nodes = sorted(set(self.voters) | set(range(1, (nodes or 0) + 1)))
        self.directories = directories
        self.wipes = dict.fromkeys(self.nodes, 0)
        self.config = config or Config()
        self.core_type = core_type
        self.seed = seed
        self.storages = {n: MemoryStorage() for n in self.nodes}
        self.cores: dict[int, RaftCore | None] = {}
        # Each node's state machine, as the list of applied entries (no-ops included).
        self.applied: dict[int, list[LogEntry]] = {}
        self.queue: list[Message] = []
        self.blocked: set[tuple[int, int]] = set()
        self.output: list[str] = []
        # Off: only events (roles, applies, reads, crashes) are logged, not every message.
        self.log_messages = True
        self.restarts = dict.fromkeys(self.nodes, 0)
        for node in self.nodes:
            self._start(node)

    # -- nodes --------------------------------------------------------------------------

    def _start(self, node: int) -> None:
        storage = self.storages[node]
        rng = random.Random(f"{self.seed}/{node}/{self.restarts[node]}")
        self.cores[node] = self.core_type(
            node,
            self.voters,
            storage,
            self.config,
            rng,
            directory_id=self.directory_id(node),
            observers=self.nodes,
        )
        snapshot = storage.snapshot()
        self.applied[node] = [] if snapshot.index == 0 else self._from_snapshot(snapshot)

    @staticmethod
    def _from_snapshot(snapshot: Snapshot) -> list[LogEntry]:
        """The state machine a snapshot restores: placeholders up to its index."""
        return [LogEntry(i, 0, b"<snapshot>") for i in range(1, snapshot.index + 1)]

    def directory_id(self, node: int) -> str:
        """A readable stand-in for the UUID drawn at format time: node, then format count."""
        if not self.directories:
            return ""
        return f"{node:04x}{self.wipes.get(node, 0):04x}".ljust(32, "0")

    def wipe(self, node: int) -> None:
        """The node's disk is replaced: it restarts empty, under a new directory id."""
        if self.cores[node] is not None:
            self.crash(node)
        self.storages[node] = MemoryStorage()
        self.wipes[node] += 1
        self.output.append(f"n{node} wiped (directory {self.directory_id(node)[:8]})")
        self.restart(node)

    def core(self, node: int) -> RaftCore:
        core = self.cores[node]
        if core is None:
            raise CoreContractError(f"node {node} is down")
        return core

    def up(self, node: int) -> bool:
        return self.cores[node] is not None

    def crash(self, node: int) -> None:
        self.cores[node] = None
        self.output.append(f"n{node} crashed")

    def restart(self, node: int) -> None:
        if self.cores[node] is not None:
            raise CoreContractError(f"node {node} is running")
        self.restarts[node] += 1
        self._start(node)
        self.output.append(f"n{node} restarted")

    # -- network ------------------------------------------------------------------------

    def partition(self, *groups: Iterable[int]) -> None:
        """Nodes talk only within their group; nodes in no group are cut off from all."""
        group_of = {n: i for i, group in enumerate(groups) for n in group}
        self.blocked = {
            (a, b)
            for a in self.nodes
            for b in self.nodes
            if a != b and (a not in group_of or group_of.get(b) != group_of[a])
        }

    def cut(self, sender: int, recipient: int) -> None:
        """Block one direction only."""
        self.blocked.add((sender, recipient))

    def heal(self) -> None:
        self.blocked.clear()

    # -- driving ------------------------------------------------------------------------

    def process(self) -> None:
        """Carry out every pending Ready: persist, queue messages, apply, advance."""
        for node in self.nodes:
            core = self.cores[node]
            while core is not None and core.has_ready():
                self._handle_ready(node, core, core.ready())

    def _handle_ready(self, node: int, core: RaftCore, ready: Ready) -> None:
        storage = self.storages[node]
        if ready.snapshot is not None:
            storage.apply_snapshot(ready.snapshot)
            self.applied[node] = self._from_snapshot(ready.snapshot)
            self.output.append(f"n{node} installed snapshot {ready.snapshot.index}")
        if ready.compaction is not None:
            storage.apply_snapshot(ready.compaction)
            self.output.append(f"n{node} compacted through {ready.compaction.index}")
        storage.append(ready.entries)
        if ready.hard_state is not None:
            storage.set_hard_state(ready.hard_state)
        if ready.soft_state is not None:
            leader = ready.soft_state.leader_id
            self.output.append(
                f"n{node} is {ready.soft_state.role.value} in term {core.term}"
                + (f" (leader n{leader})" if leader is not None and leader != node else "")
            )
        self.queue.extend(ready.messages)
        if ready.committed_entries:
            self.applied[node].extend(ready.committed_entries)
            shown = " ".join(entry_text(e) for e in ready.committed_entries)
            self.output.append(f"n{node} applied {shown}")
        for read in ready.read_states:
            self.output.append(f"n{node} read ready ctx={read.context!r} index={read.index}")
        core.advance(ready)

    def deliver_round(self) -> int:
        """Deliver the messages queued now; their answers wait for the next round."""
        self.process()
        batch, self.queue = self.queue, []
        for message in batch:
            if self.log_messages:
                self.output.append(describe(message) + self._fate(message))
            core = self.cores[message.recipient]
            if core is not None and (message.sender, message.recipient) not in self.blocked:
                core.step(message)
        self.process()
        return len(batch)

    def _fate(self, message: Message) -> str:
        if (message.sender, message.recipient) in self.blocked:
            return "  (dropped: partition)"
        if self.cores[message.recipient] is None:
            return "  (dropped: recipient down)"
        return ""

    def deliver(self, max_rounds: int = 1000) -> None:
        for _ in range(max_rounds):
            if not self.deliver_round():
                return
        raise CoreContractError(f"messages still flowing after {max_rounds} rounds")

    def elect(self, node: int) -> RaftCore:
        """Make ``node`` campaign and deliver until the election is over; it must win."""
        self.core(node).campaign()
        self.deliver()
        core = self.core(node)
        if core.role is not Role.LEADER:
            raise CoreContractError(f"node {node} did not win: {core.status()}")
        return core

    def tick(self, node: int, times: int = 1) -> None:
        for _ in range(times):
            self.core(node).tick()
        self.process()

    def run(self, ticks: int) -> None:
        """Let time pass on a quiet network: each tick, tick every live node once and
        deliver until nothing moves."""
        for _ in range(ticks):
            for node in self.nodes:
                if self.up(node):
                    self.core(node).tick()
            self.deliver()

    def take_output(self) -> list[str]:
        lines, self.output = self.output, []
        return lines

    def drop_queued(self) -> int:
        dropped = len(self.queue)
        self.queue = []
        return dropped

    # -- observation --------------------------------------------------------------------

    def leader(self) -> int | None:
        leaders = [n for n in self.nodes if self.up(n) and self.core(n).role is Role.LEADER]
        return max(leaders, key=lambda n: self.core(n).term) if leaders else None

    def status_lines(self) -> list[str]:
        lines = []
        for node in self.nodes:
            core = self.cores[node]
            if core is None:
                lines.append(f"n{node}: down")
                continue
            status = core.status()
            lead = f"n{status.leader_id}" if status.leader_id is not None else "-"
            vote = f"n{status.vote}" if status.vote is not None else "-"
            lines.append(
                f"n{node}: {status.role.value} term={status.term} vote={vote} lead={lead} "
                f"commit={status.commit_index} applied={status.applied_index} "
                f"log={status.first_index}..{status.last_index}/t{status.last_term}"
                + (f" transferring-to=n{status.transferring_to}" if status.transferring_to else "")
                + (
                    f" config={status.configuration}@{status.configuration_index}"
                    if status.configuration != Configuration.of(self.voters).describe()
                    or len(self.nodes) > len(self.voters)
                    else ""
                )
                + (f" catching-up=n{core.catching_up.node_id}" if core.catching_up else "")
                + (f" gave-up-on=n{core.catch_up_failed.node_id}" if core.catch_up_failed else "")
            )
            for peer, text in status.progress.items():
                lines.append(f"  progress n{peer}: {text}")
        return lines

    def log_lines(self, node: int) -> list[str]:
        log = self.core(node).raft_log
        first = log.first_index()
        snapshot = log.snapshot()
        head = [f"snapshot {snapshot.index}/t{snapshot.term}"] if snapshot.index else []
        entries = log.slice(first, log.last_index() + 1)
        return [*head, " ".join(entry_text(e) for e in entries) or "(empty)"]
