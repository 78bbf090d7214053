"""Server-side cost of a SASL login: SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN exchanges per
second on one core, with kafka-python's SCRAM client playing the client.

Measures the node's part only (what limits how fast one node can accept logins): a SCRAM
exchange costs the server a few HMACs (the client does the PBKDF2), PLAIN costs the server
a PBKDF2 at the credential's iteration count, and a failed PLAIN login one per SCRAM
mechanism (a user's own credentials or decoys: the same work for unknown users). Prints
one JSON line.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

from _common import emit, parser
from kafka.net.sasl.scram import ScramClient

from rillet.broker.security.sasl.decoys import decoy_credential
from rillet.broker.security.sasl.plain import authenticate_plain
from rillet.broker.security.sasl.scram import SaslAuthenticationFailed, ScramServer, make_credential

DECOY = partial(decoy_credential, b"bench-decoy-key")


def scram_per_s(mechanism: str, iterations: int, rounds: int) -> float:
    credential = make_credential(mechanism, "secret", iterations)
    lookup = lambda user, m: credential if m == mechanism else None  # noqa: E731
    clients = []
    for _ in range(rounds):  # the clients' PBKDF2 is theirs: done before the clock starts
        client = ScramClient("user", "secret", mechanism)
        clients.append(client)
    server_s = 0.0
    for client in clients:
        server = ScramServer(mechanism, lookup, decoy=DECOY)
        first = client.first_message()
        started = time.perf_counter()
        answer = server.first(first)
        server_s += time.perf_counter() - started
        client.process_server_first_message(answer)
        final = client.final_message()
        started = time.perf_counter()
        server.final(final)
        server_s += time.perf_counter() - started
    return rounds / server_s


def plain_per_s(iterations: int, rounds: int, message: bytes = b"\0user\0secret") -> float:
    """PLAIN logins a second: ``message`` the right password, or a wrong one."""
    credential = make_credential("SCRAM-SHA-256", "secret", iterations)
    lookup = lambda user, m: credential if m == "SCRAM-SHA-256" else None  # noqa: E731
    started = time.perf_counter()
    for _ in range(rounds):
        try:
            authenticate_plain(message, lookup, DECOY)
        except SaslAuthenticationFailed:
            pass
    return rounds / (time.perf_counter() - started)


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--rounds", type=int, default=300)
    p.add_argument("--iterations", type=int, default=8192)
    args = p.parse_args()
    results: dict[str, Any] = {
        "scram_sha_256_per_s": round(scram_per_s("SCRAM-SHA-256", args.iterations, args.rounds)),
        "scram_sha_512_per_s": round(scram_per_s("SCRAM-SHA-512", args.iterations, args.rounds)),
        "plain_per_s": round(plain_per_s(args.iterations, max(1, args.rounds // 10))),
        "plain_failed_per_s": round(
            plain_per_s(args.iterations, max(1, args.rounds // 10), b"\0user\0wrong")
        ),
    }
    emit("sasl_auth", vars(args), results)


if __name__ == "__main__":
    main()
