"""``[authorizer]`` in node.toml: whether requests need ACLs, and who the super users are.

A section of the node's configuration, kept apart from :mod:`rillet.broker.security.authorizer` (the
decision itself) so the configuration knows no request-path code.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class AuthorizerConfig:
    """``[authorizer]`` in node.toml (Kafka's ``authorizer.class.name`` and ``super.users``).

    Off by default: every client may do everything, as in a Kafka cluster without an
    authorizer. On, a request needs an ACL (or a super user); every node of a cluster must
    have the same setting.
    """

    enabled: bool = False
    # Principals allowed everything, semicolon-separated (a certificate's name has commas):
    # "User:admin;User:CN=ops,O=Example".
    super_users: str = ""

    def __post_init__(self) -> None:
        bad = [u for u in self.super_user_set if not u.startswith("User:") or u == "User:"]
        if bad:
            raise ValueError(f"authorizer.super_users: {', '.join(bad)} is not User:<name>")

    @property
    def super_user_set(self) -> frozenset[str]:
        return frozenset(u.strip() for u in self.super_users.split(";") if u.strip())
