"""The server-side assignors: complete, exclusive, deterministic, balanced, sticky.

Property-based over seeded random groups (members, subscriptions, partition counts), so a
failure names the seed that reproduces it.
"""

from __future__ import annotations

import random

import pytest

from rillet.metadata_quorum.assignors import (
    ASSIGNORS,
    Assignment,
    UnknownAssignor,
    assign,
    sticky_assign,
)

SEEDS = range(200)


def random_group(
    rng: random.Random, same_subscriptions: bool
) -> tuple[dict[str, frozenset[str]], dict[str, int]]:
    topics = {f"t{i}": rng.randint(1, 12) for i in range(rng.randint(1, 4))}
    members = [f"m{i:02d}" for i in range(rng.randint(1, 7))]
    if same_subscriptions:
        subs = {m: frozenset(topics) for m in members}
    else:
        subs = {
            m: frozenset(rng.sample(sorted(topics), rng.randint(1, len(topics)))) for m in members
        }
    return subs, topics


def check_complete_and_exclusive(
    result: Assignment, subs: dict[str, frozenset[str]], topics: dict[str, int]
) -> None:
    seen: set[tuple[str, int]] = set()
    for member, parts in result.items():
        for tp in parts:
            assert tp not in seen, f"{tp} assigned twice"
            assert tp[0] in subs[member], f"{member} got {tp} without subscribing"
            seen.add(tp)
    wanted = {
        (t, p) for t, n in topics.items() for p in range(n) if any(t in s for s in subs.values())
    }
    assert seen == wanted


@pytest.mark.parametrize("name", sorted(ASSIGNORS))
@pytest.mark.parametrize("same", [True, False])
def test_every_subscribed_partition_has_exactly_one_owner(name: str, same: bool) -> None:
    for seed in SEEDS:
        rng = random.Random(seed)
        subs, topics = random_group(rng, same)
        result = assign(name, subs, topics, {})
        check_complete_and_exclusive(result, subs, topics)


@pytest.mark.parametrize("name", sorted(ASSIGNORS))
def test_assignment_is_deterministic_whatever_the_input_order(name: str) -> None:
    for seed in SEEDS:
        subs, topics = random_group(random.Random(seed), False)
        reordered_subs = dict(reversed(list(subs.items())))
        reordered_topics = dict(reversed(list(topics.items())))
        assert assign(name, subs, topics, {}) == assign(name, reordered_subs, reordered_topics, {})


@pytest.mark.parametrize("name", ["roundrobin", "sticky"])
def test_same_subscriptions_are_balanced_within_one_partition(name: str) -> None:
    for seed in SEEDS:
        subs, topics = random_group(random.Random(seed), True)
        sizes = [len(p) for p in assign(name, subs, topics, {}).values()]
        assert max(sizes) - min(sizes) <= 1, f"seed {seed}: {sizes}"


def test_range_balances_each_topic_within_one_partition() -> None:
    for seed in SEEDS:
        subs, topics = random_group(random.Random(seed), True)
        result = assign("range", subs, topics, {})
        for t in topics:
            sizes = [len([tp for tp in parts if tp[0] == t]) for parts in result.values()]
            assert max(sizes) - min(sizes) <= 1


def test_sticky_moves_only_what_balance_requires_when_a_member_joins_or_leaves() -> None:
    for seed in SEEDS:
        rng = random.Random(seed)
        subs, topics = random_group(rng, True)
        before = sticky_assign(subs, topics, {})
        total = sum(topics.values())
        # a member joins: only partitions moving to it change owner, and only its fair share
        joined = {**subs, "zz": frozenset(topics)}
        after = sticky_assign(joined, topics, before)
        check_complete_and_exclusive(after, joined, topics)
        moved = sum(len(before[m] - after[m]) for m in before)
        assert moved == len(after["zz"]) <= total // len(joined) + 1, f"seed {seed}"
        # a member leaves: only its partitions move
        if len(subs) > 1:
            gone = sorted(subs)[0]
            rest = {m: s for m, s in subs.items() if m != gone}
            after = sticky_assign(rest, topics, before)
            kept = {m: before[m] & after[m] for m in rest}
            assert all(kept[m] == before[m] for m in rest), f"seed {seed}: survivors lost some"


def test_sticky_keeps_a_balanced_assignment_unchanged() -> None:
    for seed in SEEDS:
        subs, topics = random_group(random.Random(seed), True)
        first = sticky_assign(subs, topics, {})
        assert sticky_assign(subs, topics, first) == first


def test_unknown_assignor_is_a_typed_error() -> None:
    with pytest.raises(UnknownAssignor, match="known: range, roundrobin, sticky"):
        assign("fair", {}, {}, {})
