"""The controller service on the in-memory quorum: it runs only on the leader, moves with
leadership, and the new controller carries on from the committed state."""

from __future__ import annotations

import random

import pytest
import trio
import trio.testing
from sim_quorum import SimCluster

from rillet.metadata_quorum.controller import Controller, ControllerConfig
from rillet.metadata_quorum.controller_service import ControllerService, DecideFn
from rillet.metadata_quorum.decision import Decision
from rillet.metadata_quorum.follower import MetadataFollower
from rillet.metadata_quorum.records import (
    NO_LEADER,
    ControllerActivated,
    FenceBroker,
    RegisterBroker,
    decode_entry,
)
from rillet.metadata_quorum.state import MetadataState
from rillet.raft.errors import NotLeaderError, ProposalOutcomeUnknown

TIMEOUT_MS = 3000


def now_ms() -> int:
    return int(trio.current_time() * 1000)


@pytest.mark.parametrize("seed", range(5))
async def test_controller_follows_leadership_and_fences_silent_brokers(
    seed: int, autojump_clock: trio.testing.MockClock
) -> None:
    cluster = SimCluster([1, 2, 3], random.Random(seed), commit_delay_s=0.005)
    services = {}
    async with trio.open_nursery() as nursery:
        for node_id, quorum in cluster.members.items():
            follower = MetadataFollower(quorum)
            service = ControllerService(
                quorum, follower, ControllerConfig(TIMEOUT_MS), random.Random(seed), now_ms, 100
            )
            services[node_id] = (follower, service)
            nursery.start_soon(follower.run)
            nursery.start_soon(service.run)
        with trio.fail_after(1):  # a new cluster's first controller also sets its level
            while not any(service.active for _, service in services.values()):
                await trio.sleep(0.001)
        assert services[1][1].active and not services[2][1].active
        with pytest.raises(NotLeaderError):
            await services[2][1].submit(lambda c, s, n: c.tick(s, n))

        async def call(decide: DecideFn) -> Decision:
            """A client: retry against whichever member is the active controller."""
            with trio.fail_after(30):
                while True:
                    for _, service in services.values():
                        if service.active:
                            try:
                                return await service.submit(decide)
                            except (NotLeaderError, ProposalOutcomeUnknown):
                                pass
                    await trio.sleep(0.05)

        async def heartbeats(broker: int) -> None:
            while True:

                def beat(c: Controller, s: MetadataState, n: int, b: int = broker) -> Decision:
                    reg = s.brokers.get(b)
                    epoch = reg.broker_epoch if reg else -1
                    return c.heartbeat(s, b, epoch, True, n)

                await call(beat)
                await trio.sleep(0.5)

        for b in (1, 2, 3):
            await call(
                lambda c, s, n, b=b: c.register_broker(s, RegisterBroker(b, f"inc{b}", "h", b), n)
            )
        async with trio.open_nursery() as beats:
            for b in (1, 2, 3):
                beats.start_soon(heartbeats, b)
            await trio.sleep(1)
            await call(lambda c, s, n: c.create_topic(s, "t", 6, 3, {}))
            # the controller moves while brokers keep heartbeating
            cluster.elect(2)
            await trio.sleep(1)
            assert services[2][1].active and not services[1][1].active
            state = services[2][0].state
            assert state.unfenced_brokers() == [1, 2, 3]
            # broker 3 goes silent: the new controller fences it and moves its leadership
            beats.cancel_scope.cancel()
        async with trio.open_nursery() as beats:
            for b in (1, 2):
                beats.start_soon(heartbeats, b)
            await trio.sleep(TIMEOUT_MS / 1000 + 1)
            beats.cancel_scope.cancel()
        state = services[2][0].state
        assert state.brokers[3].fenced and not state.brokers[1].fenced
        for p in state.partitions.values():
            assert p.leader in (1, 2) and p.leader != NO_LEADER and 3 not in p.isr
        snapshots = {f.state.to_snapshot() for f, _ in services.values()}
        assert len(snapshots) == 1  # every member derived the same registries
        nursery.cancel_scope.cancel()


async def test_seed_9_a_new_controller_decides_only_after_its_barrier_is_applied(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Chaos seed 9: a new Raft leader does not know which earlier entries are committed
    until one of its own term commits, so a controller started on "the commit index"
    decided on stale state (a partition's old leader and ISR) and its records, applied
    after the newer ones, made a replica with a truncated log the leader. The controller
    now first commits a ControllerActivated record and waits until it is applied."""
    cluster = SimCluster([1, 2, 3], random.Random(9), commit_delay_s=0.005)
    services = {}
    async with trio.open_nursery() as nursery:
        for node_id, quorum in cluster.members.items():
            follower = MetadataFollower(quorum)
            service = ControllerService(
                quorum, follower, ControllerConfig(TIMEOUT_MS), random.Random(9), now_ms, 100
            )
            services[node_id] = (follower, service)
            nursery.start_soon(follower.run)
            nursery.start_soon(service.run)
        await trio.sleep(0.1)
        for node_id in (1, 2):
            if node_id == 2:
                term = cluster.elect(2)
                await trio.sleep(0.1)
            follower, service = services[node_id]
            assert service.active
            barriers = [
                (e.index, records[0])
                for e in cluster.log
                if isinstance((records := decode_entry(e.data))[0], ControllerActivated)
            ]
            index, barrier = barriers[-1]
            assert barrier.node_id == node_id
            assert node_id == 1 or barrier.term == term
            assert follower.state.last_applied_index >= index
        nursery.cancel_scope.cancel()


async def test_seeds_2_6_7_10_11_14_a_tick_that_does_not_commit_restarts_the_controller(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Chaos seeds 2, 6, 7, 10, 11 and 14: a controller tick whose records were not
    committed (ProposalOutcomeUnknown as leadership moved) ended the node. Now the
    controller starts over from the committed state and the node keeps running."""
    cluster = SimCluster([1, 2, 3], random.Random(10))
    quorum = cluster.members[1]
    follower = MetadataFollower(quorum)
    service = ControllerService(
        quorum, follower, ControllerConfig(TIMEOUT_MS), random.Random(10), now_ms, 100
    )
    real_propose = quorum.propose
    failures = [ProposalOutcomeUnknown("leadership changed")]

    async def flaky_propose(data: bytes) -> int:
        if failures and FenceBroker in {type(r) for r in decode_entry(data)}:
            raise failures.pop()
        return await real_propose(data)

    quorum.propose = flaky_propose  # type: ignore[method-assign]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(follower.run)
        nursery.start_soon(service.run)
        await trio.sleep(0.1)
        await service.submit(
            lambda c, s, n: c.register_broker(s, RegisterBroker(5, "inc5", "h", 5), n)
        )
        await service.submit(  # unfenced once, then silent
            lambda c, s, n: c.heartbeat(s, 5, s.brokers[5].broker_epoch, True, n)
        )
        with trio.fail_after(30):  # the silent broker is fenced, first failing, then for real
            while not any(
                isinstance(r, FenceBroker) for e in cluster.log for r in decode_entry(e.data)
            ):
                await trio.sleep(0.1)
        assert not failures and service.active
        assert len(service.terms_led) == 2  # the same term, led twice
        nursery.cancel_scope.cancel()


async def test_a_new_controller_fences_at_once_a_silent_broker_whose_listener_refuses(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The probe of silent brokers: broker 3 died with the old controller (its listener
    refuses); brokers 1 and 2 heartbeat. Broker 3 is fenced well before the 3 s grace."""
    cluster = SimCluster([1, 2, 3], random.Random(4), commit_delay_s=0.005)
    probed: list[tuple[str, int]] = []

    async def refuses(host: str, port: int) -> bool:
        probed.append((host, port))
        return port == 3

    services = {}
    async with trio.open_nursery() as nursery:
        for node_id, quorum in cluster.members.items():
            follower = MetadataFollower(quorum)
            service = ControllerService(
                quorum,
                follower,
                ControllerConfig(TIMEOUT_MS),
                random.Random(4),
                now_ms,
                100,
                listener_refuses=refuses,
            )
            services[node_id] = (follower, service)
            nursery.start_soon(follower.run)
            nursery.start_soon(service.run)
        await trio.sleep(0.02)  # a barrier, then a new cluster's feature level
        first = services[1][1]
        for b in (1, 2, 3):
            await first.submit(
                lambda c, s, n, b=b: c.register_broker(s, RegisterBroker(b, f"inc{b}", "h", b), n)
            )
            await first.submit(
                lambda c, s, n, b=b: c.heartbeat(s, b, s.brokers[b].broker_epoch, True, n)
            )
        await first.submit(lambda c, s, n: c.create_topic(s, "t", 6, 3, {}))
        assert not services[1][0].state.brokers[3].fenced
        assert probed == []  # every broker was heard from (it registered)
        cluster.elect(2)
        await trio.sleep(0.05)
        new = services[2][1]
        assert new.active
        moved_at = trio.current_time()
        for b in (1, 2):
            await new.submit(
                lambda c, s, n, b=b: c.heartbeat(s, b, s.brokers[b].broker_epoch, True, n)
            )
        with trio.fail_after(1.0):  # the grace is 3 s
            while not services[2][0].state.brokers[3].fenced:
                await trio.sleep(0.01)
        assert trio.current_time() - moved_at < 1.0
        state = services[2][0].state
        assert all(p.leader in (1, 2) and 3 not in p.isr for p in state.partitions.values())
        assert ("h", 3) in probed and ("h", 2) not in probed  # itself is never probed
        nursery.cancel_scope.cancel()


async def test_a_lost_heartbeat_connection_whose_listener_refuses_fences_before_the_grace(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A killed broker's heartbeat connection closes and its listener refuses at the same
    time: the controller fences it at once instead of after the 500 ms lost-connection
    grace. A broker whose connection closed but whose listener accepts keeps the grace."""
    cluster = SimCluster([1], random.Random(5), commit_delay_s=0.005)
    quorum = cluster.members[1]
    follower = MetadataFollower(quorum)

    async def refuses(host: str, port: int) -> bool:
        return port == 3

    service = ControllerService(
        quorum,
        follower,
        ControllerConfig(TIMEOUT_MS),
        random.Random(5),
        now_ms,
        100,
        listener_refuses=refuses,
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(follower.run)
        nursery.start_soon(service.run)
        await trio.sleep(0.05)
        for b in (2, 3):
            await service.submit(
                lambda c, s, n, b=b: c.register_broker(s, RegisterBroker(b, f"inc{b}", "h", b), n)
            )
            await service.submit(
                lambda c, s, n, b=b: c.heartbeat(s, b, s.brokers[b].broker_epoch, True, n)
            )
        state = follower.state
        lost_at = trio.current_time()
        service.broker_connection_lost(2, state.brokers[2].broker_epoch)
        service.broker_connection_lost(3, state.brokers[3].broker_epoch)
        with trio.fail_after(1.0):
            while not follower.state.brokers[3].fenced:
                await trio.sleep(0.01)
        assert trio.current_time() - lost_at < 0.2  # the grace is 0.5 s
        assert not follower.state.brokers[2].fenced  # still within its grace
        nursery.cancel_scope.cancel()


async def test_a_connection_lost_after_the_controller_stopped_is_ignored(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A node stopping cancels its controller, and the brokers' heartbeat connections close
    after it: the loss must not start a probe in the controller's closed nursery (it raised
    "Nursery is closed to new arrivals", logged at ERROR on every clean stop)."""
    cluster = SimCluster([1], random.Random(7), commit_delay_s=0.005)
    quorum = cluster.members[1]
    follower = MetadataFollower(quorum)
    service = ControllerService(
        quorum, follower, ControllerConfig(TIMEOUT_MS), random.Random(7), now_ms, 100
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(follower.run)
        async with trio.open_nursery() as controller_scope:
            controller_scope.start_soon(service.run)
            await trio.sleep(0.05)
            await service.submit(
                lambda c, s, n: c.register_broker(s, RegisterBroker(2, "inc2", "h", 2), n)
            )
            await service.submit(
                lambda c, s, n: c.heartbeat(s, 2, s.brokers[2].broker_epoch, True, n)
            )
            assert not follower.state.brokers[2].fenced
            controller_scope.cancel_scope.cancel()  # the node stops
        service.broker_connection_lost(2, follower.state.brokers[2].broker_epoch)
        nursery.cancel_scope.cancel()


async def test_every_proposed_entry_reports_its_commit_latency(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The Raft append-latency metric: one observation per entry the controller commits."""
    cluster = SimCluster([1], random.Random(6), commit_delay_s=0.005)
    quorum = cluster.members[1]
    follower = MetadataFollower(quorum)
    seen: list[float] = []
    service = ControllerService(
        quorum, follower, ControllerConfig(TIMEOUT_MS), random.Random(6), now_ms, 100,
        on_commit_s=seen.append,
    )  # fmt: skip
    async with trio.open_nursery() as nursery:
        nursery.start_soon(follower.run)
        nursery.start_soon(service.run)
        await trio.sleep(0.05)
        before = len(seen)
        await service.submit(
            lambda c, s, n: c.register_broker(s, RegisterBroker(2, "inc2", "h", 2), n)
        )
        assert len(seen) == before + 1
        assert seen[-1] == pytest.approx(0.005)  # the simulated commit delay
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("offset_s", [0.05, 0.15, 0.25, 0.35, 0.45])
async def test_a_silent_broker_is_fenced_when_its_session_ends_not_at_the_next_tick(
    offset_s: float, autojump_clock: trio.testing.MockClock
) -> None:
    """Ticks come every 500 ms; a broker whose lease ends between two ticks used to be fenced
    at the next one, up to 500 ms late, which a paused partition leader's clients waited out
    on top of the session timeout. The controller now ticks when the first lease ends
    (heartbeats at five points between two regular ticks, each fenced on time)."""
    cluster = SimCluster([1], random.Random(7), commit_delay_s=0.005)
    quorum = cluster.members[1]
    follower = MetadataFollower(quorum)
    service = ControllerService(
        quorum, follower, ControllerConfig(TIMEOUT_MS), random.Random(7), now_ms, 500
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(follower.run)
        nursery.start_soon(service.run)
        await trio.sleep(0.05)
        await service.submit(
            lambda c, s, n: c.register_broker(s, RegisterBroker(2, "i", "h", 2), n)
        )
        await trio.sleep(offset_s)
        await service.submit(lambda c, s, n: c.heartbeat(s, 2, s.brokers[2].broker_epoch, True, n))
        last_heard = trio.current_time()
        with trio.fail_after(TIMEOUT_MS / 1000 + 1):
            while not follower.state.brokers[2].fenced:
                await trio.sleep(0.001)
        late_s = trio.current_time() - last_heard - TIMEOUT_MS / 1000
        assert -0.001 < late_s < 0.05  # the commit and this poll, not a tick interval
        nursery.cancel_scope.cancel()
