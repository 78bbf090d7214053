"""Fuzzing the pre-authentication paths of the two ports that are not client listeners (the
client listeners' are in tests/unit/broker/test_preauth_fuzz.py): the Raft port's hello check
and the HTTP port's request-head parser and access decision, fed random and structured-random
bytes by a peer without the secret or the token.

Whatever arrives, nothing but the typed refusals escapes, the bytes held stay within the
port's fixed bound, a hello without the secret is never accepted, and nothing but the probes
is answered without the token. A second or two in CI; RILLET_FUZZ_EXAMPLES raises the
examples for a long run.
"""

from __future__ import annotations

import os
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.broker.http.access import PROBE_PATHS, AccessPolicy
from rillet.broker.http.errors import HttpError
from rillet.broker.http.request_parser import RequestHeadParser
from rillet.raft.peer_mac import NONCE_BYTES, derive_key
from rillet.raft.transport_hello import HELLO_FRAME_MAX_BYTES, BadHello, Hello, HelloCheck

EXAMPLES = int(os.environ.get("RILLET_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None)
HEAD_MAX_BYTES = 8192
TOKEN = "a-token-of-the-operators-0123456789"

# A stranger's bytes: random, or a frame header declaring some length then random bytes.
stranger_bytes = st.one_of(
    st.binary(max_size=300),
    st.builds(
        lambda length, rest: struct.pack(">I", length) + rest,
        st.integers(0, 2**32 - 1),
        st.binary(max_size=200),
    ),
)


@FUZZ
@given(data=stranger_bytes, chunk=st.integers(1, 64))
def test_a_hello_without_the_secret_is_refused_and_bounded(data: bytes, chunk: int) -> None:
    """Read as the transport reads (never more than the check wants), a stranger's bytes end
    in a refusal or a wait for more, never in a hello, and at most one hello frame is held."""
    check = HelloCheck(
        derive_key("the real cluster secret", b"test"), b"n" * NONCE_BYTES, 1, {2, 3}
    )
    held = 0
    offset = 0
    while offset < len(data):
        wanted = check.wanted
        assert 0 < wanted <= HELLO_FRAME_MAX_BYTES
        piece = data[offset : offset + min(chunk, wanted)]
        offset += len(piece)
        held += len(piece)
        assert held <= HELLO_FRAME_MAX_BYTES
        verdict = check.feed(piece)
        assert not isinstance(verdict, Hello)
        if isinstance(verdict, BadHello):
            return


http_heads = st.one_of(
    st.binary(max_size=2 * HEAD_MAX_BYTES),
    st.builds(
        lambda method, target, headers: (
            method
            + b" "
            + target
            + b" HTTP/1.1\r\n"
            + b"".join(h + b"\r\n" for h in headers)
            + b"\r\n"
        ),
        st.sampled_from([b"GET", b"HEAD", b"POST", b"G\x00T", b""]),
        st.one_of(
            st.sampled_from([b"/health", b"/ready", b"/metrics", b"/api/cluster", b"/"]),
            st.binary(max_size=40),
        ),
        st.lists(
            st.one_of(
                st.builds(lambda v: b"Host: " + v, st.binary(max_size=40)),
                st.builds(lambda v: b"Authorization: " + v, st.binary(max_size=60)),
                st.binary(max_size=60),
            ),
            max_size=6,
        ),
    ),
)


@FUZZ
@given(data=http_heads, chunk=st.integers(1, 4096))
def test_an_http_head_parses_or_is_refused_within_its_bound(data: bytes, chunk: int) -> None:
    """A request head is parsed or refused with an HTTP status (HttpError); the parser never
    holds more than its bound plus one read; the access decision answers nothing but the
    probes to a request without the token, whatever its Host and Authorization say."""
    parser = RequestHeadParser(HEAD_MAX_BYTES)
    policy = AccessPolicy(["node1.example"], token=TOKEN)
    for start in range(0, len(data), chunk):
        try:
            request = parser.feed(data[start : start + chunk])
        except HttpError as refused:
            assert 400 <= refused.status < 600
            return
        assert start <= HEAD_MAX_BYTES + chunk
        if request is None:
            continue
        access = policy.admit(request.path, request.header("host"), request.header("authorization"))
        if request.path not in PROBE_PATHS and request.path != "/metrics":
            assert access.refusal is not None
        if request.path == "/metrics":
            assert not access.detail
        return
