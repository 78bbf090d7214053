"""The budgeted reader on real socket pairs: bytes already there are read after one wait,
with no further schedule point (each costs a turn of every busy task under load), within
the budget; the end of the stream still comes out as before."""

from __future__ import annotations

import socket

import trio
from task_steps import TaskSteps

from rillet.broker.network.read_shares import RequestBytesBudget
from rillet.broker.network.request_budget import BudgetedReader, ReadTimers


def _reader(budget: RequestBytesBudget) -> tuple[BudgetedReader, socket.socket]:
    ours, theirs = socket.socketpair()
    stream = trio.SocketStream(trio.socket.from_stdlib_socket(ours))
    timers = ReadTimers(60.0, 60.0, trio.current_time())
    return BudgetedReader(stream, budget, 65536, timers), theirs


async def test_waiting_for_the_bytes_is_the_only_schedule_point() -> None:
    budget = RequestBytesBudget(1 << 20)
    reader, peer = _reader(budget)
    received: list[bytes] = []
    async with trio.open_nursery() as nursery:

        async def read() -> None:
            received.append(await reader.receive())

        nursery.start_soon(read)
        await trio.testing.wait_all_tasks_blocked()  # the reader waits for bytes
        (task,) = [t for t in nursery.child_tasks]
        counter = TaskSteps(task)
        trio.lowlevel.add_instrument(counter)
        peer.send(b"request bytes")
    trio.lowlevel.remove_instrument(counter)
    assert received == [b"request bytes"]
    assert counter.count == 1  # woken by the socket, read and returned in one step
    reader.decoded(0, 1)
    reader.close()
    assert budget.available_bytes == 1 << 20  # every byte taken was given back
    peer.close()


async def test_the_end_of_the_stream_is_reported_as_before() -> None:
    budget = RequestBytesBudget(1 << 20)
    reader, peer = _reader(budget)
    peer.send(b"last words")
    peer.close()
    assert await reader.receive() == b"last words"
    assert await reader.receive() == b""
    reader.decoded(0, 1)
    assert budget.available_bytes == 1 << 20
