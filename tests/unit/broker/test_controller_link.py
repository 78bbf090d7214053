"""ControllerLink against two voters on loopback: one that never answers, one that does."""

from __future__ import annotations

from functools import partial

import trio

from rillet.broker.cluster.controller_link import ControllerLink
from rillet.wire.frame import FileRegion, FrameDecoder
from rillet.wire.messages import MetadataRequest, MetadataResponse
from rillet.wire.protocol import decode_request, encode_response

SILENT, ANSWERING = 1, 2


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
