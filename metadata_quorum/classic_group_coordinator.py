"""The classic group coordinator: Kafka's JoinGroup/SyncGroup state machine, on the controller.

Per group: Empty -> PreparingRebalance (members (re)join; their JoinGroup requests are held)
-> CompletingRebalance (every joiner answered: the leader with all subscriptions; the group
waits for the leader's SyncGroup) -> Stable (each member got its assignment from SyncGroup).
A join round ends when every known member rejoined or the rebalance timeout passed; members
that did not rejoin in time are dropped (static members are kept with what they last sent).
A new generation starts with every completed round; heartbeats, syncs and offset commits of
an older generation are refused.

Sans-I/O like the rest of the controller: time is an argument, member ids come from the
caller. Durable facts are records (``classic_group_records``) applied to the registry on
every node; held requests are *tickets*, and their answers are staged here and released by
the driver only once the records of the decision that produced them are committed
(:meth:`take_answers`), or failed with NOT_COORDINATOR when they never will be
(:meth:`abandon`). Session deadlines and held requests are leader-only memory: a new
controller rebuilds each group from the registry and its members re-send what it held.
"""

from __future__ import annotations

from typing import Any

from rillet.metadata_quorum.classic_group_protocol import (
    ClassicGroupConfig,
    check_join,
    member_from_request,
    reassigns,
    same_protocols,
    select_protocol,
    supports,
)
from rillet.metadata_quorum.classic_group_records import (
    ClassicAssignmentEntry,
    ClassicGroupJoined,
    ClassicGroupSynced,
    ClassicMember,
    ClassicMemberReplaced,
    ClassicMembersRemoved,
    ClassicRebalanceStarted,
)
from rillet.metadata_quorum.classic_group_replies import (
    current_generation,
    failed,
    join_error,
    sync_answer,
    sync_error,
)
from rillet.metadata_quorum.classic_group_runtime import (
    Answer,
    Joining,
    Runtime,
    Txn,
    check_member,
    copy_group,
    due,
    fail_held,
    fresh_runtime,
    instance_owner,
    members_of,
)
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.records import MetadataRecord
from rillet.metadata_quorum.state import MetadataState
from rillet.wire import classic_group_messages as cgm
from rillet.wire.error_codes import ErrorCode


class ClassicGroupCoordinator:
    def __init__(self, config: ClassicGroupConfig | None = None) -> None:
        self.config = config or ClassicGroupConfig()
        self._groups: dict[str, Runtime] = {}
        self._answers: list[Answer] = []

    # -- the driver's side ---------------------------------------------------------------------

    def take_answers(self) -> list[Answer]:
        """Answers of the decisions taken so far: call once their records are committed."""
        out, self._answers = self._answers, []
        return out

    def abandon(self) -> list[Answer]:
        """This coordinator's decisions may not be committed (leadership lost, a proposal
        failed): every staged and held request is answered NOT_COORDINATOR, so its client
        finds the controller again and re-sends it, and the groups start over from the
        committed state."""
        out = [(t, failed(resp)) for t, resp in self._answers]
        for rt in self._groups.values():
            out += fail_held(rt)
        self._answers, self._groups = [], {}
        return out

    def held_tickets(self) -> int:
        return sum(len(rt.joined) + len(rt.awaiting_sync) for rt in self._groups.values())

    def joining(self, group_id: str) -> bool:
        """Members are on their way in (held joins, member ids handed out), though none may
        be recorded yet: the group is not empty for a deletion."""
        rt = self._groups.get(group_id)
        return rt is not None and bool(rt.in_round or rt.joined or rt.pending_ids)

    # -- requests ------------------------------------------------------------------------------

    def join(
        self,
        state: MetadataState,
        req: cgm.ClassicJoinGroupRequest,
        ticket: int,
        new_member_id: str,
        now_ms: int,
    ) -> Decision:
        """A JoinGroup; ``new_member_id`` is the id a new member gets (the caller makes it
        unique)."""
        refusal = check_join(req, self.config)
        if refusal is not None:
            return self._reply(ticket, join_error(refusal.error, refusal.message))
        kip848 = state.groups.group(req.group_id)
        if kip848 is not None and kip848.members:
            code = ErrorCode.INCONSISTENT_GROUP_PROTOCOL
            return self._reply(ticket, join_error(code, "the group uses the consumer protocol"))
        txn = self._open(state, req.group_id, now_ms)
        self._join(txn, req, ticket, new_member_id, now_ms)
        return Decision(self._close(txn))

    def sync(
        self, state: MetadataState, req: cgm.ClassicSyncGroupRequest, ticket: int, now_ms: int
    ) -> Decision:
        txn = self._open(state, req.group_id, now_ms)
        g, rt = txn.group, txn.rt
        refusal = check_member(txn, req.member_id, req.group_instance_id, req.generation_id)
        if refusal is None and (
            (req.protocol_type and req.protocol_type != g.protocol_type)
            or (req.protocol_name and req.protocol_name != g.protocol_name)
        ):
            refusal = (ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "not the group's protocol")
        if refusal is None and self._phase(txn) == cgm.PREPARING_REBALANCE:
            refusal = (ErrorCode.REBALANCE_IN_PROGRESS, "the group is rebalancing: rejoin")
        if refusal is not None:
            self._answers.append((ticket, sync_error(*refusal)))
            return Decision(self._close(txn))
        mid = req.member_id
        rt.sessions[mid] = now_ms + g.members[mid].member.session_timeout_ms
        if g.phase == cgm.STABLE:
            if mid == g.leader_id and reassigns(g, req.assignments):
                # The leader assigned anew (its topics' partitions changed): everyone rejoins.
                self._start_round(txn, now_ms)
                code = ErrorCode.REBALANCE_IN_PROGRESS
                self._answers.append((ticket, sync_error(code, "the leader reassigned: rejoin")))
            else:
                self._answers.append((ticket, sync_answer(g, mid)))
        elif mid == g.leader_id:
            given = {a.member_id: bytes(a.assignment) for a in req.assignments}
            entries = [ClassicAssignmentEntry(m, given.get(m, b"")) for m in sorted(g.members)]
            txn.emit(ClassicGroupSynced(g.group_id, g.generation, entries))
            for other, held in rt.awaiting_sync.items():
                self._answers.append((held, sync_answer(g, other)))
            rt.awaiting_sync = {}
            self._answers.append((ticket, sync_answer(g, mid)))
        else:
            previous = rt.awaiting_sync.get(mid)
            if previous is not None:
                self._answers.append((previous, sync_error(ErrorCode.REBALANCE_IN_PROGRESS)))
            rt.awaiting_sync[mid] = ticket
        return Decision(self._close(txn))

    def heartbeat(
        self, state: MetadataState, req: cgm.ClassicHeartbeatRequest, ticket: int, now_ms: int
    ) -> Decision:
        txn = self._open(state, req.group_id, now_ms)
        refusal = check_member(txn, req.member_id, req.group_instance_id, req.generation_id)
        if refusal is not None:
            self._answers.append((ticket, cgm.ClassicHeartbeatResponse(*refusal)))
        else:
            member = txn.group.members[req.member_id].member
            txn.rt.sessions[req.member_id] = now_ms + member.session_timeout_ms
            code = ErrorCode.NONE
            if self._phase(txn) == cgm.PREPARING_REBALANCE:
                code = ErrorCode.REBALANCE_IN_PROGRESS
            self._answers.append((ticket, cgm.ClassicHeartbeatResponse(code)))
        return Decision(self._close(txn))

    def leave(
        self, state: MetadataState, req: cgm.ClassicLeaveGroupRequest, ticket: int, now_ms: int
    ) -> Decision:
        txn = self._open(state, req.group_id, now_ms)
        g, rt = txn.group, txn.rt
        results: list[cgm.ClassicLeftMember] = []
        gone: set[str] = set()
        for lm in req.members:
            code = ErrorCode.NONE
            if lm.group_instance_id is not None:
                owner = instance_owner(txn, lm.group_instance_id)
                if owner is None:
                    code = ErrorCode.UNKNOWN_MEMBER_ID
                elif lm.member_id and lm.member_id != owner:
                    code = ErrorCode.FENCED_INSTANCE_ID
                else:
                    gone.add(owner)
            elif lm.member_id in rt.pending_ids:
                del rt.pending_ids[lm.member_id]
            elif lm.member_id in g.members or lm.member_id in rt.joined:
                gone.add(lm.member_id)
            else:
                code = ErrorCode.UNKNOWN_MEMBER_ID
            results.append(cgm.ClassicLeftMember(lm.member_id, lm.group_instance_id, code))
        if gone:
            self._remove(txn, gone, now_ms)
        elif rt.in_round:  # a member id handed out is no longer awaited
            self._maybe_complete(txn, now_ms)
        self._answers.append((ticket, cgm.ClassicLeaveGroupResponse(ErrorCode.NONE, results)))
        return Decision(self._close(txn))

    def tick(self, state: MetadataState, now_ms: int) -> Decision:
        """Expire sessions and pending member ids, end join rounds whose time is up, and
        restart groups whose leader did not send the assignment in time."""
        records: list[MetadataRecord] = []
        registry = state.classic_groups
        for gid in sorted(set(registry.groups) | set(self._groups)):
            rt = self._groups.get(gid)
            g = registry.groups.get(gid)
            if rt is None and (g is None or (not g.members and not g.rebalancing)):
                continue
            if rt is not None and g is not None and not due(rt, g, now_ms):
                continue
            txn = self._open(state, gid, now_ms)
            self._expire(txn, now_ms)
            records += self._close(txn)
        return Decision(records)

    # -- decisions on one group ----------------------------------------------------------------

    def _join(
        self,
        txn: Txn,
        req: cgm.ClassicJoinGroupRequest,
        ticket: int,
        new_id: str,
        now_ms: int,
    ) -> None:
        g, rt = txn.group, txn.rt
        mid = req.member_id or new_id
        probe = member_from_request(req, mid)
        owner = instance_owner(txn, req.group_instance_id) if req.group_instance_id else None
        others = [m for m_id, m in members_of(txn).items() if m_id not in (mid, owner)]
        group_type = g.protocol_type if g.members else rt.protocol_type
        if not supports(others, group_type, req.protocol_type, probe):
            code = ErrorCode.INCONSISTENT_GROUP_PROTOCOL
            self._answers.append((ticket, join_error(code, "no protocol in common")))
            return
        if not req.member_id:
            if owner is not None:
                self._replace_static(txn, req, ticket, owner, probe, now_ms)
                return
            size = len(set(g.members) | set(rt.joined)) + len(rt.pending_ids)
            if size >= self.config.max_size:
                code = ErrorCode.GROUP_MAX_SIZE_REACHED
                self._answers.append((ticket, join_error(code, "the group is full")))
            elif req.group_instance_id is None and req.require_known_member_id:
                rt.pending_ids[mid] = now_ms + req.session_timeout_ms
                code = ErrorCode.MEMBER_ID_REQUIRED
                self._answers.append((ticket, join_error(code, "join again with this id", mid)))
            else:
                self._add_to_round(txn, probe, req.protocol_type, ticket, now_ms, new=True)
            return
        if rt.pending_ids.pop(mid, None) is not None:
            self._add_to_round(txn, probe, req.protocol_type, ticket, now_ms, new=True)
            return
        if owner is not None and owner != mid:
            code = ErrorCode.FENCED_INSTANCE_ID
            self._answers.append((ticket, join_error(code, "another member has the instance id")))
            return
        unknown_instance = req.group_instance_id is not None and owner is None
        if unknown_instance or (mid not in g.members and mid not in rt.joined):
            # the member resets its id and joins anew
            code = ErrorCode.UNKNOWN_MEMBER_ID
            self._answers.append((ticket, join_error(code, "unknown member id", mid)))
            return
        rt.sessions[mid] = now_ms + probe.session_timeout_ms
        phase = self._phase(txn)
        unchanged = mid in g.members and same_protocols(probe, g.members[mid].member)
        # An unchanged rejoin gets the generation in force, the leader's too (with every
        # subscription, so it can assign again); a change of protocols is a request for a
        # rebalance. Kafka starts one for any rejoin of a Stable group's leader; here the
        # leader asks for one by syncing a different assignment (see :meth:`sync`), so a
        # leader that only lost its last answer (a client that gave up waiting and joins
        # again) gets it back without a new round for everyone.
        if unchanged and phase in (cgm.COMPLETING_REBALANCE, cgm.STABLE):
            self._answers.append((ticket, current_generation(g, mid, g.leader_id)))
        else:
            self._add_to_round(txn, probe, req.protocol_type, ticket, now_ms, new=False)

    def _replace_static(
        self,
        txn: Txn,
        req: cgm.ClassicJoinGroupRequest,
        ticket: int,
        old: str,
        member: ClassicMember,
        now_ms: int,
    ) -> None:
        """A static member restarted: the new member id takes the old one's place; without
        a change of protocols in a Stable group, nothing moves (no rebalance)."""
        g, rt = txn.group, txn.rt
        fenced = ErrorCode.FENCED_INSTANCE_ID
        held = rt.joined.pop(old, None)
        if held is not None:
            self._answers.append((held.ticket, join_error(fenced, "replaced by a new member")))
        held_sync = rt.awaiting_sync.pop(old, None)
        if held_sync is not None:
            self._answers.append((held_sync, sync_error(fenced, "replaced by a new member")))
        rt.sessions.pop(old, None)
        rt.sessions[member.member_id] = now_ms + member.session_timeout_ms
        if old not in g.members:  # a new member of this round: not recorded yet
            self._add_to_round(txn, member, req.protocol_type, ticket, now_ms, new=True)
            return
        phase = self._phase(txn)
        unchanged = same_protocols(member, g.members[old].member)
        leader_answered = g.leader_id  # the old id when it led: the new one must not assign
        txn.emit(ClassicMemberReplaced(g.group_id, old, member))
        if phase == cgm.STABLE and unchanged:
            answer = current_generation(txn.group, member.member_id, leader_answered)
            self._answers.append((ticket, answer))
        else:
            self._add_to_round(txn, member, req.protocol_type, ticket, now_ms, new=False)

    def _add_to_round(
        self,
        txn: Txn,
        member: ClassicMember,
        protocol_type: str,
        ticket: int,
        now_ms: int,
        new: bool,
    ) -> None:
        rt = txn.rt
        if not rt.in_round:
            self._start_round(txn, now_ms)
        if not rt.joined:
            rt.protocol_type = protocol_type
        previous = rt.joined.pop(member.member_id, None)
        if previous is not None and previous.ticket != ticket:
            answer = join_error(ErrorCode.REBALANCE_IN_PROGRESS, "joined again")
            self._answers.append((previous.ticket, answer))
        rt.joined[member.member_id] = Joining(member, ticket)
        rt.round_deadline_ms = max(
            rt.round_deadline_ms, rt.round_started_ms + member.rebalance_timeout_ms
        )
        delay = self.config.initial_rebalance_delay_ms
        if new and delay and rt.not_before_ms > rt.round_started_ms:
            # the first round of an empty group: each newcomer extends the wait a little
            rt.not_before_ms = min(now_ms + delay, rt.round_deadline_ms)
        self._maybe_complete(txn, now_ms)

    def _start_round(self, txn: Txn, now_ms: int) -> None:
        g, rt = txn.group, txn.rt
        rt.in_round = True
        rt.joined = {}
        rt.round_started_ms = now_ms
        rt.round_deadline_ms = now_ms + g.max_rebalance_timeout_ms()
        from_empty = not g.members and self.config.initial_rebalance_delay_ms > 0
        rt.not_before_ms = now_ms + self.config.initial_rebalance_delay_ms if from_empty else now_ms
        for held in rt.awaiting_sync.values():
            self._answers.append((held, sync_error(ErrorCode.REBALANCE_IN_PROGRESS)))
        rt.awaiting_sync = {}

    def _maybe_complete(self, txn: Txn, now_ms: int) -> None:
        g, rt = txn.group, txn.rt
        if not rt.in_round:
            return
        # Member ids handed out with MEMBER_ID_REQUIRED count as members on their way in:
        # waiting for them spares a second round when members start together.
        everyone = all(mid in rt.joined for mid in g.members) and not rt.pending_ids
        if now_ms >= rt.round_deadline_ms or (everyone and now_ms >= rt.not_before_ms):
            self._complete(txn, now_ms)

    def _complete(self, txn: Txn, now_ms: int) -> None:
        g, rt = txn.group, txn.rt
        joined = [j.member for j in rt.joined.values()]
        kept = [
            m.member
            for mid, m in sorted(g.members.items())
            if joined and mid not in rt.joined and m.member.group_instance_id is not None
        ]
        members = joined + kept
        protocol = select_protocol(members)
        if members and protocol is None:  # cannot happen: every join is checked
            members, protocol = joined, select_protocol(joined)
        leader = (
            g.leader_id if g.leader_id in rt.joined else (joined[0].member_id if joined else "")
        )
        ptype = rt.protocol_type if joined else g.protocol_type
        generation = g.generation + 1
        txn.emit(ClassicGroupJoined(g.group_id, generation, ptype, protocol, leader, members))
        for j in rt.joined.values():
            listed = []
            if j.member.member_id == leader:
                listed = [
                    cgm.ClassicJoinedMember(
                        m.member_id, m.group_instance_id, m.metadata_for(protocol)
                    )
                    for m in members
                ]
            response = cgm.ClassicJoinGroupResponse(
                ErrorCode.NONE, generation, ptype, protocol, leader, j.member.member_id, listed
            )
            self._answers.append((j.ticket, response))
        rt.in_round = False
        rt.joined = {}
        rt.sessions = {m.member_id: now_ms + m.session_timeout_ms for m in members}
        rt.sync_deadline_ms = now_ms + max((m.rebalance_timeout_ms for m in members), default=0)

    def _remove(self, txn: Txn, gone: set[str], now_ms: int) -> None:
        g, rt = txn.group, txn.rt
        recorded = sorted(m for m in gone if m in g.members)
        if not rt.in_round and not g.rebalancing:
            # The round is recorded before the removal: a long decision may be committed in
            # several entries, and a group that lost members must never look settled.
            txn.emit(ClassicRebalanceStarted(g.group_id, g.generation))
        if recorded:
            txn.emit(ClassicMembersRemoved(g.group_id, recorded))
        unknown = ErrorCode.UNKNOWN_MEMBER_ID
        for mid in sorted(gone):
            rt.sessions.pop(mid, None)
            held = rt.joined.pop(mid, None)
            if held is not None:
                self._answers.append((held.ticket, join_error(unknown, "removed")))
            held_sync = rt.awaiting_sync.pop(mid, None)
            if held_sync is not None:
                self._answers.append((held_sync, sync_error(unknown, "removed")))
        if not rt.in_round:
            self._start_round(txn, now_ms)
        self._maybe_complete(txn, now_ms)

    def _expire(self, txn: Txn, now_ms: int) -> None:
        g, rt = txn.group, txn.rt
        for pending, expiry in list(rt.pending_ids.items()):
            if expiry <= now_ms:
                del rt.pending_ids[pending]
        expired = {
            mid
            for mid, m in g.members.items()
            if mid not in rt.joined
            and mid not in rt.awaiting_sync
            and rt.sessions.setdefault(mid, now_ms + m.member.session_timeout_ms) <= now_ms
        }
        if expired:
            self._remove(txn, expired, now_ms)
        elif rt.in_round:
            self._maybe_complete(txn, now_ms)
        elif g.phase == cgm.COMPLETING_REBALANCE and now_ms >= rt.sync_deadline_ms:
            unsynced = {mid for mid in g.members if mid not in rt.awaiting_sync}
            if unsynced:
                self._remove(txn, unsynced, now_ms)
            else:  # no leader left to assign: everyone rejoins
                self._start_round(txn, now_ms)
                self._maybe_complete(txn, now_ms)

    # -- bookkeeping ---------------------------------------------------------------------------

    def _phase(self, txn: Txn) -> str:
        return cgm.PREPARING_REBALANCE if txn.rt.in_round else txn.group.phase

    def _reply(self, ticket: int, response: Any) -> Decision:
        self._answers.append((ticket, response))
        return Decision([])

    def _open(self, state: MetadataState, group_id: str, now_ms: int) -> Txn:
        durable = state.classic_groups.group(group_id)
        rt = self._groups.get(group_id)
        generation = durable.generation if durable is not None else 0
        rebalancing = durable.rebalancing if durable is not None else False
        if rt is None or rt.generation != generation or rt.rebalancing != rebalancing:
            if rt is not None:  # a decision of ours was not committed: start over
                self._answers += fail_held(rt)
            rt = fresh_runtime(durable, now_ms)
            self._groups[group_id] = rt
        return Txn(copy_group(durable, group_id), rt)

    def _close(self, txn: Txn) -> list[MetadataRecord]:
        g, rt = txn.group, txn.rt
        if rt.in_round and not g.rebalancing:
            txn.emit(ClassicRebalanceStarted(g.group_id, g.generation))
        rt.generation, rt.rebalancing = g.generation, g.rebalancing
        idle = not (rt.in_round or rt.pending_ids or rt.awaiting_sync or g.members)
        if idle:
            self._groups.pop(txn.gid, None)
        return txn.records
