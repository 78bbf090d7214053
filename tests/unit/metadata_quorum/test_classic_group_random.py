"""Randomized runs of the classic group coordinator against members that behave like Kafka
clients, with crashes, restarts of static members, leaves, time jumps and controller
changes. After every step: no ticket is answered twice, generations never go back, every
answer of one generation agrees with what that generation recorded, and assignments reach
the members the leader meant them for. At the end, once faults stop, the group settles:
Stable, with exactly the live members, each in the current generation."""

from __future__ import annotations

import random
from dataclasses import dataclass

from classic_group_harness import Harness
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.metadata_quorum.classic_group_records import ClassicGroupJoined
from rillet.metadata_quorum.state import MetadataState
from rillet.wire import classic_group_messages as cgm
from rillet.wire.error_codes import ErrorCode

E = ErrorCode
SESSION_MS, REBALANCE_MS = 10_000, 20_000


@dataclass
class Client:
    name: str
    instance: str | None
    member_id: str = ""
    generation: int = -1
    join_ticket: int | None = None
    sync_ticket: int | None = None
    synced: bool = False
    alive: bool = True


class World:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.h = Harness()
        self.now = 0
        self.clients: list[Client] = []
        self.joined: dict[int, ClassicGroupJoined] = {}  # generation -> its record
        self.sent: dict[int, dict[str, bytes]] = {}  # generation -> the leader's assignment
        self.highest_generation = 0
        self.checked_records = 0

    # -- a member, as a Kafka client behaves ---------------------------------------------

    def join(self, c: Client) -> None:
        c.synced, c.sync_ticket = False, None
        c.join_ticket = self.h.join(
            c.member_id,
            self.now,
            instance=c.instance,
            session_ms=SESSION_MS,
            rebalance_ms=REBALANCE_MS,
            protocols=[("range", c.name.encode())],
        )

    def step(self, c: Client) -> None:
        answers = self.h.answers
        if c.join_ticket is not None:
            if c.join_ticket not in answers:
                return
            a = answers[c.join_ticket]
            c.join_ticket = None
            if a.error_code == E.NONE:
                c.member_id, c.generation = a.member_id, a.generation_id
                plan = {}
                if a.leader_id == a.member_id and a.members:
                    plan = {m.member_id: b"as:" + m.member_id.encode() for m in a.members}
                    self.sent.setdefault(a.generation_id, plan)
                c.sync_ticket = self.h.sync(
                    c.member_id, c.generation, plan, self.now, instance=c.instance
                )
            elif a.error_code in (E.MEMBER_ID_REQUIRED, E.UNKNOWN_MEMBER_ID):
                c.member_id = a.member_id if a.error_code == E.MEMBER_ID_REQUIRED else ""
                self.join(c)
            elif a.error_code == E.FENCED_INSTANCE_ID:
                c.alive = False  # a newer process of this instance took over
            else:
                assert a.error_code in (E.NOT_COORDINATOR, E.REBALANCE_IN_PROGRESS), a
                self.join(c)
            return
        if c.sync_ticket is not None:
            if c.sync_ticket not in answers:
                return
            a = answers[c.sync_ticket]
            c.sync_ticket = None
            if a.error_code == E.NONE:
                c.synced = True
                expected = self.sent.get(c.generation, {}).get(c.member_id, b"")
                assert a.assignment == expected, (c, a, self.sent.get(c.generation))
                return
            if a.error_code == E.UNKNOWN_MEMBER_ID:
                c.member_id = ""
            if a.error_code == E.FENCED_INSTANCE_ID:
                c.alive = False
                return
            self.join(c)
            return
        if not c.member_id or c.generation < 0:
            self.join(c)
            return
        code = self.h.heartbeat(c.member_id, c.generation, self.now, instance=c.instance)
        if code == E.FENCED_INSTANCE_ID:
            c.alive = False
        elif code != E.NONE:
            if code == E.UNKNOWN_MEMBER_ID:
                c.member_id, c.generation = "", -1
            self.join(c)

    # -- faults --------------------------------------------------------------------------------

    def crash(self, c: Client) -> None:
        c.alive = False
        if c.instance is not None:  # its restart comes back under the same instance id
            self.clients.append(Client(c.name + "'", c.instance))

    def leave(self, c: Client) -> None:
        if c.member_id:
            self.h.leave((c.member_id, c.instance), now=self.now)
        c.alive = False
        self.clients.append(Client(c.name + "+", c.instance))

    def failover(self) -> None:
        self.h.collect(self.h.coord.abandon())
        fresh = Harness(state=MetadataState.from_snapshot(self.h.state.to_snapshot()))
        fresh.answers, fresh.records = self.h.answers, self.h.records
        fresh._ticket, fresh._ids = self.h._ticket, self.h._ids
        self.h = fresh

    # -- invariants ----------------------------------------------------------------------------

    def check(self) -> None:
        g = self.h.group()
        if g is not None:
            assert g.generation >= self.highest_generation
            self.highest_generation = g.generation
            instances = [m.member.group_instance_id for m in g.members.values()]
            static = [i for i in instances if i is not None]
            assert len(static) == len(set(static)), instances
        for record in self.h.records[self.checked_records :]:
            if isinstance(record, ClassicGroupJoined):
                assert record.generation not in self.joined, "a generation recorded twice"
                self.joined[record.generation] = record
        self.checked_records = len(self.h.records)
        for a in self.h.answers.values():
            if isinstance(a, cgm.ClassicJoinGroupResponse) and a.error_code == E.NONE:
                record = self.joined[a.generation_id]
                if a.leader_id == a.member_id and a.members:
                    assert [m.member_id for m in a.members] == [m.member_id for m in record.members]
                assert a.protocol_name == record.protocol_name

    def live(self) -> list[Client]:
        return [c for c in self.clients if c.alive]

    def settled(self) -> bool:
        g = self.h.group()
        live = self.live()
        return (
            g is not None
            and g.phase == cgm.STABLE
            and set(g.members) == {c.member_id for c in live}
            and all(c.synced and c.generation == g.generation for c in live)
        )


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_runs_keep_the_invariants_and_settle(seed: int) -> None:
    rng = random.Random(seed)
    w = World(rng)
    for i in range(rng.randint(2, 5)):
        w.clients.append(Client(f"c{i}", f"i{i}" if rng.random() < 0.4 else None))
    for _ in range(rng.randint(20, 120)):
        event = rng.random()
        live = w.live()
        if event < 0.6 and live:
            w.step(rng.choice(live))
        elif event < 0.75:
            w.now += rng.randint(0, 3_000)
            w.h.tick(w.now)
        elif event < 0.82 and len(live) > 1:
            w.crash(rng.choice(live))
        elif event < 0.88 and len(live) > 1:
            w.leave(rng.choice(live))
        elif event < 0.93 and len(w.clients) < 8:
            w.clients.append(Client(f"n{len(w.clients)}", None))
        elif event < 0.97:
            w.failover()
        w.check()
    for _ in range(400):  # no more faults: everyone alive follows the protocol
        if w.settled():
            break
        for c in w.live():
            w.step(c)
            w.check()
        w.now += 1_000
        w.h.tick(w.now)
        w.check()
    assert w.settled(), (seed, w.h.group(), w.live())
    assert w.h.coord.held_tickets() == 0
