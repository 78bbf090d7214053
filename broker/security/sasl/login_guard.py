"""The node's side of every SASL login that checks a password: the trio driver around
:class:`SaslExchange` (sans-I/O) and :class:`FailureBackoff` (sans-I/O).

One per node, shared by both listeners. It runs each password check on a worker thread,
at most ``password_check_threads`` at once (PBKDF2 releases the GIL, so the event loop
keeps serving while guessers wait for a thread), delays and spaces failures per user name
and per address, counts failures by listener and mechanism (the
``rillet_sasl_authentication_failures`` metric: no user label, since names a guesser
invents would make a series each) and logs them, at most a few lines a second.
"""

from __future__ import annotations

import logging
import secrets
from collections import Counter
from collections.abc import Callable

import trio

from rillet.broker.config.sasl_config import SaslConfig
from rillet.broker.security.sasl.backoff import FailureBackoff, Key
from rillet.broker.security.sasl.decoys import KEY_BYTES
from rillet.broker.security.sasl.exchange import PasswordCheck, SaslExchange, SaslStep
from rillet.broker.security.sasl.scram import Lookup
from rillet.broker.security.session import Session

log = logging.getLogger(__name__)

MAX_LOGGED_USER_CHARS = 64
MAX_KEY_USER_CHARS = 128  # names longer than this share a backoff key with their prefix
LOG_LINES_PER_S = 5  # failure lines; the rest are counted into the next line
REFUSED = "refused unchecked: too many recent failures for this user or address"


class LoginGuard:
    def __init__(
        self, config: SaslConfig | None = None, clock: Callable[[], float] = trio.current_time
    ) -> None:
        """``clock``: seconds, monotonic (trio's, so tests may run on an autojump clock)."""
        config = config or SaslConfig()
        self._clock = clock
        self._threads = trio.CapacityLimiter(config.password_check_threads)
        self.backoff = FailureBackoff(
            config.failed_authentication_delay_ms / 1000,
            config.failed_authentication_delay_max_ms / 1000,
            config.failed_authentication_tracked_max,
        )
        self.decoy_key = secrets.token_bytes(KEY_BYTES)
        # Failed logins by (listener, mechanism); read by the metrics endpoint.
        self.failures: Counter[tuple[str, str]] = Counter()
        self._log_window_s = -1.0
        self._logged_in_window = 0
        self._unlogged = 0

    def exchange(
        self, mechanisms: tuple[str, ...], lookup: Lookup, session: Session
    ) -> SaslExchange:
        """A connection's exchange, with this node's decoys for unknown users."""
        return SaslExchange(mechanisms, lookup, session, self.decoy_key)

    async def authenticate(self, sasl: SaslExchange, token: bytes, session: Session) -> SaslStep:
        """The answer to one authenticate message, after its password check (if it needs
        one) and, for a failure, after its backoff delay."""
        step = sasl.authenticate(token)
        keys: list[Key] = [("address", session.host)]
        refused = False
        if isinstance(step, PasswordCheck):
            check = step
            keys.append(("user", check.user[:MAX_KEY_USER_CHARS]))
            wait_s = self.backoff.admit(keys, self._clock())
            if wait_s is None:
                refused = True
                step = sasl.refuse(REFUSED)
            else:
                await trio.sleep(wait_s)
                outcome = await trio.to_thread.run_sync(check.run, limiter=self._threads)
                step = sasl.checked(outcome)
        failure = sasl.failure
        if failure is None:
            if sasl.authenticated:
                self.backoff.succeeded(keys)
            return step
        mechanism = failure.mechanism or "none"
        self.failures[(session.listener, mechanism)] += 1
        self._log(session, mechanism, failure.user, failure.reason)
        now = self._clock()
        # A refused attempt was not checked: it waits as a failure does, and earns nothing.
        delay_s = self.backoff.delay_s(keys, now) if refused else self.backoff.failed(keys, now)
        await trio.sleep(delay_s)
        return step

    def _log(self, session: Session, mechanism: str, user: str | None, reason: str) -> None:
        now = self._clock()
        if now - self._log_window_s >= 1.0:
            self._log_window_s, self._logged_in_window = now, 0
        if self._logged_in_window >= LOG_LINES_PER_S:
            self._unlogged += 1
            return
        self._logged_in_window += 1
        name = "-" if user is None else repr(user[:MAX_LOGGED_USER_CHARS])
        more = f" ({self._unlogged} more not logged)" if self._unlogged else ""
        self._unlogged = 0
        log.info(
            "SASL %s login from %s (%s listener) as %s failed: %s%s",
            mechanism,
            session.host,
            session.listener,
            name,
            reason,
            more,
        )
