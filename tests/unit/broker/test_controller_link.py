"""ControllerLink against two voters on loopback: one that never answers, one that does;
and the pause between heartbeats that a new leader named by the local quorum cuts short."""

from __future__ import annotations

from functools import partial

import trio
import trio.testing

from rillet.broker.cluster.controller_link import ControllerLink
from rillet.wire.frame import FileRegion, FrameDecoder
from rillet.wire.messages import MetadataRequest, MetadataResponse
from rillet.wire.protocol import decode_request, encode_response

SILENT, ANSWERING = 1, 2
OLD, NEW = 1, 2  # leaders in turn


async def _serve(answers: bool, seen: list[int], node_id: int, stream: trio.SocketStream) -> None:
    decoder = FrameDecoder()
    try:
        while data := await stream.receive_some(1 << 16):
            decoder.feed(data)
            while (frame := decoder.next_frame()) is not None:
                seen.append(node_id)
                if not answers:
                    continue  # cut off, or paused: the request is never answered
                header, _ = decode_request(frame)
                parts = encode_response(
                    header.correlation_id, MetadataResponse("c", node_id, [], [])
                )
                await stream.send_all(b"".join(p for p in parts if not isinstance(p, FileRegion)))
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass


async def test_seed_37_an_attempt_is_abandoned_when_the_local_quorum_names_a_new_leader(
    nursery: trio.Nursery,
) -> None:
    """Chaos seed 37: after the Raft leader moved, every broker's heartbeat waited a whole
    request timeout (5 s) on the old controller, cut off by a partition, and the new
    controller fenced all three brokers after its 3 s grace. An attempt now moves on to the
    new leader as soon as the local quorum names it."""
    seen: list[int] = []
    voters = {}
    for node_id, answers in ((SILENT, False), (ANSWERING, True)):
        listeners = await nursery.start(
            partial(trio.serve_tcp, partial(_serve, answers, seen, node_id), 0, host="127.0.0.1")
        )
        voters[node_id] = ("127.0.0.1", listeners[0].socket.getsockname()[1])
    leader = [SILENT]
    link = ControllerLink(nursery, voters, request_timeout_s=5.0, local_hint=lambda: leader[0])

    async def elect_the_other() -> None:
        while SILENT not in seen:
            await trio.sleep(0.01)
        leader[0] = ANSWERING

    nursery.start_soon(elect_the_other)
    with trio.fail_after(3.0):  # well before the attempt's 5 s request timeout
        response = await link.call(MetadataRequest(None), deadline_s=10.0)
    assert response.controller_id == ANSWERING
    assert seen[:1] == [SILENT]
    link.close()


async def test_an_answer_from_the_named_leader_is_not_abandoned(nursery: trio.Nursery) -> None:
    seen: list[int] = []
    listeners = await nursery.start(
        partial(trio.serve_tcp, partial(_serve, True, seen, ANSWERING), 0, host="127.0.0.1")
    )
    voters = {ANSWERING: ("127.0.0.1", listeners[0].socket.getsockname()[1])}
    link = ControllerLink(nursery, voters, request_timeout_s=5.0, local_hint=lambda: ANSWERING)
    for _ in range(3):
        response = await link.call(MetadataRequest(None), deadline_s=5.0)
        assert response.controller_id == ANSWERING
    assert seen == [ANSWERING] * 3
    link.close()


async def test_a_pause_between_heartbeats_ends_when_the_local_quorum_names_a_new_leader(
    nursery: trio.Nursery,
) -> None:
    """A deposed controller's broker heartbeats the new controller as soon as its node's
    quorum names it, not a heartbeat interval later: the new controller counts that
    broker's lease from when the quorum last heard its node (docs/chaos-kafka.md)."""
    seen: list[int] = []
    voters = {}
    for node_id in (OLD, NEW):  # both answer as the controller
        listeners = await nursery.start(
            partial(trio.serve_tcp, partial(_serve, True, seen, node_id), 0, host="127.0.0.1")
        )
        voters[node_id] = ("127.0.0.1", listeners[0].socket.getsockname()[1])
    leader: list[int | None] = [OLD]
    changed = [trio.Event()]

    async def local_change() -> None:
        await changed[0].wait()

    def elect(node_id: int | None) -> None:
        leader[0] = node_id
        changed[0].set()
        changed[0] = trio.Event()

    link = ControllerLink(
        nursery,
        voters,
        request_timeout_s=5.0,
        local_hint=lambda: leader[0],
        local_change=local_change,
    )
    assert (await link.call(MetadataRequest(None), deadline_s=5.0)).controller_id == OLD
    await _whole(link, 0.05)  # nothing new: the whole pause
    paused: list[float] = []

    async def heartbeat_pause() -> None:
        started = trio.current_time()
        await link.pause(30.0)
        paused.append(trio.current_time() - started)

    async with trio.open_nursery() as waits:
        waits.start_soon(heartbeat_pause)
        await trio.testing.wait_all_tasks_blocked()
        elect(None)  # deposed, no successor known yet: still waiting
        await trio.testing.wait_all_tasks_blocked()
        assert paused == []
        elect(NEW)
    assert paused and paused[0] < 5.0
    # Named again before it answered: once per leader, or a quorum naming a voter that does
    # not answer as the controller yet would make a loop of heartbeats.
    elect(NEW)
    await _whole(link, 0.05)
    assert (await link.call(MetadataRequest(None), deadline_s=5.0)).controller_id == NEW
    await _whole(link, 0.05)
    link.close()


async def _whole(link: ControllerLink, seconds: float) -> None:
    started = trio.current_time()
    await link.pause(seconds)
    assert trio.current_time() - started >= seconds
