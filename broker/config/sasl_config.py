"""``[sasl]``: what a node spends on logins, for both listeners (docs/configuration-security.md)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SaslConfig:
    # Kafka's connection.failed.authentication.delay.ms: a failed login is answered this
    # long after its check; each further failure of the same user name or address doubles
    # it (and spaces their checks by it) up to failed_authentication_delay_max_ms. 0: off.
    failed_authentication_delay_ms: int = 100
    failed_authentication_delay_max_ms: int = 5_000
    # User names and addresses whose failures are remembered (least recent forgotten first).
    failed_authentication_tracked_max: int = 10_000
    # Worker threads that check passwords at once (PBKDF2, off the event loop): more
    # guessers wait for one instead of taking every core (one: at most one core).
    password_check_threads: int = 1

    def __post_init__(self) -> None:
        if self.failed_authentication_delay_ms < 0:
            raise ValueError("failed_authentication_delay_ms must be >= 0 (0: no delay)")
        if self.failed_authentication_delay_max_ms < self.failed_authentication_delay_ms:
            raise ValueError(
                "failed_authentication_delay_max_ms must be >= failed_authentication_delay_ms"
            )
        if self.failed_authentication_tracked_max < 1:
            raise ValueError("failed_authentication_tracked_max must be >= 1")
        if self.password_check_threads < 1:
            raise ValueError("password_check_threads must be >= 1")
