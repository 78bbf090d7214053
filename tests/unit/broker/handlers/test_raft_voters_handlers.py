"""AddRaftVoter and RemoveRaftVoter (handlers/raft_voters.py) on the Raft leader: a cluster
still at the previous release's feature level refuses any voter change (its nodes could not
read the configuration entry), and a malformed voter key is refused before anything else."""

from __future__ import annotations

from pathlib import Path

import trio.testing
from voter_context import answer, voter

from rillet.broker.handlers.raft_voters import handle_add_raft_voter, handle_remove_raft_voter
from rillet.metadata_quorum.features import BASE_LEVEL, RAFT_DIRECTORY_IDS
from rillet.wire.error_codes import ErrorCode
from rillet.wire.raft_voter_messages import AddRaftVoterRequest, RemoveRaftVoterRequest


async def test_a_voter_change_waits_for_the_feature_level_that_carries_directory_ids(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        assert v.state.feature_level >= RAFT_DIRECTORY_IDS  # a new cluster starts there
        v.state.feature_level = BASE_LEVEL  # as if upgraded from the previous release
        add = await answer(
            handle_add_raft_voter(v.ctx, AddRaftVoterRequest(4, "", "127.0.0.1:1", ""))
        )
        remove = await answer(handle_remove_raft_voter(v.ctx, RemoveRaftVoterRequest(1)))
        for refused in (add, remove):
            assert refused.error_code == ErrorCode.UNSUPPORTED_VERSION
            assert "rillet cluster features --upgrade" in refused.error_message


async def test_a_malformed_voter_key_is_refused_first(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        refused = await answer(handle_remove_raft_voter(v.ctx, RemoveRaftVoterRequest(0)))
        assert refused.error_code == ErrorCode.INVALID_VOTER_KEY
        bad_directory = RemoveRaftVoterRequest(2, "not-hex")
        refused = await answer(handle_remove_raft_voter(v.ctx, bad_directory))
        assert refused.error_code == ErrorCode.INVALID_VOTER_KEY
