"""Where held classic-group requests wait for their answers (the driver's half of tickets).

A handler opens a ticket, hands it to a coordinator decision and waits. The controller
service delivers the answers the coordinator staged once the decision's records are
committed, whichever decision produced them (another member's join, a tick that ended the
round). A ticket whose waiter is gone (connection closed) is dropped; answers for it are
ignored.
"""

from __future__ import annotations

from typing import Any

import trio


class _Slot:
    __slots__ = ("answer", "event")

    def __init__(self) -> None:
        self.event = trio.Event()
        self.answer: Any = None


class HeldAnswers:
    def __init__(self) -> None:
        self._next_ticket = 1
        self._slots: dict[int, _Slot] = {}

    def open(self) -> int:
        ticket = self._next_ticket
        self._next_ticket += 1
        self._slots[ticket] = _Slot()
        return ticket

    def close(self, ticket: int) -> None:
        self._slots.pop(ticket, None)

    def deliver(self, answers: list[tuple[int, Any]]) -> None:
        for ticket, answer in answers:
            slot = self._slots.get(ticket)
            if slot is not None and not slot.event.is_set():
                slot.answer = answer
                slot.event.set()

    async def wait(self, ticket: int, timeout_s: float) -> Any | None:
        """The ticket's answer, or None when none came within ``timeout_s``."""
        slot = self._slots.get(ticket)
        if slot is None:
            return None
        with trio.move_on_after(timeout_s):
            await slot.event.wait()
        return slot.answer

    def __len__(self) -> int:
        return len(self._slots)
