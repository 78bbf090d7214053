"""A deposed Raft leader is reported at once (raft/leadership_report.py), not after the Ready
that persists the new term: the controller on that node stops, and its brokers look for
the new controller, without waiting for an fdatasync (chaos-kafka.md, the pause row).

The decision on its own, then our engine's driver (``RaftQuorum``) with real files and no
sockets: its transport is never started, messages are handed to it as the connection
task that read them would (``_on_message``), and its Readys are carried out in the test's
own task, so each step is observed between the message and the fdatasync.
"""

from __future__ import annotations

from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from rillet.raft.election import CampaignKind
from rillet.raft.errors import ProposalOutcomeUnknown
from rillet.raft.leadership_report import leadership_to_report
from rillet.raft.message_codec import encode_message
from rillet.raft.messages import Heartbeat, Message, VoteResponse
from rillet.raft.quorum import Leadership
from rillet.raft.raft_quorum import RaftQuorum, RaftSettings
from rillet.raft.ready import Role, SoftState
from rillet.raft.transport import PeerAddress

SECRET = "a-cluster-secret-of-some-length"
# Never dialled: the transport does not run, sends only queue.
ADDRESSES = {i: PeerAddress("127.0.0.1", 9) for i in (1, 2, 3)}
LEADER = SoftState(1, Role.LEADER)


def test_a_member_reported_leading_is_reported_deposed_as_soon_as_its_core_steps_down() -> None:
    leading = Leadership(1, 4)
    # A message of a newer term from the new leader: it is named at once.
    assert leadership_to_report(1, leading, SoftState(2, Role.FOLLOWER), 5) == Leadership(2, 5)
    # From a follower answering with its newer term: the leader is not known yet.
    assert leadership_to_report(1, leading, SoftState(None, Role.FOLLOWER), 5) == Leadership(
        None, 5
    )
    # Check-quorum: stepped down in the same term.
    assert leadership_to_report(1, leading, SoftState(None, Role.FOLLOWER), 4) == Leadership(
        None, 4
    )
    # Still leading: nothing new between Readys.
    assert leadership_to_report(1, leading, LEADER, 4) is None


def test_other_changes_wait_for_the_ready_that_persists_them() -> None:
    following = Leadership(2, 4)
    # A follower that hears of a new leader, a candidate that won: reported with their Ready.
    assert leadership_to_report(1, following, SoftState(3, Role.FOLLOWER), 5) is None
    assert leadership_to_report(1, following, LEADER, 5) is None
    assert leadership_to_report(1, following, LEADER, 5, settled=LEADER) == Leadership(1, 5)
    settled = SoftState(3, Role.FOLLOWER)
    assert leadership_to_report(1, following, settled, 5, settled=settled) == Leadership(3, 5)
    # Reported already: nothing new.
    assert leadership_to_report(1, Leadership(3, 5), settled, 5, settled=settled) is None


def test_a_ready_naming_this_member_leader_is_not_reported_once_its_core_stepped_down() -> None:
    deposed = SoftState(2, Role.FOLLOWER)
    assert leadership_to_report(1, Leadership(None, 5), deposed, 6, settled=LEADER) == (
        Leadership(2, 6)
    )


def _deliver(quorum: RaftQuorum, message: Message) -> Coroutine[Any, Any, None] | None:
    """As the connection task that read ``message`` hands it over (nothing else read)."""
    return quorum._on_message(message.sender, encode_message(message, legacy=False), False)


async def _finish(rest: Coroutine[Any, Any, None] | None) -> None:
    if rest is not None:
        await rest


async def _elected(data_dir: Path) -> RaftQuorum:
    """Node 1 of three, leading term 1 (node 2's vote), its no-op durable."""
    quorum = RaftQuorum(1, ADDRESSES, data_dir, SECRET, RaftSettings(commit_timeout_s=30))
    quorum._core.campaign(CampaignKind.ELECTION)
    await _finish(quorum._handle_now())  # term 1 and the vote for itself, synced
    await _finish(_deliver(quorum, VoteResponse(1, 2, 1, granted=True)))
    assert quorum.leadership() == Leadership(1, 1)
    return quorum


async def test_the_driver_reports_the_new_leader_before_the_new_term_is_synced(
    tmp_path: Path,
) -> None:
    quorum = await _elected(tmp_path)
    outcome: list[BaseException | int] = []
    changed: list[Leadership] = []
    try:
        async with trio.open_nursery() as nursery:

            async def propose() -> None:
                try:
                    outcome.append(await quorum.propose(b"a decision"))
                except ProposalOutcomeUnknown as exc:
                    outcome.append(exc)

            async def watch() -> None:
                changed.append(await quorum.wait_for_leadership_change(Leadership(1, 1)))

            nursery.start_soon(propose)
            nursery.start_soon(watch)
            await trio.testing.wait_all_tasks_blocked()
            # Node 3 won term 2 while node 1 was paused; its heartbeat arrives.
            rest = _deliver(quorum, Heartbeat(2, 3, 1, 0))
            assert rest is not None  # the new term must be synced before anything is sent
            assert quorum.leadership() == Leadership(3, 2)  # ... but is known already
            await trio.testing.wait_all_tasks_blocked()
            assert changed == [Leadership(3, 2)]
            with pytest.raises(Exception):  # noqa: B017 - any refusal: it no longer leads
                await quorum.propose(b"another")
            assert outcome == []  # the pending one learns its fate with the Ready
            await rest
        [failed] = outcome
        assert isinstance(failed, ProposalOutcomeUnknown)
        assert quorum.leadership() == Leadership(3, 2)
    finally:
        quorum.close()


async def test_check_quorum_stepping_down_is_reported_at_the_tick(tmp_path: Path) -> None:
    quorum = await _elected(tmp_path)
    try:
        ticks = 0
        while quorum.leadership().leader_id == 1:  # no follower answers
            quorum._tick()
            ticks += 1
            assert ticks <= 2 * RaftSettings().election_timeout_ticks
        assert quorum.leadership() == Leadership(None, 1)
    finally:
        quorum.close()
