"""Elections and leadership: ticks, pre-vote, vote, becoming leader, check-quorum, transfer.

* Pre-vote: a node whose election timer fires first asks the voters whether they *would*
  vote for it in term + 1, without anyone changing term. Only with a quorum of yeses does it
  really campaign. A node that was cut off therefore comes back with its old term and
  cannot force a healthy leader to step down.
* Check-quorum: a leader that has not heard from a quorum within an election timeout steps
  down, so a leader cut off from the majority stops believing it leads; and followers that
  heard from a leader within that time ignore (pre-)votes (the leader's lease). Stepping
  down, it sends TimeoutNow to the voter furthest along: if it is the one that hears
  nothing (its messages still arrive), no one waits out its lease before campaigning.
* Transfer: the leader brings the target up to date, then sends TimeoutNow; the target
  campaigns at once, flagged so that voters do not ignore it because of the lease.
* Leader down: when the driver has proof that the leader's process is gone (its port
  refuses connections), a follower forgets that leader and lets its election timer fire
  within a few ticks rather than a whole timeout. Pre-vote and the vote rules still decide;
  a wrong report costs at most a pre-vote that the leader's next heartbeat makes moot.
* Unanswered pre-votes are asked again every heartbeat interval while the pre-campaign
  lasts. A voter still in the lease of a leader that just died ignores a pre-vote without
  answering; once it notices the death (a tick later, or its own report), the next ask is
  granted, instead of the pre-candidate waiting out a whole randomized timeout.
* Rival pre-candidates: two voters that noticed a dead leader at about the same moment
  pre-campaign for the same term, and if each granted the other's pre-vote both would
  campaign, vote for themselves and split the vote -- costing a whole randomized timeout
  (1-2 s by default). So a pre-candidate asked for a pre-vote for the term it proposes
  itself yields only to a log more up to date than its own, or to an equal log of a voter
  with a lower id: it then grants and steps back to follower; otherwise it refuses. Exactly
  one of two rivals yields, and a pre-vote changes nothing durable, so safety is untouched.
* One vote per term: the vote is part of the hard state, and the Ready contract persists it
  before the VoteResponse leaves the node. Votes name directories too: a request the
  candidate addressed to another directory of our node id is refused (we are a wiped node
  formatted again, without the record of the old identity's votes), and a vote already cast
  for a node id is not repeated for another directory of it.
* Only voters of the configuration in effect campaign; everyone answers votes (a voter just
  added may not have the entry that added it yet), but only voters' answers are counted.
* An observer never campaigns, so it would name a leader that went silent forever: after an
  election timeout without a word from it, it names none (``forget_silent_leader``).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

from rillet.raft.core_errors import InvariantViolation
from rillet.raft.messages import EntryKind, LogEntry, TimeoutNow, VoteRequest, VoteResponse
from rillet.raft.progress import VoteResult
from rillet.raft.ready import Role
from rillet.raft.replication import Replication


class CampaignKind(Enum):
    PRE_ELECTION = "pre-election"
    ELECTION = "election"
    TRANSFER = "transfer"


class Election(Replication):
    # -- ticks --------------------------------------------------------------------------

    def tick_election(self) -> None:
        self.election_elapsed_ticks += 1
        if not self.may_campaign():
            # An observer never campaigns: it has no vote to win with.
            self.forget_silent_leader()
            return
        if self.election_elapsed_ticks >= self.randomized_election_timeout_ticks:
            self.election_elapsed_ticks = 0
            self.campaign(
                CampaignKind.PRE_ELECTION if self.config.pre_vote else CampaignKind.ELECTION
            )
        elif (
            self.role is Role.PRE_CANDIDATE
            and self.election_elapsed_ticks % self.config.heartbeat_interval_ticks == 0
        ):
            self.ask_again_for_pre_votes()

    def forget_silent_leader(self) -> None:
        """An observer that has not heard from its leader for an election timeout stops
        naming it. A voter finds the next leader by campaigning or by being asked to vote; an
        observer is only reached by a leader that knows of it, and a new leader knows only the
        observers that asked it (the leader keeps them in memory). A removed voter that kept
        naming the leader that removed the next voter sent its requests there forever and
        was never replicated to again; with no leader named, the driver asks every voter
        (KRaft's observer does the same: unattached, it asks the bootstrap voters)."""
        if (
            self.role is Role.FOLLOWER
            and self.leader_id is not None
            and self.election_elapsed_ticks >= self.config.election_timeout_ticks
        ):
            self.leader_id = None

    def ask_again_for_pre_votes(self) -> None:
        """Send the pre-vote request again to the voters that have not answered it."""
        unanswered = [peer for peer in self.peers if peer not in self.tracker.votes]
        self.request_votes(unanswered, self.term + 1, CampaignKind.PRE_ELECTION)

    def leader_down(self, peer: int) -> None:
        """``peer``'s process is reported gone: if it is the leader we follow, forget it (so
        our lease no longer makes us ignore the (pre-)votes of whoever succeeds it) and bring
        the election timer forward to fire in 1 + r ticks, r being our rank among the
        voters other than ``peer``.

        Every follower of a dead leader notices at about the same moment; campaigning in the
        same tick would split the vote, and a split costs a whole election timeout. Ranks
        put a tick between any two of them without any coordination (a random 1..k would
        collide 1 time in k). If the first cannot win -- its log is behind, or it is down
        too -- the next tries one tick later. The first waits one tick too, so that a live
        leader reported dead by mistake cancels it with its next heartbeat. Only the elapsed
        count moves, not the timeout: hearing from any leader (which zeroes it) cancels the
        early campaign and leaves the usual timeout in place."""
        if self.role is not Role.FOLLOWER or self.leader_id != peer or not self.may_campaign():
            return
        self.leader_id = None
        rank = sorted((self.voters | {self.id}) - {peer}).index(self.id)
        fire_at_ticks = self.randomized_election_timeout_ticks - 1 - rank
        self.election_elapsed_ticks = max(self.election_elapsed_ticks, fire_at_ticks)

    def tick_heartbeat(self) -> None:
        self.heartbeat_elapsed_ticks += 1
        self.election_elapsed_ticks += 1
        self.tick_snapshot_timeouts()
        # Check-quorum over a sliding window: step down once no quorum has been heard from
        # for an election timeout. (Checked once per timeout, over the timeout just ended,
        # a cut was noticed anywhere from one to two timeouts after it began; the node's
        # broker was fenced that much later too.)
        if self.config.check_quorum and not self.tracker.quorum_heard_within(
            self.id, self.config.election_timeout_ticks
        ):
            self.step_down_for_lack_of_quorum()
            return
        if self.election_elapsed_ticks >= self.config.election_timeout_ticks:
            self.election_elapsed_ticks = 0
            if self.config.check_quorum:
                for voter, progress in self.tracker.progress.items():
                    progress.recent_active = voter == self.id
            # A transfer that did not finish within an election timeout is abandoned.
            self.transfer_target = None
        if self.heartbeat_elapsed_ticks >= self.config.heartbeat_interval_ticks:
            self.heartbeat_elapsed_ticks = 0
            self.broadcast_heartbeat()

    def step_down_for_lack_of_quorum(self) -> None:
        """Check-quorum failed: stop leading, and hand over at once to the voter that was
        furthest along (TimeoutNow, as a transfer does).

        The quorum may be fine and this node the one that hears nothing (a one-way cut:
        its heartbeats still arrive). Its followers would then stay in its lease and wait a
        whole election timeout (1-2 s by default) after its last heartbeat before anyone
        campaigns. If the voter was cut off or is gone, the message is lost and the usual
        election follows; if it is behind, it loses that vote and so does the usual one.
        """
        self.step_down_and_hand_over()

    def step_down_and_hand_over(self) -> None:
        """Stop leading and send TimeoutNow to the voter furthest along."""
        peers = [v for v in self.tracker.progress if v != self.id and v in self.voters]
        successor = min(
            peers, key=lambda v: (-self.tracker.progress[v].match_index, v), default=None
        )
        self.become_follower(self.term, None)
        if successor is not None:
            self.send(TimeoutNow(self.term, self.id, successor))

    # -- campaigning --------------------------------------------------------------------

    def campaign(self, kind: CampaignKind) -> None:
        if not self.may_campaign():
            return  # not in our latest configuration (an observer, or removed)
        if kind is CampaignKind.PRE_ELECTION:
            self.become_pre_candidate()
            vote_term = self.term + 1
        else:
            self.become_candidate()
            vote_term = self.term
        self.tracker.record_vote(self.id, True)
        if self.tracker.tally() is VoteResult.WON:  # a single voter
            if kind is CampaignKind.PRE_ELECTION:
                self.campaign(CampaignKind.ELECTION)
            # An election won by our own vote alone is taken up in advance(), once the
            # Ready carrying that vote is durable: leading first, a crash could lose the
            # vote and let us grant the same term to another node (a configuration can
            # shrink to one voter, and the removed leader may then campaign).
            return
        self.request_votes(self.peers, vote_term, kind)

    def request_votes(self, peers: Iterable[int], vote_term: int, kind: CampaignKind) -> None:
        """Ask ``peers`` for their (pre-)vote in ``vote_term``, with our log's last entry."""
        last_index, last_term = self.log.last_index(), self.log.last_term()
        configuration = self.log.configuration()
        for peer in peers:
            voter = configuration.voter(peer)
            self.send(
                VoteRequest(
                    vote_term,
                    self.id,
                    peer,
                    last_index,
                    last_term,
                    pre_vote=kind is CampaignKind.PRE_ELECTION,
                    transfer=kind is CampaignKind.TRANSFER,
                    candidate_directory=self.directory_id,
                    voter_directory=voter.directory_id if voter is not None else "",
                )
            )

    def take_up_election_won_alone(self, persisted_term: int, persisted_vote: int | None) -> None:
        """The Ready carrying our vote for ourselves is durable: lead, if that vote alone
        won the election (see ``campaign``)."""
        if (
            self.role is Role.CANDIDATE
            and (persisted_term, persisted_vote) == (self.term, self.id)
            and self.tracker.tally() is VoteResult.WON
        ):
            self.become_leader()

    def become_pre_candidate(self) -> None:
        if self.role is Role.LEADER:
            raise InvariantViolation("a leader does not pre-campaign")
        # Term and vote stay as they are: a pre-election changes nothing durable.
        self.role = Role.PRE_CANDIDATE
        self.leader_id = None
        self.tracker.votes = {}
        self.reset_randomized_election_timeout()

    def become_candidate(self) -> None:
        if self.role is Role.LEADER:
            raise InvariantViolation("a leader does not campaign")
        self.reset(self.term + 1)
        self.vote = self.id
        self.vote_directory = self.directory_id
        self.role = Role.CANDIDATE

    def become_leader(self) -> None:
        if self.role is Role.FOLLOWER:
            raise InvariantViolation("a follower cannot become leader without an election")
        self.reset(self.term)
        self.role = Role.LEADER
        self.leader_id = self.id
        own = self.tracker.progress[self.id]
        own.become_replicate()
        own.maybe_update(self.log.persisted_index())
        own.recent_active = True
        # An entry of our own term: committing it commits every earlier entry (Figure 8),
        # and until then we neither know the true commit index nor serve reads.
        noop = LogEntry(self.log.last_index() + 1, self.term, b"", EntryKind.LEADER_NOOP)
        self.log.append([noop])
        self.broadcast_pending = True

    # -- votes --------------------------------------------------------------------------

    def candidate_log_is_up_to_date(self, message: VoteRequest) -> bool:
        """The election restriction: a vote only for a log at least as up to date as ours."""
        return self.log.is_up_to_date(message.last_index, message.last_term)

    def addressed_to_another_directory(self, message: VoteRequest) -> bool:
        """The candidate's configuration names another directory for our node id: we are a
        new identity (wiped and formatted again), not the voter it asks."""
        return bool(
            message.voter_directory
            and self.directory_id
            and message.voter_directory != self.directory_id
        )

    def handle_vote_request(self, message: VoteRequest) -> None:
        if self.addressed_to_another_directory(message):
            self.send(VoteResponse(self.term, self.id, message.sender, False, message.pre_vote))
            return
        if (
            message.pre_vote
            and self.role is Role.PRE_CANDIDATE
            and message.term == self.term + 1
            and not message.transfer
        ):
            self._answer_rival_pre_candidate(message)
            return
        voted_for_it = self.vote == message.sender and (
            not self.vote_directory
            or not message.candidate_directory
            or self.vote_directory == message.candidate_directory
        )
        can_vote = (
            voted_for_it
            or (self.vote is None and self.leader_id is None)
            or (message.pre_vote and message.term > self.term)
        )
        log_ok = self.candidate_log_is_up_to_date(message)
        if can_vote and log_ok:
            self.send(VoteResponse(message.term, self.id, message.sender, True, message.pre_vote))
            if not message.pre_vote:
                self.election_elapsed_ticks = 0
                self.vote = message.sender
                self.vote_directory = message.candidate_directory
        else:
            self.send(VoteResponse(self.term, self.id, message.sender, False, message.pre_vote))

    def _answer_rival_pre_candidate(self, message: VoteRequest) -> None:
        """Another voter pre-campaigns for the term we propose (see the module docstring)."""
        same_log = (message.last_term, message.last_index) == (
            self.log.last_term(),
            self.log.last_index(),
        )
        if self.candidate_log_is_up_to_date(message) and (not same_log or message.sender < self.id):
            self.send(VoteResponse(message.term, self.id, message.sender, True, True))
            self.become_follower(self.term, None)
            return
        self.send(VoteResponse(self.term, self.id, message.sender, False, True))

    def handle_vote_response(self, message: VoteResponse) -> None:
        expected_pre_vote = self.role is Role.PRE_CANDIDATE
        if self.role not in (Role.PRE_CANDIDATE, Role.CANDIDATE):
            return
        if message.pre_vote != expected_pre_vote:
            return  # an answer to a campaign we are no longer running
        if message.pre_vote and message.granted and message.term != self.term + 1:
            return  # a yes from an earlier pre-election, for a term we no longer propose
        self.tracker.record_vote(message.sender, message.granted)
        result = self.tracker.tally()
        if result is VoteResult.WON:
            if self.role is Role.PRE_CANDIDATE:
                self.campaign(CampaignKind.ELECTION)
            else:
                self.become_leader()
        elif result is VoteResult.LOST:
            self.become_follower(self.term, None)
