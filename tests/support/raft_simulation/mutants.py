"""Deliberately broken Raft cores, each breaking one safety argument, so the simulator can
prove it catches them. They live here, beside the simulator, as subclasses that override
the production core's rule methods: the core itself carries no fault switches.

The share of seeds of the default sweep that catches each is noted (measured over 3,000
seeds; tests/unit/raft/test_simulation.py asserts the first three are caught).
"""

from __future__ import annotations

from enum import Enum

from rillet.raft.core import RaftCore
from rillet.raft.membership import Configuration, Voter
from rillet.raft.messages import AppendEntries, AppendResponse, Message, VoteRequest, VoteResponse
from rillet.raft.ready import Role


class CoreFault(Enum):
    NONE = "none"
    # Commit an entry of an earlier term by counting replicas (the paper's Figure 8 bug,
    # i.e. skipping the term check of the commit rule). About 5% of seeds.
    COMMIT_PRIOR_TERM_ENTRIES = "commit-prior-term-entries"
    # Grant votes without checking that the candidate's log is at least as up to date.
    # About half of the seeds.
    GRANT_VOTE_WITHOUT_LOG_CHECK = "grant-vote-without-log-check"
    # Never ask for a sync: votes and acknowledgements leave before the writes are durable.
    # Nearly every seed.
    SKIP_SYNC = "skip-sync"
    # Follower skips the term check on appends: a deposed leader can still overwrite
    # entries. About 1 seed in 600.
    ACCEPT_STALE_APPENDS = "accept-stale-appends"
    # Candidate counts a vote granted in an earlier term. About 1 seed in 1,500.
    ACCEPT_STALE_VOTES = "accept-stale-votes"
    # Count an append acknowledgement sent in an earlier term toward this term's commit.
    # Not caught in 3,000 seeds: to matter, the leader's own log must have been cut back
    # between the acknowledged term and its current one (so an old acknowledgement covers
    # entries of the new term), an interleaving the scenario has not produced. Known gap.
    ACCEPT_STALE_ACKS = "accept-stale-acks"
    # Membership (run with --membership): a removal also drops a second voter. Caught by
    # the one-server check in nearly half of the seeds, as is the next by the own-term one.
    TWO_SERVER_CHANGE = "two-server-change"
    # Membership: a new leader starts a change before committing an entry of its own term.
    SKIP_OWN_TERM_COMMIT = "skip-own-term-commit"
    # Membership: vote whatever directory the candidate's configuration names for us (a
    # wiped node then votes as the voter it was, without the record of that voter's votes).
    # Caught as a lost committed entry in about 1 seed in 400.
    IGNORE_DIRECTORY = "ignore-directory"


class CommitsPriorTermEntries(RaftCore):
    def may_commit_by_count(self, index: int) -> bool:
        return True


class GrantsVoteWithoutLogCheck(RaftCore):
    def candidate_log_is_up_to_date(self, message: VoteRequest) -> bool:
        return True


class SkipsSync(RaftCore):
    def syncs_before_sending(self) -> bool:
        return False


class AcceptsStaleAppends(RaftCore):
    def _step_stale(self, message: Message) -> None:
        if isinstance(message, AppendEntries):
            self.handle_append_entries(message)
        else:
            super()._step_stale(message)


class AcceptsStaleVotes(RaftCore):
    def _step_stale(self, message: Message) -> None:
        if isinstance(message, VoteResponse):
            self.handle_vote_response(message)
        else:
            super()._step_stale(message)


class AcceptsStaleAcks(RaftCore):
    def _step_stale(self, message: Message) -> None:
        if isinstance(message, AppendResponse) and self.role is Role.LEADER and not message.reject:
            self.handle_append_response(message)
        else:
            super()._step_stale(message)


class ChangesTwoServers(RaftCore):
    def next_configuration(
        self, current: Configuration, node_id: int, added: Voter | None
    ) -> Configuration:
        changed = super().next_configuration(current, node_id, added)
        others = [v.node_id for v in changed.voters if v.node_id != self.id]
        if added is None and len(others) >= 2:
            changed = changed.without(others[-1])
        return changed

    def allows_multi_server_change(self) -> bool:
        return True


class SkipsOwnTermCommit(RaftCore):
    def change_refusal(self) -> str | None:
        if self.log.configuration_index() > self.log.committed:
            return "the previous configuration change is not committed yet"
        return None


class IgnoresDirectory(RaftCore):
    def addressed_to_another_directory(self, message: VoteRequest) -> bool:
        return False


CORE_TYPES: dict[CoreFault, type[RaftCore]] = {
    CoreFault.NONE: RaftCore,
    CoreFault.COMMIT_PRIOR_TERM_ENTRIES: CommitsPriorTermEntries,
    CoreFault.GRANT_VOTE_WITHOUT_LOG_CHECK: GrantsVoteWithoutLogCheck,
    CoreFault.SKIP_SYNC: SkipsSync,
    CoreFault.ACCEPT_STALE_APPENDS: AcceptsStaleAppends,
    CoreFault.ACCEPT_STALE_VOTES: AcceptsStaleVotes,
    CoreFault.ACCEPT_STALE_ACKS: AcceptsStaleAcks,
    CoreFault.TWO_SERVER_CHANGE: ChangesTwoServers,
    CoreFault.SKIP_OWN_TERM_COMMIT: SkipsOwnTermCommit,
    CoreFault.IGNORE_DIRECTORY: IgnoresDirectory,
}


def core_type(fault: CoreFault) -> type[RaftCore]:
    """The core class that has ``fault`` (the production core for ``CoreFault.NONE``)."""
    return CORE_TYPES[fault]
