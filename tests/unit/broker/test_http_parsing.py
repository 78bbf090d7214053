"""The HTTP endpoint's request parsing and its trio driver, over in-memory streams."""

from __future__ import annotations

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.broker.config.http_config import HttpConfig
from rillet.broker.http.errors import HttpError
from rillet.broker.http.request_parser import MAX_HEAD_BYTES, RequestHeadParser, parse_head
from rillet.broker.http.server import (
    REQUEST_HEAD_TIMEOUT_MS,
    HttpResponse,
    HttpServer,
    encode_response,
    plain,
)


def test_a_request_head_arriving_in_pieces() -> None:
    parser = RequestHeadParser()
    raw = b"GET /metrics?x=1 HTTP/1.1\r\nHost: n1:9620\r\nAccept: text/plain\r\n\r\n"
    for i in range(len(raw) - 1):
        assert parser.feed(raw[i : i + 1]) is None
    request = parser.feed(raw[-1:])
    assert request is not None
    assert (request.method, request.path, request.query) == ("GET", "/metrics", "x=1")
    assert request.header("host") == "n1:9620"
    assert request.header("missing") is None


@pytest.mark.parametrize(
    ("head", "status"),
    [
        (b"POST /x HTTP/1.1", 405),
        (b"DELETE / HTTP/1.1", 405),
        (b"GET / HTTP/2.0", 505),
        (b"GET / HTTP/1.1 extra", 400),
        (b"GET  HTTP/1.1", 400),
        (b"GET http://a/ HTTP/1.1", 400),
        (b"GET /\xff HTTP/1.1", 400),
        (b"G(T / HTTP/1.1", 400),
        (b"GET / HTTP/1.1\r\nno colon here", 400),
        (b"GET / HTTP/1.1\r\nBad Name: v", 400),
        (b"GET / HTTP/1.1\r\nContent-Length: 5", 400),
        (b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked", 400),
    ],
)
def test_bad_heads_get_the_status_to_answer_with(head: bytes, status: int) -> None:
    with pytest.raises(HttpError) as info:
        parse_head(head)
    assert info.value.status == status


def test_a_head_over_the_bound_is_refused_before_it_is_complete() -> None:
    parser = RequestHeadParser()
    parser.feed(b"GET / HTTP/1.1\r\n")
    with pytest.raises(HttpError) as info:
        parser.feed(b"X-Pad: " + b"a" * MAX_HEAD_BYTES)
    assert info.value.status == 431


def test_too_many_header_fields_are_refused() -> None:
    head = b"GET / HTTP/1.1" + b"\r\nA: b" * 100
    with pytest.raises(HttpError) as info:
        parse_head(head)
    assert info.value.status == 431


@settings(max_examples=300)
@given(st.lists(st.binary(max_size=200), max_size=20))
def test_any_bytes_give_a_request_none_or_an_http_error(chunks: list[bytes]) -> None:
    parser = RequestHeadParser(max_head_bytes=1024)
    try:
        for chunk in chunks:
            if parser.feed(chunk) is not None:
                return
    except HttpError as exc:
        assert 400 <= exc.status < 600


def test_responses_name_their_length_and_close() -> None:
    raw = encode_response(HttpResponse(200, b"abc", "text/plain"))
    assert raw.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"Content-Length: 3\r\n" in raw and b"Connection: close\r\n" in raw
    assert raw.endswith(b"\r\n\r\nabc")
    assert encode_response(plain(503, "fenced"), head_only=True).endswith(b"\r\n\r\n")


async def exchange(server: HttpServer, request: bytes) -> bytes:
    client, served = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.handle, served)
        await client.send_all(request)
        out = b""
        while chunk := await client.receive_some(65536):
            out += chunk
    return out


async def test_the_server_routes_one_request_and_closes() -> None:
    seen = []

    def route(request: object) -> HttpResponse:
        seen.append(request)
        return plain(200, "ok")

    server = HttpServer(route)
    out = await exchange(server, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 200 OK") and out.endswith(b"ok\n")
    head = await exchange(server, b"HEAD /health HTTP/1.1\r\n\r\n")
    assert head.endswith(b"\r\n\r\n")
    bad = await exchange(server, b"PUT / HTTP/1.1\r\n\r\n")
    assert bad.startswith(b"HTTP/1.1 405 ")
    assert len(seen) == 2 and server.open_connections == 0


async def test_a_failing_route_answers_500_and_the_server_goes_on() -> None:
    def route(request: object) -> HttpResponse:
        raise RuntimeError("boom")

    out = await exchange(HttpServer(route), b"GET / HTTP/1.1\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 500 ")


async def test_a_route_may_answer_with_an_awaitable_run_in_the_connection_task() -> None:
    async def answer() -> HttpResponse:
        await trio.sleep(0)  # a worker thread's result, for the message browser
        return plain(200, "decoded")

    out = await exchange(HttpServer(lambda r: answer()), b"GET /x HTTP/1.1\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 200 OK") and out.endswith(b"decoded\n")


async def test_a_client_that_never_finishes_its_head_gets_408(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = HttpServer(lambda r: plain(200, "ok"))
    client, served = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.handle, served)
        await client.send_all(b"GET / HTTP/1.1\r\n")
        started = trio.current_time()
        out = b""
        while chunk := await client.receive_some(65536):
            out += chunk
    assert out.startswith(b"HTTP/1.1 408 ")
    assert trio.current_time() - started >= REQUEST_HEAD_TIMEOUT_MS / 1000


async def test_connections_over_the_cap_are_closed_at_once() -> None:
    server = HttpServer(lambda r: plain(200, "ok"), max_connections=0)
    out = await exchange(server, b"GET / HTTP/1.1\r\n\r\n")
    assert out == b""


async def test_the_head_deadline_is_a_setting_well_under_a_probe_period(
    autojump_clock: trio.testing.MockClock,
) -> None:
    deadline_ms = HttpConfig().request_head_timeout_ms
    assert deadline_ms <= 1_000  # a probe every 10 s finds idle slots long freed
    server = HttpServer(lambda r: plain(200, "ok"), request_head_timeout_ms=deadline_ms)
    client, served = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.handle, served)
        started = trio.current_time()
        out = b""
        while chunk := await client.receive_some(65536):
            out += chunk
    assert out.startswith(b"HTTP/1.1 408 ")
    assert trio.current_time() - started < 1.5
