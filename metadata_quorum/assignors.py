"""Server-side partition assignors: range, round-robin and sticky (docs/consumer-groups.md).

Pure and deterministic: the same members, subscriptions and partitions give the same
assignment on every node and every run (members and partitions are sorted; no randomness),
which is what lets any controller recompute a group's target. Every assignor gives each
member only partitions of topics it subscribes to, and every subscribed partition to exactly
one member.

- ``range``: per topic, contiguous ranges of partitions to the members subscribing to it
  (Kafka's RangeAssignor; co-partitioned topics line up).
- ``roundrobin``: all subscribed partitions dealt in order across members.
- ``sticky``: keep each member's previous partitions where still valid, then balance by
  moving as few partitions as possible, so a rebalance disturbs only what it must.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rillet.metadata_quorum.errors import MetadataError

TopicPartitionId = tuple[str, int]
Assignment = dict[str, frozenset[TopicPartitionId]]
Subscriptions = Mapping[str, frozenset[str]]  # member id -> subscribed topic ids
PartitionCounts = Mapping[str, int]  # topic id -> partitions


class UnknownAssignor(MetadataError):
    """A group asked for an assignor this cluster does not have."""


def _members(subscriptions: Subscriptions) -> list[str]:
    return sorted(subscriptions)


def range_assign(
    subscriptions: Subscriptions, partitions: PartitionCounts, previous: Assignment
) -> Assignment:
    out: dict[str, set[TopicPartitionId]] = {m: set() for m in subscriptions}
    for topic_id in sorted(partitions):
        members = [m for m in _members(subscriptions) if topic_id in subscriptions[m]]
        if not members:
            continue
        count = partitions[topic_id]
        per, extra = divmod(count, len(members))
        start = 0
        for i, member in enumerate(members):
            size = per + (1 if i < extra else 0)
            out[member].update((topic_id, p) for p in range(start, start + size))
            start += size
    return {m: frozenset(tps) for m, tps in out.items()}


def roundrobin_assign(
    subscriptions: Subscriptions, partitions: PartitionCounts, previous: Assignment
) -> Assignment:
    members = _members(subscriptions)
    out: dict[str, set[TopicPartitionId]] = {m: set() for m in members}
    if not members:
        return {}
    turn = 0
    for topic_id in sorted(partitions):
        for p in range(partitions[topic_id]):
            for _ in range(len(members)):  # the next member (in turn) subscribing to it
                member = members[turn % len(members)]
                turn += 1
                if topic_id in subscriptions[member]:
                    out[member].add((topic_id, p))
                    break
    return {m: frozenset(tps) for m, tps in out.items()}


def sticky_assign(
    subscriptions: Subscriptions, partitions: PartitionCounts, previous: Assignment
) -> Assignment:
    members = _members(subscriptions)
    if not members:
        return {}
    valid = {
        (t, p)
        for t, count in partitions.items()
        for p in range(count)
        if any(t in subscriptions[m] for m in members)
    }
    out: dict[str, set[TopicPartitionId]] = {m: set() for m in members}
    taken: set[TopicPartitionId] = set()
    for member in members:  # keep what each member had, where it still may have it
        for tp in sorted(previous.get(member, frozenset())):
            if tp in valid and tp not in taken and tp[0] in subscriptions[member]:
                out[member].add(tp)
                taken.add(tp)

    def eligible(tp: TopicPartitionId) -> list[str]:
        return [m for m in members if tp[0] in subscriptions[m]]

    def least_loaded(candidates: list[str]) -> str:
        return min(candidates, key=lambda m: (len(out[m]), m))

    for tp in sorted(valid - taken):  # new or orphaned partitions go to the least loaded
        out[least_loaded(eligible(tp))].add(tp)
    # Balance: move one partition at a time from the most to the least loaded member that
    # may take it, while that narrows the spread. Each move is one partition changing owner.
    for _ in range(len(valid) * len(members) + 1):
        donor = max(members, key=lambda m: (len(out[m]), m))
        moved = False
        for tp in sorted(out[donor], reverse=True):
            takers = [m for m in eligible(tp) if len(out[m]) + 1 < len(out[donor])]
            if takers:
                receiver = least_loaded(takers)
                out[donor].discard(tp)
                out[receiver].add(tp)
                moved = True
                break
        if not moved:
            break
    return {m: frozenset(tps) for m, tps in out.items()}


ASSIGNORS: dict[str, Callable[[Subscriptions, PartitionCounts, Assignment], Assignment]] = {
    "range": range_assign,
    "roundrobin": roundrobin_assign,
    "sticky": sticky_assign,
}
DEFAULT_ASSIGNOR = "sticky"


def assign(
    name: str, subscriptions: Subscriptions, partitions: PartitionCounts, previous: Assignment
) -> Assignment:
    try:
        assignor = ASSIGNORS[name]
    except KeyError:
        known = ", ".join(sorted(ASSIGNORS))
        raise UnknownAssignor(f"unknown assignor {name!r} (known: {known})") from None
    return assignor(subscriptions, partitions, previous)
