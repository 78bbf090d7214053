"""``[quotas]`` in node.toml: byte-rate quotas per principal (docs/security.md, "Quotas").

Kafka's quota keys: ``producer_byte_rate`` and ``consumer_byte_rate`` in bytes per second,
0 for unlimited. The section's own rates are the default for every principal (Kafka's
``/users/<default>``); ``[[quotas.users]]`` tables override them for one principal.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class UserQuotaConfig:
    principal: str = ""  # User:<name>, as the principal an authenticated client gets
    producer_byte_rate: int = 0
    consumer_byte_rate: int = 0

    def __post_init__(self) -> None:
        if not self.principal.startswith("User:") or len(self.principal) == len("User:"):
            raise ValueError(f"principal must look like User:<name>, not {self.principal!r}")


@dataclass(frozen=True, slots=True)
class QuotasConfig:
    producer_byte_rate: int = 0
    consumer_byte_rate: int = 0
    # The burst a principal may take at once: this many milliseconds of its rate.
    quota_window_ms: int = 1_000
    users: tuple[UserQuotaConfig, ...] = field(default=(), metadata={"item": UserQuotaConfig})

    def __post_init__(self) -> None:
        if self.quota_window_ms < 1:
            raise ValueError(f"quota_window_ms must be >= 1, not {self.quota_window_ms}")
        seen = [u.principal for u in self.users]
        duplicates = sorted({p for p in seen if seen.count(p) > 1})
        if duplicates:
            raise ValueError(f"quotas.users names {', '.join(duplicates)} more than once")
