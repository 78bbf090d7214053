"""The state every role of the Raft core shares, and the transitions between roles' basics.

``RaftCore`` is assembled in layers, each a subclass of the one below, so that one concept
lives in one module and each module stays readable:

    CoreState (this module)   fields, outbox, term/role resets, the voter set in effect
    Replication               appends, heartbeats, snapshots, commit, ReadIndex rounds
    Election                  ticks, pre-vote and vote, leadership, check-quorum, transfer
    Membership                observers, adding and removing voters
    RaftCore                  the public API: step, tick, propose, ready/advance, ...

Nothing here performs I/O, reads a clock or touches global state; the only randomness is the
``random.Random`` the caller passes in (it randomizes election timeouts).
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from rillet.raft.core_config import Config
from rillet.raft.core_errors import CoreContractError
from rillet.raft.log_storage import LogStorage
from rillet.raft.membership import DIRECTORY_ID_CHARS, Configuration, Voter
from rillet.raft.messages import HardState, Message
from rillet.raft.progress import ProgressTracker
from rillet.raft.raft_log import RaftLog
from rillet.raft.read_index import ReadIndexQueue, ReadState
from rillet.raft.ready import Ready, Role, SoftState


class CoreState:
    def __init__(
        self,
        node_id: int,
        voters: frozenset[int] | set[int] | list[int],
        storage_view: LogStorage,
        config: Config,
        rng: random.Random,
        applied_index: int | None = None,
        *,
        directory_id: str = "",
        observers: Iterable[int] = (),
    ) -> None:
        voter_set = frozenset(voters)
        observer_set = frozenset(observers)
        if node_id < 1 or any(v < 1 for v in voter_set | observer_set):
            raise CoreContractError("node ids start at 1")
        if len(directory_id) not in (0, DIRECTORY_ID_CHARS):
            raise CoreContractError(f"directory id {directory_id!r} is not a 32-digit UUID")
        self.id = node_id
        self.directory_id = directory_id
        # Replicas the leader always sends the log to, voters or not (the driver's peers).
        self.static_observers = observer_set - {node_id}
        # The replica being caught up before it joins as a voter (leader only).
        self.catching_up: Voter | None = None
        self.config = config
        self.rng = rng
        self.log = RaftLog(storage_view, applied_index, Configuration.of(voter_set))
        hard_state = storage_view.hard_state()
        self.term = hard_state.term
        self.vote: int | None = hard_state.vote
        self.vote_directory = hard_state.vote_directory
        self.role = Role.FOLLOWER
        self.leader_id: int | None = None
        self._members_of: Configuration | None = None
        self.tracker = ProgressTracker(self.voters, self.observers())
        self.reads = ReadIndexQueue()
        # ReadIndex requests (requester, context) held until we commit in our own term.
        self.reads_awaiting_commit: list[tuple[int, bytes]] = []
        self.read_states: list[ReadState] = []
        self.outbox: list[Message] = []
        self.election_elapsed_ticks = 0
        self.heartbeat_elapsed_ticks = 0
        self.randomized_election_timeout_ticks = config.election_timeout_ticks
        self.transfer_target: int | None = None
        # Proposals since the last Ready: appends go out in one batch per follower.
        self.broadcast_pending = False
        # What the last Ready reported, so the next one carries only changes.
        self._prev_hard_state = hard_state
        self._prev_soft_state = SoftState(None, Role.FOLLOWER)
        self._outstanding: Ready | None = None
        self.reset(self.term)

    # -- the voter set ------------------------------------------------------------------

    @property
    def voters(self) -> frozenset[int]:
        """Node ids of the configuration in effect (the latest in the log)."""
        return self.log.configuration().ids()

    @property
    def peers(self) -> tuple[int, ...]:
        """The other voters: whom we ask for votes."""
        return tuple(sorted(self.voters - {self.id}))

    def replicas(self) -> list[int]:
        """Everyone but us the leader sends the log to: voters and observers."""
        return [n for n in self.tracker.members() if n != self.id]

    def observers(self) -> frozenset[int]:
        extra = {self.catching_up.node_id} if self.catching_up is not None else set()
        return (self.static_observers | extra | {self.id}) - self.voters

    def is_voter(self) -> bool:
        """Are we, under our directory id, a voter of the configuration in effect?"""
        return self.log.configuration().has(self.id, self.directory_id)

    def may_campaign(self) -> bool:
        """Voters campaign; so does a voter whose removal is the latest configuration entry
        while it is not known committed. The removed leader that wrote it may have crashed
        with the longest log: no one else can then be elected (their logs are behind) and
        only it can finish the change. Its election counts the new voter set's votes, so it
        is safe; once leading it commits the removal and steps down."""
        if self.is_voter():
            return True
        log = self.log
        return log.configuration_index() > log.committed and log.configs.previous().has(
            self.id, self.directory_id
        )

    def sync_members(self) -> None:
        """Bring the tracker in line with the configuration in effect, after an append,
        a truncation or a snapshot may have changed it."""
        configuration = self.log.configuration()
        observers = self.observers()
        if configuration is self._members_of and observers == self.tracker.observers:
            return
        self._members_of = configuration
        self.tracker.set_members(
            configuration.ids(),
            observers,
            self.log.last_index() + 1,
            self.config.max_inflight_appends,
            self.config.max_inflight_bytes,
        )

    # -- small helpers ------------------------------------------------------------------

    def send(self, message: Message) -> None:
        self.outbox.append(message)

    def hard_state(self) -> HardState:
        return HardState(self.term, self.vote, self.log.committed, self.vote_directory)

    def soft_state(self) -> SoftState:
        return SoftState(self.leader_id, self.role)

    def reset_randomized_election_timeout(self) -> None:
        """Spread timeouts over [T, 2T) so that one follower usually times out first."""
        timeout_ticks = self.config.election_timeout_ticks
        self.randomized_election_timeout_ticks = timeout_ticks + self.rng.randrange(timeout_ticks)

    def in_lease(self) -> bool:
        """With check-quorum, a node that heard from a leader within an election timeout
        trusts that leader and ignores (pre-)votes: a rejoining node cannot depose it."""
        return (
            self.config.check_quorum
            and self.leader_id is not None
            and self.election_elapsed_ticks < self.config.election_timeout_ticks
        )

    def committed_in_current_term(self) -> bool:
        return self.log.term(self.log.committed) == self.term

    # -- role transitions ---------------------------------------------------------------

    def reset(self, term: int) -> None:
        """Forget everything that belonged to the previous role or term."""
        if term != self.term:
            self.term = term
            self.vote = None
            self.vote_directory = ""
        self.leader_id = None
        self.election_elapsed_ticks = 0
        self.heartbeat_elapsed_ticks = 0
        self.reset_randomized_election_timeout()
        self.transfer_target = None
        self.catching_up = None
        self.broadcast_pending = False
        self.sync_members()
        self.tracker.reset(
            self.log.last_index() + 1,
            self.config.max_inflight_appends,
            self.config.max_inflight_bytes,
        )
        self.reads.clear()
        self.reads_awaiting_commit.clear()

    def become_follower(self, term: int, leader_id: int | None) -> None:
        self.reset(term)
        self.role = Role.FOLLOWER
        self.leader_id = leader_id
