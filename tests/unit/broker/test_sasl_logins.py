"""SASL logins as the node runs them (broker/security/sasl/login_guard.py around the sans-I/O
exchange): password checks run on worker threads, so the event loop keeps serving while
logins fail; an unknown user costs the same PBKDF2 work and gets the same answers as a
known one; failures wait out their backoff, are counted by mechanism and logged."""

from __future__ import annotations

import base64
import hashlib
import logging
from collections.abc import Callable
from typing import Any

import pytest
import trio
import trio.testing
from kafka.net.sasl.scram import ScramClient

from rillet.broker.config.sasl_config import SaslConfig
from rillet.broker.runtime.loop_lag import CpuWaitClock
from rillet.broker.security.sasl.exchange import PasswordCheck, SaslExchange, SaslStep
from rillet.broker.security.sasl.login_guard import LoginGuard
from rillet.broker.security.sasl.scram import Lookup, ScramCredential, make_credential
from rillet.broker.security.session import Session
from rillet.wire.error_codes import ErrorCode

KEY = b"k" * 32
FAILED = ErrorCode.AUTHENTICATION_FAILED


def lookup_of(user: str, password: str) -> Lookup:
    table = {m: make_credential(m, password) for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")}

    def lookup(name: str, mechanism: str) -> ScramCredential | None:
        return table.get(mechanism) if name == user else None

    return lookup


def exchange(mechanism: str, lookup: Lookup, host: str = "10.0.0.1") -> SaslExchange:
    sasl = SaslExchange((mechanism,), lookup, Session("kafka", host), KEY)
    assert sasl.handshake(mechanism) == ErrorCode.NONE
    return sasl


def run_step(sasl: SaslExchange, token: bytes) -> SaslStep:
    """One authenticate message, its check run here (as the guard's thread would)."""
    step = sasl.authenticate(token)
    if isinstance(step, PasswordCheck):
        return sasl.checked(step.run())
    return step


def pbkdf2_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    calls: list[tuple[str, int]] = []
    real: Callable[..., bytes] = hashlib.pbkdf2_hmac

    def counting(name: str, password: bytes, salt: bytes, iterations: int, *a: Any) -> bytes:
        calls.append((name, iterations))
        return real(name, password, salt, iterations, *a)

    monkeypatch.setattr(hashlib, "pbkdf2_hmac", counting)
    return calls


def test_a_plain_login_of_an_unknown_user_does_the_work_of_a_known_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lookup = lookup_of("alice", "s3cret")
    calls = pbkdf2_calls(monkeypatch)
    known = run_step(exchange("PLAIN", lookup), b"\0alice\0wrong")
    known_calls = list(calls)
    calls.clear()
    unknown = run_step(exchange("PLAIN", lookup), b"\0mallory\0wrong")
    assert known_calls == [("sha256", 8192), ("sha512", 8192)]
    assert calls == known_calls  # same derivations, same iteration counts
    assert known == unknown and known.error_code == FAILED
    assert run_step(exchange("PLAIN", lookup), b"\0alice\0s3cret").error_code == ErrorCode.NONE


def test_scram_answers_an_unknown_user_like_a_known_one_and_fails_at_the_proof() -> None:
    lookup = lookup_of("alice", "s3cret")

    def server_first(user: str) -> dict[str, str]:
        sasl = exchange("SCRAM-SHA-256", lookup)
        client = ScramClient(user, "guess", "SCRAM-SHA-256")
        first = run_step(sasl, client.first_message())
        assert first.error_code == ErrorCode.NONE
        fields = dict(f.split("=", 1) for f in first.token.decode().split(","))
        client.process_server_first_message(first.token)
        final = run_step(sasl, client.final_message())
        assert final.error_code == FAILED and sasl.failed
        return fields

    alice, mallory, again = server_first("alice"), server_first("mallory"), server_first("mallory")
    assert mallory["i"] == alice["i"] == "8192"
    assert len(base64.b64decode(mallory["s"])) == len(base64.b64decode(alice["s"])) == 32
    assert again["s"] == mallory["s"]  # an unknown user's salt is as stable as a real one
    assert server_first("eve")["s"] != mallory["s"]


async def test_failed_plain_logins_leave_the_event_loop_responsive() -> None:
    """40 failed PLAIN logins at once (each two PBKDF2s of 8192 rounds, milliseconds of
    CPU): a task that wakes every 5 ms is never more than 100 ms late for the loop's own
    work."""
    guard = LoginGuard(SaslConfig(failed_authentication_delay_ms=0))
    lookup = lookup_of("alice", "s3cret")
    steps: list[SaslStep] = []
    worst_late_s = 0.0
    done = trio.Event()

    cpu_wait = CpuWaitClock()  # the machine is shared: time spent waiting for a core
    # is not the loop's own (as the node's rillet_event_loop_own_lag_max_seconds)

    async def ticker() -> None:
        nonlocal worst_late_s
        while not done.is_set():
            due, waited_ms = trio.current_time() + 0.005, cpu_wait.read_ms()
            await trio.sleep(0.005)
            late_s = trio.current_time() - due - (cpu_wait.read_ms() - waited_ms) / 1000
            worst_late_s = max(worst_late_s, late_s)

    async def login(i: int) -> None:
        session = Session("kafka", f"10.0.0.{i}")
        sasl = guard.exchange(("PLAIN",), lookup, session)
        sasl.handshake("PLAIN")
        steps.append(await guard.authenticate(sasl, b"\0alice\0wrong", session))

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ticker)
            async with trio.open_nursery() as logins:
                for i in range(40):
                    logins.start_soon(login, i)
            done.set()
    assert [s.error_code for s in steps] == [FAILED] * 40
    cpu_wait.close()
    assert worst_late_s < 0.1, f"the loop was held {worst_late_s * 1000:.0f} ms"


async def test_failures_wait_their_backoff_are_counted_and_logged(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    guard = LoginGuard(SaslConfig(failed_authentication_delay_ms=100))
    lookup = lookup_of("alice", "s3cret")
    session = Session("native", "10.0.0.7")

    async def attempt(token: bytes) -> tuple[SaslStep, float]:
        sasl = guard.exchange(("PLAIN",), lookup, session)
        sasl.handshake("PLAIN")
        started = trio.current_time()
        step = await guard.authenticate(sasl, token, session)
        return step, trio.current_time() - started

    caplog.set_level(logging.INFO, logger="rillet.broker.security.sasl.login_guard")
    first, first_s = await attempt(b"\0alice\0wrong")
    second, second_s = await attempt(b"\0alice\0wrong")
    assert first.error_code == second.error_code == FAILED
    assert first_s == pytest.approx(0.1, abs=0.01)  # answered after the first delay
    assert second_s == pytest.approx(0.2, abs=0.01)  # doubled
    ok, _ = await attempt(b"\0alice\0s3cret")
    assert ok.error_code == ErrorCode.NONE
    _, after_success_s = await attempt(b"\0alice\0wrong")
    assert after_success_s == pytest.approx(0.1, abs=0.01)  # the success reset it
    assert guard.failures == {("native", "PLAIN"): 3}
    await attempt(b"\0ev\x1bil" + b"x" * 300 + b"\0pw")
    lines = [r.getMessage() for r in caplog.records]
    assert "SASL PLAIN login from 10.0.0.7 (native listener) as 'alice' failed" in lines[0]
    assert "'ev\\x1bil" in lines[-1] and len(lines[-1]) < 250  # escaped and cut
