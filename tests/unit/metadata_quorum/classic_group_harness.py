"""A deterministic driver for the classic group coordinator in unit tests.

It plays the controller service's part: each decision's records are applied to the metadata
state (as if committed), then the answers it staged are collected by ticket. Time is given
explicitly to every call.
"""

from __future__ import annotations

from typing import Any

from rillet.metadata_quorum.classic_group_coordinator import ClassicGroupCoordinator
from rillet.metadata_quorum.classic_group_protocol import ClassicGroupConfig
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.records import MetadataRecord, PartitionRecord, TopicRecord
from rillet.metadata_quorum.state import MetadataState
from rillet.wire import classic_group_messages as cgm

GROUP = "g"
RANGE = [("range", b"sub")]


class Harness:
    def __init__(
        self, config: ClassicGroupConfig | None = None, state: MetadataState | None = None
    ) -> None:
        self.state = state if state is not None else MetadataState()
        self.coord = ClassicGroupCoordinator(config)
        self.answers: dict[int, Any] = {}
        self.records: list[MetadataRecord] = []
        self._ticket = 0
        self._ids = 0

    # -- plumbing ------------------------------------------------------------------------------

    def commit(self, decision: Decision) -> Decision:
        if decision.records:
            self.state.apply_entry(self.state.last_applied_index + 1, decision.records)
            self.records += decision.records
        self.collect(self.coord.take_answers())
        return decision

    def collect(self, answers: list[tuple[int, Any]]) -> None:
        for ticket, answer in answers:
            assert ticket not in self.answers, f"ticket {ticket} answered twice"
            self.answers[ticket] = answer

    def ticket(self) -> int:
        self._ticket += 1
        return self._ticket

    def new_member_id(self) -> str:
        self._ids += 1
        return f"m{self._ids}"

    def group(self) -> Any:
        return self.state.classic_groups.group(GROUP)

    def add_topic(self, name: str = "t", partitions: int = 2) -> None:
        records: list[MetadataRecord] = [TopicRecord(name, f"{name}-id")]
        records += [PartitionRecord(f"{name}-id", p, [1], [1], 1) for p in range(partitions)]
        self.state.apply_entry(self.state.last_applied_index + 1, records)

    # -- requests ------------------------------------------------------------------------------

    def join(
        self,
        member_id: str = "",
        now: int = 0,
        instance: str | None = None,
        protocols: list[tuple[str, bytes]] | None = None,
        session_ms: int = 10_000,
        rebalance_ms: int = 30_000,
        require_known: bool = True,
        protocol_type: str = "consumer",
        group: str = GROUP,
    ) -> int:
        req = cgm.ClassicJoinGroupRequest(
            group,
            session_ms,
            rebalance_ms,
            member_id,
            instance,
            protocol_type,
            [cgm.ClassicProtocol(n, md) for n, md in (RANGE if protocols is None else protocols)],
            "client",
            "/127.0.0.1",
            require_known,
        )
        ticket = self.ticket()
        self.commit(self.coord.join(self.state, req, ticket, self.new_member_id(), now))
        return ticket

    def join_new(self, now: int = 0, **kw: Any) -> tuple[str, int]:
        """The two-step join of a new dynamic member: its id and its held join's ticket."""
        first = self.answers[self.join("", now, **kw)]
        assert first.error_code == 79 and first.member_id  # MEMBER_ID_REQUIRED
        return first.member_id, self.join(first.member_id, now, **kw)

    def sync(
        self,
        member_id: str,
        generation: int,
        assignments: dict[str, bytes] | None = None,
        now: int = 0,
        instance: str | None = None,
    ) -> int:
        req = cgm.ClassicSyncGroupRequest(
            GROUP,
            generation,
            member_id,
            instance,
            "consumer",
            None,
            [cgm.ClassicMemberAssignment(m, a) for m, a in (assignments or {}).items()],
        )
        ticket = self.ticket()
        self.commit(self.coord.sync(self.state, req, ticket, now))
        return ticket

    def heartbeat(
        self, member_id: str, generation: int, now: int = 0, instance: str | None = None
    ) -> int:
        req = cgm.ClassicHeartbeatRequest(GROUP, generation, member_id, instance)
        ticket = self.ticket()
        self.commit(self.coord.heartbeat(self.state, req, ticket, now))
        return int(self.answers[ticket].error_code)

    def leave(self, *members: tuple[str, str | None], now: int = 0) -> Any:
        req = cgm.ClassicLeaveGroupRequest(
            GROUP, [cgm.ClassicLeavingMember(m, i) for m, i in members]
        )
        ticket = self.ticket()
        self.commit(self.coord.leave(self.state, req, ticket, now))
        return self.answers[ticket]

    def tick(self, now: int) -> Decision:
        return self.commit(self.coord.tick(self.state, now))

    def stable_group(self, *assignments: bytes) -> list[str]:
        """Members that joined one by one and synced: ids in join order, all Stable in the
        last generation."""
        ids: list[str] = []
        for n in range(len(assignments)):
            mid, ticket = self.join_new()
            tickets = [self.join(other) for other in ids]  # the others rejoin the new round
            ids.append(mid)
            answer = self.answers[ticket]
            assert answer.error_code == 0, answer
            leader = answer.leader_id
            given = dict(zip(ids, assignments[: n + 1], strict=True))
            for other, t in zip(ids[:-1], tickets, strict=True):
                assert self.answers[t].generation_id == answer.generation_id
                if other != leader:
                    self.sync(other, answer.generation_id)
            if mid != leader:
                self.sync(mid, answer.generation_id)
            self.sync(leader, answer.generation_id, given)
        assert self.group().phase == cgm.STABLE
        return ids
