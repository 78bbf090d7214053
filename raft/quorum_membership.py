"""The driver's side of voter changes in our own engine: who the transport talks to, and
the add/remove requests that wait for their configuration entry to commit.

The core decides (raft/membership_change.py: one server at a time, catch up first, an entry
of the leader's term committed before any change); this module only keeps the transport's
links in line with what the core decided and turns a request into "committed" or an error:

* Addresses: a node's configured voters (``quorum.voters``: the bootstrap set, also how an
  observer first reaches the cluster), the observers this leader was told of (a node being
  added), and the addresses every voter added at run time carries in the configuration entry
  itself, so each replica learns them from its log and finds them again after a restart.
* Links: to every voter of the configuration in effect and every observer; a voter removed
  from the configuration loses its link with the next Ready. A node that is not a voter
  accepts connections from every replica it knows of and dials only those that reached it
  (the leader catching it up), so it is not turned away while nobody has added it.
* A request succeeds when the configuration entry that carries it is committed on this
  (leader) node, and fails with the core's refusal, when the replica could not catch up, when
  leadership moves, or after ``timeout_s`` (outcome unknown: DescribeQuorum tells).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import trio

from rillet.raft.core import RaftCore
from rillet.raft.errors import NotLeaderError, ProposalOutcomeUnknown, RaftError
from rillet.raft.membership import MAX_VOTERS, Configuration
from rillet.raft.quorum import ReplicaProgress
from rillet.raft.ready import Role
from rillet.raft.transport import PeerAddress, RaftTransport


class VoterChangeFailed(RaftError):
    """The replica being added did not catch up in time, or the change was overtaken."""


def address_text(address: PeerAddress) -> str:
    return f"{address.host}:{address.port}"


def parse_peer_address(text: str) -> PeerAddress | None:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return PeerAddress(host, int(port))


def parse_raft_address(text: str) -> PeerAddress:
    address = parse_peer_address(text)
    if address is None:
        raise VoterChangeFailed(f"a Raft address is host:port, got {text!r}")
    return address


class QuorumMembership:
    def __init__(
        self,
        core: RaftCore,
        transport: RaftTransport,
        configured: Mapping[int, PeerAddress],
        timeout_s: float,
        tick_ms: int,
    ) -> None:
        self._core = core
        self._transport = transport
        self._configured = dict(configured)
        self._observers: dict[int, PeerAddress] = {}
        self._timeout_s = timeout_s
        self._tick_ms = tick_ms
        self._seen: tuple[Configuration, frozenset[int]] | None = None
        self._changed = trio.Event()
        self._heard: set[int] = set()  # replicas that sent us something (observer mode)

    # -- links ----------------------------------------------------------------------------

    def addresses(self) -> dict[int, PeerAddress]:
        """Every replica this node knows how to reach, the newest address winning."""
        known = self._voter_addresses()
        known.update(self._observers)
        return known

    def _voter_addresses(self) -> dict[int, PeerAddress]:
        """The configured voters, and the voters added at run time at the address their
        configuration entry carries."""
        known = dict(self._configured)
        for voter in self._core.configuration().voters:
            address = parse_peer_address(voter.raft_address)
            if address is not None:
                known[voter.node_id] = address
        return known

    def sync(self) -> None:
        """After every Ready: links follow the configuration in effect and the observers."""
        configuration = self._core.configuration()
        observers = frozenset(self._observers)
        seen = self._seen
        if seen is not None and seen[0] is configuration and seen[1] == observers:
            self._wake()
            return
        self._seen = (configuration, observers)
        wanted = set(configuration.ids()) | observers
        if not self._core.is_voter():
            # An observer answers whoever replicates to it, and dials nobody before: until a
            # leader adds it, the voters would only turn its connections away.
            wanted = (wanted & self._heard) | observers
        known = self.addresses()
        self._transport.set_peers({n: known[n] for n in wanted if n in known}, accept=known)
        self._wake()

    def heard(self, peer: int) -> None:
        """A message from ``peer`` arrived: an observer now dials it too, to answer."""
        if peer not in self._heard:
            self._heard.add(peer)
            self._seen = None
            self.sync()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    # -- requests ---------------------------------------------------------------------------

    async def add_voter(
        self, node_id: int, directory_id: str, raft: PeerAddress | None, listener: str = ""
    ) -> None:
        """Catch ``node_id`` up from ``raft`` (None: where it observes from) and make it a
        voter; returns once committed."""
        core = self._core
        if raft is None:
            raft = self._observers.get(node_id)
            if raft is None:
                raise VoterChangeFailed(
                    f"node {node_id} is not an observer of the leader: give its Raft address"
                )
        await self._until_changes_allowed()
        self._observers[node_id] = raft
        core.set_observers(frozenset(self._observers))
        try:
            self.sync()
            core.add_voter(
                node_id,
                directory_id,
                raft_address=address_text(raft),
                listener_address=listener,
            )
            self._wake()
            await self._until_committed(lambda c: c.has(node_id, directory_id), node_id)
        finally:
            self._observers.pop(node_id, None)
            core.set_observers(frozenset(self._observers))
            self.sync()

    def observe(self, node_id: int, raft: PeerAddress) -> None:
        """Replicate to ``node_id`` without counting it, until this node leads no more."""
        if node_id == self._core.id:
            return
        if node_id in self._core.configuration().ids() and node_id in self._voter_addresses():
            # A voter that knows no leader asks too (at start-up, say): it is replicated to
            # already, at the address this node was given for it. Its own idea of its
            # address must not replace that one: where links are routed (through a proxy,
            # a tunnel, another interface), the configured route is the one to keep.
            return
        if node_id not in self._observers and len(self._observers) >= MAX_VOTERS:
            raise VoterChangeFailed(f"already {MAX_VOTERS} observers")
        if self._observers.get(node_id) != raft:
            self._observers[node_id] = raft
            self._core.set_observers(frozenset(self._observers))
            self.sync()

    async def remove_voter(self, node_id: int, directory_id: str = "") -> None:
        """Remove (node_id, directory_id) from the voters; returns once committed."""
        await self._until_changes_allowed()
        self._core.remove_voter(node_id, directory_id)
        self._wake()
        await self._until_committed(lambda c: not c.has(node_id, directory_id), None)

    async def _until_changes_allowed(self) -> None:
        """A leader just elected commits its own no-op first, and a change waits for the
        previous one to commit: wait that out (briefly) rather than refuse."""
        core = self._core
        with trio.move_on_after(self._timeout_s):
            while core.status().role is Role.LEADER and core.change_refusal() is not None:
                await self._changed.wait()
        # Anything still in the way is the core's to refuse (or NotLeaderError).

    async def _until_committed(
        self, done: Callable[[Configuration], bool], adding: int | None
    ) -> None:
        core = self._core
        term = core.status().term
        with trio.move_on_after(self._timeout_s):
            while True:
                status = core.status()
                configuration = core.configuration()
                if done(configuration) and status.configuration_index <= status.commit_index:
                    return
                if status.term != term or status.role is not Role.LEADER:
                    raise NotLeaderError(status.leader_id, status.term)
                failed = core.catch_up_failed
                if adding is not None and failed is not None and failed.node_id == adding:
                    raise VoterChangeFailed(
                        f"node {adding} did not catch up with the leader in time"
                    )
                if adding is not None and core.catching_up is None and not done(configuration):
                    raise VoterChangeFailed(f"adding node {adding} was abandoned")
                await self._changed.wait()
        raise ProposalOutcomeUnknown("the configuration change did not commit in time")

    # -- observation ------------------------------------------------------------------------

    def configuration(self) -> Configuration:
        """The voter set in effect here (the latest configuration entry in the log)."""
        return self._core.configuration()

    def replica_progress(self) -> list[ReplicaProgress]:
        """On the leader, every voter and observer; elsewhere, only the voters (progress
        unknown: -1)."""
        core = self._core
        configuration = core.configuration()
        directories = {v.node_id: v.directory_id for v in configuration.voters}
        if core.status().role is not Role.LEADER:
            return [
                ReplicaProgress(v.node_id, v.directory_id, True, -1, -1)
                for v in configuration.voters
            ]
        out = [
            ReplicaProgress(n, directories.get(n, ""), True, match, quiet * self._tick_ms)
            for n, (match, quiet) in core.voter_progress().items()
        ]
        out += [
            ReplicaProgress(n, "", False, match, quiet * self._tick_ms)
            for n, (match, quiet) in core.observer_progress().items()
        ]
        return sorted(out, key=lambda r: (not r.voter, r.node_id))
