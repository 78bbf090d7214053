"""Adding and removing voters, one server at a time (Raft dissertation, chapter 4).

* The configuration in effect is the latest CONFIG entry in the log, committed or not
  (``RaftLog.configuration``): a leader uses the new voter set for its quorums from the
  moment it appends the entry, a follower from the moment it stores it, and a suffix cut
  back on a conflict takes its configuration with it.
* One server at a time: any majority of the old voter set and any majority of a set that
  differs from it by one server overlap, so there can never be two disjoint quorums and no
  joint consensus is needed. A leader starts a change only when the previous one is
  committed.
* The known fix (Ongaro, raft-dev, 2015): a new leader must commit an entry of its own term
  (its no-op) before it starts a change. Otherwise a change left uncommitted by a previous
  leader and a change of the new leader, each one server away from the committed set but
  two servers apart from each other, can both be committed by disjoint majorities.
* Adding a voter: the leader first replicates to it as an observer (catching up, counted in
  no quorum), and only when it has acknowledged an append since the request and holds
  everything committed appends the configuration that
  makes it a voter, so the new voter does not stall commits while it copies the log. A
  replica that does not catch up within ``catch_up_timeout_ticks`` is given up on.
* Removing a voter: the entry is appended at once. A leader that removes itself keeps
  leading -- replicating, but not counting itself in quorums -- until the entry commits,
  then steps down and hands over (TimeoutNow) to the voter furthest along.
* Observers: replicas that receive the log but do not vote (the driver names them; a
  removed voter or a wiped node becomes one). They never campaign.
"""

from __future__ import annotations

from rillet.raft.core_errors import InvariantViolation, MembershipChangeRefused
from rillet.raft.election import Election
from rillet.raft.errors import NotLeaderError
from rillet.raft.membership import Configuration, Voter, config_entry
from rillet.raft.messages import AppendResponse
from rillet.raft.progress import ProgressState
from rillet.raft.ready import Role


class Membership(Election):
    catch_up_elapsed_ticks = 0
    # The replica catching up has acknowledged an append since the change began (a match
    # index from before it, of a replica that may since have been cut off, proves nothing).
    catch_up_acknowledged = False
    # The last replica given up on while catching up (for the driver to report).
    catch_up_failed: Voter | None = None

    # -- requests -----------------------------------------------------------------------

    def add_voter(
        self,
        node_id: int,
        directory_id: str = "",
        *,
        raft_address: str = "",
        listener_address: str = "",
    ) -> None:
        """Start adding (node_id, directory_id): it catches up as an observer, then joins
        through a configuration entry (which records its addresses, when given, for every
        replica). Watch the committed configuration for the outcome."""
        self._refuse_unless_leader()
        voter = Voter(node_id, directory_id, raft_address, listener_address)
        current = self.log.configuration()
        existing = current.voter(node_id)
        if existing is not None:
            if existing.matches(node_id, directory_id):
                raise MembershipChangeRefused(f"{voter.describe()} is already a voter")
            raise MembershipChangeRefused(
                f"node {node_id} is a voter under directory {existing.directory_id}: "
                "remove that voter first"
            )
        self._refuse_unless_change_allowed()
        if self.catching_up is not None:
            raise MembershipChangeRefused(
                f"{self.catching_up.describe()} is still catching up to join"
            )
        self.catching_up = voter
        self.catch_up_failed = None
        self.catch_up_elapsed_ticks = 0
        self.catch_up_acknowledged = False
        self.sync_members()
        self.send_append(node_id)

    def remove_voter(self, node_id: int, directory_id: str = "") -> None:
        """Append a configuration without (node_id, directory_id)."""
        self._refuse_unless_leader()
        current = self.log.configuration()
        if not current.has(node_id, directory_id):
            raise MembershipChangeRefused(
                f"{Voter(node_id, directory_id).describe()} is not a voter of {current.describe()}"
            )
        if len(current.voters) == 1:
            raise MembershipChangeRefused("the last voter cannot be removed")
        self._refuse_unless_change_allowed()
        self._append_configuration(self.next_configuration(current, node_id, None))

    # -- rules (the simulator's broken cores override these) -----------------------------

    def change_refusal(self) -> str | None:
        """Why no configuration change may start now, or None."""
        if self.log.configuration_index() > self.log.committed:
            return "the previous configuration change is not committed yet"
        if not self.committed_in_current_term():
            return "the leader has not committed an entry of its term yet"
        return None

    def next_configuration(
        self, current: Configuration, node_id: int, added: Voter | None
    ) -> Configuration:
        """``current`` with ``added`` joined, or with ``node_id`` removed."""
        return current.with_voter(added) if added is not None else current.without(node_id)

    # -- catching up --------------------------------------------------------------------

    def maybe_promote(self) -> None:
        """The replica catching up holds everything committed: make it a voter."""
        voter = self.catching_up
        if voter is None or self.role is not Role.LEADER:
            return
        progress = self.tracker.progress.get(voter.node_id)
        if progress is None or progress.state is not ProgressState.REPLICATE:
            return
        if not self.catch_up_acknowledged:
            return
        if progress.match_index < self.log.committed or self.change_refusal() is not None:
            return
        self.catching_up = None
        current = self.log.configuration()
        self._append_configuration(self.next_configuration(current, voter.node_id, voter))

    def tick_catch_up(self) -> None:
        if self.catching_up is None:
            return
        self.catch_up_elapsed_ticks += 1
        if self.catch_up_elapsed_ticks >= self.config.effective_catch_up_timeout_ticks():
            self.catch_up_failed, self.catching_up = self.catching_up, None
            self.sync_members()
        else:
            self.maybe_promote()

    def handle_append_response(self, message: AppendResponse) -> None:
        progress = self.tracker.progress.get(message.sender)
        if (
            progress is not None
            and message.reject
            and message.index <= progress.match_index
            and message.sender not in self.voters
        ):
            # An observer denies what it acknowledged: its disk was replaced (a wiped node
            # formatted again). Start it over; a voter that does this lost synced data,
            # which Raft cannot repair, and keeps being refused (see Progress).
            progress.match_index = 0
            progress.become_probe()
            progress.next_index = message.index + 1
            progress.probe_sent = True
        super().handle_append_response(message)
        if self.catching_up is not None and message.sender == self.catching_up.node_id:
            self.catch_up_acknowledged = self.catch_up_acknowledged or not message.reject
            self.maybe_promote()

    # -- effects ------------------------------------------------------------------------

    def on_commit_advanced(self) -> None:
        super().on_commit_advanced()
        if self.role is Role.LEADER:
            self.maybe_promote()

    def maybe_step_down_after_removal(self) -> None:
        """Our own removal is committed: the new voters go on without us. (Called between
        inputs, never in the middle of handling one, so no half-handled message is
        answered as a follower.)"""
        if (
            self.role is Role.LEADER
            and not self.is_voter()
            and self.log.committed >= self.log.configuration_index()
        ):
            self.step_down_and_hand_over()

    def _append_configuration(self, configuration: Configuration) -> None:
        current = self.log.configuration()
        if current.changed_servers(configuration) != 1 and not self.allows_multi_server_change():
            raise InvariantViolation(
                f"{current.describe()} -> {configuration.describe()} is not a one-server change"
            )
        entry = config_entry(self.log.last_index() + 1, self.term, configuration)
        self.log.append([entry])
        self.sync_members()
        self.broadcast_pending = True
        self.maybe_commit()  # a smaller quorum may already hold what is pending

    def allows_multi_server_change(self) -> bool:
        """Never here; a broken core of the simulator says yes."""
        return False

    def _refuse_unless_leader(self) -> None:
        if self.role is not Role.LEADER:
            raise NotLeaderError(self.leader_id, self.term)
        if self.transfer_target is not None:
            raise MembershipChangeRefused(f"leadership is moving to node {self.transfer_target}")

    def _refuse_unless_change_allowed(self) -> None:
        reason = self.change_refusal()
        if reason is not None:
            raise MembershipChangeRefused(reason)
