"""A trimmed deferred reply: awaited, it returns the trimmed answer; discarded before it
ran, closing it closes the handler's coroutine too (no "never awaited" warning on a node
whose connection closed with such a reply queued)."""

from __future__ import annotations

import inspect

import pytest
import trio

from rillet.broker.handlers.driving_reply import ReshapedReply


async def _answer(value: int) -> int:
    await trio.lowlevel.checkpoint()
    return value


async def test_awaiting_it_returns_the_trimmed_answer() -> None:
    assert await ReshapedReply(_answer(20), lambda v: v + 1) == 21


async def test_an_error_in_the_handler_reaches_the_caller() -> None:
    async def failing() -> int:
        await trio.lowlevel.checkpoint()
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad"):
        await ReshapedReply(failing(), lambda v: v)


def test_closing_it_unstarted_closes_the_handler_s_coroutine() -> None:
    inner = _answer(1)
    ReshapedReply(inner, lambda v: v).close()
    assert inspect.getcoroutinestate(inner) == inspect.CORO_CLOSED


async def test_cancelled_while_waiting_it_ends_the_handler_s_coroutine() -> None:
    inner = _answer(1)
    with trio.CancelScope() as scope:
        scope.cancel()
        await ReshapedReply(inner, lambda v: v)
    assert inspect.getcoroutinestate(inner) == inspect.CORO_CLOSED
