"""The state every role of the Raft core shares, and the transitions between roles' basics.

``RaftCore`` is assembled in layers, each a subclass of the one below, so that one concept
lives in one module and each module stays readable:

    CoreState (this module)   fields, outbox, term/role resets
    Replication               appends, heartbeats, snapshots, commit, ReadIndex rounds
    Election                  ticks, pre-vote and vote, leadership, check-quorum, transfer
    RaftCore                  the public API: step, tick, propose, ready/advance, ...

Nothing here performs I/O, reads a clock or touches global state; the only randomness is the
``random.Random`` the caller passes in (it randomizes election timeouts).
"""

from __future__ import annotations

import random

from rillet.raft.core_config import Config
from rillet.raft.core_errors import CoreContractError
from rillet.raft.log_storage import LogStorage
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
    ) -> None:
        voter_set = frozenset(voters)
        if node_id < 1 or any(v < 1 for v in voter_set):
            raise CoreContractError("node ids start at 1")
        if node_id not in voter_set:
            raise CoreContractError(f"node {node_id} is not among the voters {sorted(voter_set)}")
        self.id = node_id
        self.voters = voter_set
        self.peers = tuple(sorted(voter_set - {node_id}))
        self.config = config
        self.rng = rng
        self.log = RaftLog(storage_view, applied_index)
        hard_state = storage_view.hard_state()
        self.term = hard_state.term
        self.vote: int | None = hard_state.vote
        self.role = Role.FOLLOWER
        self.leader_id: int | None = None
        self.tracker = ProgressTracker(voter_set)
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

    # -- small helpers ------------------------------------------------------------------

    def send(self, message: Message) -> None:
        self.outbox.append(message)

    def hard_state(self) -> HardState:
        return HardState(self.term, self.vote, self.log.committed)

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
        self.leader_id = None
        self.election_elapsed_ticks = 0
        self.heartbeat_elapsed_ticks = 0
        self.reset_randomized_election_timeout()
        self.transfer_target = None
        self.broadcast_pending = False
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
