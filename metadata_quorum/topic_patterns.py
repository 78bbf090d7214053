"""Topic-name patterns of group subscriptions, with RE2 (linear-time matching).

A member may subscribe by pattern, and the coordinator matches it against every topic name
on the controller. A backtracking engine (Python's ``re``) takes exponential time on
patterns like ``(a+)+`` against names like ``aaaa…!``: one heartbeat would stall the
controller. RE2 matches in time linear in the name, caps a compiled pattern's memory and
refuses what it cannot run that way (back-references, look-around). It is the engine of
Kafka's own ``subscribed_topic_regex`` (RE2/J), so Kafka clients' patterns mean the same
here. A pattern matches the whole topic name.
"""

from __future__ import annotations

from typing import Any

import re2  # type: ignore[import-untyped]

MAX_PATTERN_MEMORY_BYTES = 1 << 20  # per compiled pattern (RE2's default is 8 MiB)


class BadPattern(ValueError):
    """A pattern RE2 cannot compile (the reason is RE2's)."""


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # refusals are answered, not written to the node's stderr
    options.max_mem = MAX_PATTERN_MEMORY_BYTES
    return options


def compile_pattern(pattern: str) -> Any:
    """The compiled pattern; raises :class:`BadPattern`."""
    try:
        return re2.compile(pattern, _options())
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        text = reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
        raise BadPattern(text) from None


def matching(pattern: str, names: dict[str, str]) -> set[str]:
    """The values of ``names`` (topic name -> topic id) whose name the pattern matches
    whole; none for a pattern RE2 refuses (one recorded before patterns were checked
    with RE2)."""
    try:
        compiled = compile_pattern(pattern)
    except BadPattern:
        return set()
    return {tid for name, tid in names.items() if compiled.fullmatch(name) is not None}
