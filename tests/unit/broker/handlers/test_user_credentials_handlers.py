"""SCRAM credentials (handlers/user_credentials.py): set and removed by the controller, which
stores StoredKey and ServerKey (never the salted password), listed from any node; unusable
names, mechanisms, iteration counts and salts are refused before anything is decided."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import trio
import trio.testing
from broker_context import middle
from voter_context import answer, voter

from rillet.broker.handlers.user_credentials import (
    handle_alter_user_scram_credentials,
    handle_describe_user_scram_credentials,
)
from rillet.wire.error_codes import ErrorCode
from rillet.wire.user_messages import (
    AlterUserScramCredentialsRequest,
    DescribeUserScramCredentialsRequest,
    ScramCredentialDeletion,
    ScramCredentialUpsert,
)

SALTED = hashlib.pbkdf2_hmac("sha256", b"secret", b"salt", 4096)


def upsert(name: str, iterations: int = 4096, salt: bytes = b"salt") -> ScramCredentialUpsert:
    return ScramCredentialUpsert(name, "SCRAM-SHA-256", iterations, salt, SALTED)


async def test_credentials_are_stored_as_keys_listed_and_removed(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        alice = AlterUserScramCredentialsRequest([upsert("alice"), upsert("bob", 8192)], [])
        done = await answer(handle_alter_user_scram_credentials(v.ctx, alice))
        assert done.error_code == ErrorCode.NONE
        stored = v.state.scram.get("alice", "SCRAM-SHA-256")
        assert stored is not None
        client_key = hmac.digest(SALTED, b"Client Key", "sha256")
        assert stored.stored_key == hashlib.sha256(client_key).digest()
        assert stored.server_key == hmac.digest(SALTED, b"Server Key", "sha256")
        described = handle_describe_user_scram_credentials(
            v.ctx, DescribeUserScramCredentialsRequest(None)
        )
        assert [(u.name, u.error_code, [(c.mechanism, c.iterations) for c in u.credentials])
                for u in described.users] == [
            ("alice", ErrorCode.NONE, [("SCRAM-SHA-256", 4096)]),
            ("bob", ErrorCode.NONE, [("SCRAM-SHA-256", 8192)]),
        ]  # fmt: skip
        removed = AlterUserScramCredentialsRequest(
            [], [ScramCredentialDeletion("alice", "SCRAM-SHA-256")]
        )
        assert (await answer(handle_alter_user_scram_credentials(v.ctx, removed))).error_code == 0
        named = handle_describe_user_scram_credentials(
            v.ctx, DescribeUserScramCredentialsRequest(["alice", "bob", "alice"])
        )
        assert [(u.name, u.error_code) for u in named.users] == [
            ("alice", ErrorCode.RESOURCE_NOT_FOUND),
            ("bob", ErrorCode.NONE),
        ]


async def test_unusable_credentials_are_refused_before_any_decision(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with voter(tmp_path) as v:
        applied = v.state.last_applied_index
        cases = [
            (upsert(""), ErrorCode.UNACCEPTABLE_CREDENTIAL, "empty"),
            (upsert("a", iterations=10), ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few"),
            (upsert("a", iterations=2_000_000), ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many"),
            (upsert("a", salt=b""), ErrorCode.UNACCEPTABLE_CREDENTIAL, "salt"),
            (
                ScramCredentialUpsert("a", "SCRAM-MD5", 4096, b"s", SALTED),
                ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                "SCRAM-MD5",
            ),
        ]
        for change, code, words in cases:
            refused = await answer(
                handle_alter_user_scram_credentials(
                    v.ctx, AlterUserScramCredentialsRequest([change], [])
                )
            )
            assert refused.error_code == code and words in (refused.error_message or "")
        assert v.state.last_applied_index == applied
        broker = await v.broker_only(tmp_path / "broker")
        forwarded = await answer(
            handle_alter_user_scram_credentials(
                broker, AlterUserScramCredentialsRequest([upsert("carol")], [])
            )
        )
        assert forwarded.error_code == ErrorCode.NONE
        assert v.state.scram.get("carol", "SCRAM-SHA-256") is not None
    alone = middle(tmp_path / "alone").ctx
    unreachable = await answer(
        handle_alter_user_scram_credentials(
            alone, AlterUserScramCredentialsRequest([upsert("d")], [])
        )
    )
    assert unreachable.error_code == ErrorCode.NOT_CONTROLLER
