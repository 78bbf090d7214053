"""Exponential backoff after failed logins, per user name and per client address (sans-I/O).

Without it a guesser opens connections in parallel and tries passwords as fast as the node
checks them. Each failure doubles the delay of its keys (the user name it named and the
address it came from), from the first delay (Kafka's
``connection.failed.authentication.delay.ms``) up to the cap, and a success resets them.
The delay is used twice by the connection's driver:

- the failure answer waits for it (as Kafka delays it), so one connection guesses slowly;
- checks of a key in backoff are spaced by it: each check admitted reserves the next slot,
  so parallel connections wait in turn instead of all checking at once. An attempt whose
  slot would be more than the cap away is refused without a check.

A key is forgotten once quiet for the cap after its last slot, and the table keeps at most
``max_keys`` (the least recently failed go first), so a flood of invented user names costs
bounded memory. Times are seconds from any monotonic clock, passed in.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

Key = Hashable


@dataclass(slots=True)
class _Entry:
    failures: int
    next_check_s: float  # no check of this key starts before this


class FailureBackoff:
    def __init__(self, first_delay_s: float, max_delay_s: float, max_keys: int) -> None:
        if first_delay_s < 0 or max_delay_s < first_delay_s or max_keys < 1:
            raise ValueError("need 0 <= first_delay_s <= max_delay_s and max_keys >= 1")
        self.first_delay_s = first_delay_s
        self.max_delay_s = max_delay_s
        self.max_keys = max_keys
        self._entries: OrderedDict[Key, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def delay_s(self, keys: Sequence[Key], now_s: float) -> float:
        """The delay the keys' failures have earned (0: none)."""
        return max((self._delay_of(e) for e in self._live(keys, now_s)), default=0.0)

    def admit(self, keys: Sequence[Key], now_s: float) -> float | None:
        """Seconds to wait before checking an attempt of these keys (reserving that slot),
        or None to refuse it unchecked (its slot is more than the cap away)."""
        live = self._live(keys, now_s)
        start_s = max([now_s, *(e.next_check_s for e in live)])
        if start_s - now_s > self.max_delay_s:
            return None
        for entry in live:
            entry.next_check_s = start_s + self._delay_of(entry)
        return start_s - now_s

    def failed(self, keys: Sequence[Key], now_s: float) -> float:
        """Count a failed check; the delay before its answer."""
        delay_s = 0.0
        for key in keys:
            entry = self._live([key], now_s)
            if entry:
                entry[0].failures += 1
                self._entries.move_to_end(key)
            else:
                self._entries[key] = _Entry(1, now_s)
            e = self._entries[key]
            e.next_check_s = max(e.next_check_s, now_s + self._delay_of(e))
            delay_s = max(delay_s, self._delay_of(e))
        while len(self._entries) > self.max_keys:
            self._entries.popitem(last=False)
        return delay_s

    def succeeded(self, keys: Sequence[Key]) -> None:
        for key in keys:
            self._entries.pop(key, None)

    def _delay_of(self, entry: _Entry) -> float:
        # 2**failures grows without bound: stop doubling once past the cap.
        doublings = min(entry.failures - 1, 64)
        return min(self.max_delay_s, self.first_delay_s * 2.0**doublings)

    def _live(self, keys: Sequence[Key], now_s: float) -> list[_Entry]:
        """The keys' entries, dropping those quiet for the cap after their last slot."""
        live = []
        for key in keys:
            entry = self._entries.get(key)
            if entry is None:
                continue
            if now_s >= entry.next_check_s + self.max_delay_s:
                del self._entries[key]
                continue
            live.append(entry)
        return live
