"""The client's view of the cluster: a metadata cache and one connection per node.

Producer, Consumer and Admin each own one ClusterClient. It learns the cluster from any
bootstrap address, keeps partition leadership in a :class:`ClusterMetadata`, and opens at
most one connection per node, even when many tasks ask for it at once. Its connections' tasks
run in a nursery it is given (``start``) or opens itself (``async with``).

It also watches requests bound to a partition leader (``watch_request``, ``leader_request``):
while one is overdue it re-checks the metadata in the background, and when the metadata
names a new leader the request's owner is told to retry there (leader_watch.py decides).
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Iterable
from types import TracebackType
from typing import Any, Self, TypeVar

import trio

from rillet.client.connection import DEFAULT_MAX_IN_FLIGHT, BrokerConnection
from rillet.client.errors import (
    ClientClosedError,
    ClientTimeoutError,
    ConnectionFailedError,
    LeaderNotAvailableError,
    RilletError,
    UnknownTopicOrPartitionError,
    error_for,
)
from rillet.client.hedged_request import hedged_request
from rillet.client.leader_checks import LeaderChecks
from rillet.client.leader_watch import DEFAULT_LEADER_CHECK_MS, TP, LeaderWatch, OnMoved
from rillet.client.metadata import ClusterMetadata
from rillet.client.node_choice import (
    DEFAULT_CONNECTION_ATTEMPT_DELAY_MS,
    DEFAULT_CONNECTION_SETUP_TIMEOUT_MS,
    DEFAULT_REQUEST_HEDGE_DELAY_MS,
    Candidate,
    NodeChoiceDelays,
    control_candidates,
    is_control_key,
    is_repeatable,
)
from rillet.client.race_runner import race
from rillet.client.sasl import SaslLogin
from rillet.client.types import TopicPartition
from rillet.wire.error_codes import ErrorCode
from rillet.wire.messages import MetadataRequest, MetadataResponse
from rillet.wire.request import Request

R = TypeVar("R")

log = logging.getLogger(__name__)

# What a metadata refresh raises when no node can answer it now: none reachable, none
# answering in time, or each not caught up with the metadata log since it started. Loops
# that refresh until something is known retry these.
REFRESH_FAILURES = (ConnectionFailedError, ClientTimeoutError, LeaderNotAvailableError)

MAX_METADATA_BACKOFF_S = 1.0
# A metadata refresh made because a leader-bound request stalled asks a node that is not
# stalled; it should answer within milliseconds. One that does not (paused too, but not yet
# seen stalled: its requests were sent just before the pause) is left after this long for
# the next node: the checks run one at a time, and a chaos sweep showed a 5 s bound here
# holding every check of a producer up for 5 s while the new leader was long known.
LEADER_CHECK_TIMEOUT_S = 0.5
# ... or this many times the last control request's round trip, when that is longer (a topic of
# thousands of partitions on a busy node answers slowly, and must still be refreshed).
LEADER_CHECK_TIMEOUT_RTTS = 4


def parse_bootstrap(bootstrap: str) -> list[tuple[str, int]]:
    """ "host:port[,host:port...]" -> [(host, port)]; raises ValueError naming the culprit."""
    out = []
    for raw in bootstrap.split(","):
        item = raw.strip()
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"bootstrap address {item!r} is not host:port")
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise ValueError("no bootstrap address given")
    return out


class ClusterClient:
    """Metadata cache and connection pool.

    Use ``async with ClusterClient(...) as cluster`` or call ``start(nursery)`` and
    ``await close()`` yourself.
    """

    def __init__(
        self,
        bootstrap: str,
        *,
        client_id: str | None = None,
        request_timeout_ms: int = 30_000,
        socket_connection_setup_timeout_ms: int = DEFAULT_CONNECTION_SETUP_TIMEOUT_MS,
        connection_attempt_delay_ms: int = DEFAULT_CONNECTION_ATTEMPT_DELAY_MS,
        request_hedge_delay_ms: int = DEFAULT_REQUEST_HEDGE_DELAY_MS,
        max_in_flight_per_connection: int = DEFAULT_MAX_IN_FLIGHT,
        leader_check_ms: int = DEFAULT_LEADER_CHECK_MS,
        ssl_context: ssl.SSLContext | None = None,
        sasl: SaslLogin | None = None,
    ) -> None:
        """``ssl_context``: connect to every node with TLS (see ``client_ssl_context``);
        ``sasl``: log in on every connection (nodes whose listener requires SASL); the
        connection and hedging delays are described in node_choice.py."""
        if leader_check_ms <= 0:
            raise ValueError("leader_check_ms must be positive")
        self.delays = NodeChoiceDelays.from_ms(
            socket_connection_setup_timeout_ms, connection_attempt_delay_ms, request_hedge_delay_ms
        )
        self.ssl_context = ssl_context
        self.sasl = sasl
        self._bootstrap = parse_bootstrap(bootstrap)
        self.client_id = client_id
        self.request_timeout_s = request_timeout_ms / 1000
        self._max_in_flight = max_in_flight_per_connection
        self.metadata = ClusterMetadata()
        # Keys: a node id, or ("bootstrap", host, port) before node ids are known.
        self._connections: dict[object, BrokerConnection] = {}
        self._connecting: dict[object, trio.Event] = {}
        self._nursery: trio.Nursery | None = None  # where background tasks run
        self._nursery_cm: Any = None  # the outer nursery of ``async with``
        self._service_scope: trio.CancelScope | None = None
        self._stopped = trio.Event()
        self._refresh_lock = trio.Lock()
        self._answer_rtt_s = 0.0  # how long the last answer to a control request took
        self._last_refresh: tuple[int, frozenset[str] | None, MetadataResponse] | None = None
        self._closed = False
        # Every node address seen in metadata, kept after the node leaves it (fenced): a
        # bootstrap connection to a stalled node must still be recognised as that node's.
        self._node_addresses: dict[tuple[str, int], int] = {}
        # Leader-bound requests in flight, and when to look for their partitions' new leaders.
        self.leader_watch = LeaderWatch(leader_check_ms / 1000)
        self._leader_checks = LeaderChecks(
            self.leader_watch,
            self.metadata,
            self._refresh_for_leader_check,
            lambda: None if self._closed else self._nursery,
        )
        # The highest metadata log offset any node told this client about (in a Metadata,
        # CreateTopics or DeleteTopics answer); Metadata requests ask for at least this much,
        # so a change the client was told about never disappears when it asks another node.
        self.metadata_offset = -1

    @property
    def closed(self) -> bool:
        """True once the client is closing: a ClientClosedError then means "stop", not
        "this connection went away"."""
        return self._closed

    def saw_metadata_offset(self, offset: int) -> None:
        """A node answered from metadata applied up to ``offset``."""
        self.metadata_offset = max(self.metadata_offset, offset)

    # -- lifecycle ------------------------------------------------------------------------
    #
    # With ``async with``, background tasks (connections, and the clients' own tasks) run in
    # an inner nursery hosted by one service task of the outer nursery. ``stop`` cancels that
    # inner nursery only, so it may be called from anywhere (another task, a nested scope)
    # without touching the caller's own cancel scopes; the outer nursery is left by
    # ``__aexit__`` at the nesting level of the ``async with``.

    def start(self, nursery: trio.Nursery) -> None:
        """Run background tasks in ``nursery`` (which must outlive the client) instead."""
        self._nursery = nursery

    @property
    def nursery(self) -> trio.Nursery:
        """The nursery background tasks run in (clients add their own tasks to it)."""
        if self._nursery is None:
            raise RilletError("ClusterClient is not started (use async with, or start())")
        return self._nursery

    async def _serve(self, *, task_status: trio.TaskStatus[trio.Nursery]) -> None:
        try:
            async with trio.open_nursery() as inner:
                self._service_scope = inner.cancel_scope
                task_status.started(inner)
                await trio.sleep_forever()
        finally:
            self._stopped.set()

    async def __aenter__(self) -> Self:
        self._nursery_cm = trio.open_nursery()
        outer = await self._nursery_cm.__aenter__()
        try:
            self._nursery = await outer.start(self._serve)
        except BaseException as exc:
            outer.cancel_scope.cancel()
            await self._nursery_cm.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        """Stop every background task, close connections, leave the nursery.

        The caller's own exception leaves as itself, not wrapped in an ExceptionGroup by the
        nursery: ``except TopicAlreadyExistsError`` around the block works.
        """
        self.stop_nowait()
        try:
            result: bool | None = await self._nursery_cm.__aexit__(exc_type, exc, tb)
        except BaseExceptionGroup as group:
            single = _single_leaf(group)
            if single is None:
                raise
            leaf = single
        else:
            return result
        raise leaf  # outside the except block: no "during handling" chain to the group

    def stop_nowait(self) -> None:
        """Close every connection (pending requests fail with ClientClosedError) and cancel
        the background tasks; returns at once."""
        self._closed = True
        if self._service_scope is not None:
            # First: tasks blocked on a request then see Cancelled, not the closed connection.
            self._service_scope.cancel()
        connections = list(self._connections.values())
        self._connections.clear()
        for conn in connections:
            conn.close()

    async def stop(self) -> None:
        """``stop_nowait``, then wait until the background tasks have ended."""
        self.stop_nowait()
        if self._service_scope is not None:
            await self._stopped.wait()
        else:
            await trio.lowlevel.checkpoint()

    # -- connections ----------------------------------------------------------------------

    async def _connection(self, key: object, host: str, port: int) -> BrokerConnection:
        """The live connection for ``key``, opening it once however many tasks ask.

        A control connection is open only once the node answered on it (its SASL login, or
        an ApiVersions request): a paused node accepts TCP connections but answers nothing.
        """
        while True:
            if self._closed:
                raise ClientClosedError("client is closed")
            conn = self._connections.get(key)
            if conn is not None and not conn.closed:
                return conn
            opening = self._connecting.get(key)
            if opening is None:
                break
            await opening.wait()  # another task is connecting: use its result
        done = self._connecting[key] = trio.Event()
        try:
            if self._nursery is None:
                raise RilletError("ClusterClient is not started (use async with, or start())")
            conn = BrokerConnection(
                host,
                port,
                client_id=self.client_id,
                max_in_flight=self._max_in_flight,
                ssl_context=self.ssl_context,
                sasl=self.sasl,
            )
            await conn.connect(
                self._nursery, self.delays.connection_setup_timeout_s, probe=is_control_key(key)
            )
            self._connections[key] = conn
            return conn
        finally:
            del self._connecting[key]
            done.set()

    async def connection(self, node_id: int) -> BrokerConnection:
        """The connection to node ``node_id`` (refreshing metadata if the node is unknown)."""
        info = self.metadata.brokers.get(node_id)
        if info is None:
            await self.refresh_metadata()
            info = self.metadata.brokers.get(node_id)
            if info is None:
                raise ConnectionFailedError(f"node {node_id} is not in the cluster metadata")
        return await self._connection(node_id, info.host, info.port)

    async def coordinator_connection(self, node_id: int, host: str, port: int) -> BrokerConnection:
        """A connection of its own to the group coordinator (node ``node_id``), as Kafka's
        clients keep one: a node answers a connection's requests in order, so heartbeats and
        commits must not queue behind this client's long-polling fetches to that node."""
        return await self._connection(("coordinator", node_id), host, port)

    def live_connection(self, node_id: int) -> BrokerConnection | None:
        """The open connection to ``node_id`` if there is one (never waits, never opens)."""
        conn = self._connections.get(node_id)
        return conn if conn is not None and not conn.closed else None

    async def connection_for_leader(self, tp: TopicPartition) -> BrokerConnection:
        """The connection to the partition's leader, refreshing metadata once if unknown."""
        leader = self.leader_for(tp)
        if leader is None:
            await self.refresh_metadata([tp.topic])
            leader = self.leader_for(tp)
            if leader is None:
                code = self.metadata.topic_errors.get(tp.topic, ErrorCode.LEADER_NOT_AVAILABLE)
                raise error_for(code, f"no leader known for {tp.topic}-{tp.partition}")
        return await self.connection(leader)

    async def any_connection(
        self,
        avoid: set[int] | None = None,
        avoid_addresses: frozenset[tuple[str, int]] = frozenset(),
    ) -> BrokerConnection:
        """A live control connection to some node: an open one, a known node, or a
        bootstrap one.

        Control connections carry requests any node can answer (metadata, producer ids,
        admin and group lookups), never the produce and fetch requests of the connections
        to partition leaders (``connection``). A node answers a connection's requests in
        order, so a metadata refresh sent on a leader's connection waited behind its
        acks=all produce requests, which wait for the very ISR change or leader move the
        refresh was meant to find out about (a paused follower or leader: seconds).

        Nodes in ``avoid`` (by default those with a leader-bound request stalled) and the
        addresses in ``avoid_addresses`` are taken only when no other node can be reached.
        """
        if avoid is None:
            avoid = self.leader_watch.stalled_nodes(trio.current_time())
        if avoid or avoid_addresses:
            try:
                return await self._any_connection(avoid, avoid_addresses)
            except ConnectionFailedError:
                pass
        return await self._any_connection(set(), frozenset())

    async def _any_connection(
        self, avoid: set[int], avoid_addresses: frozenset[tuple[str, int]]
    ) -> BrokerConnection:
        """Races the connect phase of the candidates (``control_candidates``): a node that
        does not complete it within ``connection_attempt_delay_ms`` is joined by the next."""
        return await race(
            self._control_candidates(avoid, avoid_addresses),
            lambda c: self._connection(*c),
            self.delays.connection_attempt_delay_s,
            (ConnectionFailedError,),
            "no node reachable",
        )

    def _control_candidates(
        self, avoid: set[int], avoid_addresses: frozenset[tuple[str, int]]
    ) -> list[Candidate]:
        """The nodes a control request may go to, best first (``control_candidates``),
        without the nodes in ``avoid`` and the addresses in ``avoid_addresses``."""
        return control_candidates(
            [(k, c.host, c.port) for k, c in self._connections.items() if not c.closed],
            {node_id: (info.host, info.port) for node_id, info in self.metadata.brokers.items()},
            self._bootstrap,
            lambda key, address: self._node_of(key) in avoid or address in avoid_addresses,
        )

    def _node_of(self, key: object) -> int | None:
        """The node id behind a connection key, when known."""
        if isinstance(key, int):
            return key
        if isinstance(key, tuple) and key and key[0] in ("coordinator", "control"):
            return int(key[1])
        if isinstance(key, tuple) and key and key[0] == "bootstrap":
            return self._node_addresses.get((key[1], key[2]))
        return None

    async def request_any(
        self, request: Request[R], timeout_s: float | None = None, avoid: set[int] | None = None
    ) -> R:
        """Send ``request`` to any node, moving to another if a connection fails, a node
        does not answer in time (a paused node is not asked again while others remain) or
        refuses with LEADER_NOT_AVAILABLE (a node not caught up since it started).

        Each reachable node is tried at most once, so this ends after a bounded number of
        attempts.
        """
        response, _ = await self._request_any(request, timeout_s, avoid, frozenset())
        return response

    async def _request_any(
        self,
        request: Request[R],
        timeout_s: float | None,
        avoid: set[int] | None,
        avoid_addresses: frozenset[tuple[str, int]],
    ) -> tuple[R, tuple[str, int]]:
        """``request_any``, also naming the address that answered; ``avoid`` and
        ``avoid_addresses`` as in ``any_connection``.

        A request that is safe to repeat is hedged (``_hedged_request``); any other is sent
        to one node at a time (only the connect phase is raced), and to the next only after
        the first failed or timed out.
        """
        timeout = self.request_timeout_s if timeout_s is None else timeout_s
        if is_repeatable(request):
            return await self._hedged_request(request, timeout, avoid, avoid_addresses)
        attempts = len(self._bootstrap) + len(self.metadata.brokers) + 1
        last: RilletError | None = None
        failed: set[tuple[str, int]] = set(avoid_addresses)
        for _ in range(attempts):
            conn = await self.any_connection(avoid, frozenset(failed))
            try:
                response = await self._timed_request(conn, request, timeout)
                return response, (conn.host, conn.port)
            except (ConnectionFailedError, ClientTimeoutError) as exc:
                last = exc
                failed.add((conn.host, conn.port))
                conn.close()  # try another node next time round
            except LeaderNotAvailableError as exc:
                # The node refused the whole request: it cannot answer yet (its metadata has
                # not caught up since it started). Another node may; this one stays connected.
                last = exc
                failed.add((conn.host, conn.port))
        assert last is not None
        raise last

    async def _hedged_request(
        self,
        request: Request[R],
        timeout_s: float,
        avoid: set[int] | None,
        avoid_addresses: frozenset[tuple[str, int]],
    ) -> tuple[R, tuple[str, int]]:
        """``request`` to the candidates in turn, one more every hedge delay
        (hedged_request.py): those of ``avoid`` (by default the stalled nodes) and
        ``avoid_addresses`` last."""
        if avoid is None:
            avoid = self.leader_watch.stalled_nodes(trio.current_time())
        preferred = self._control_candidates(avoid, avoid_addresses)
        others = [c for c in self._control_candidates(set(), frozenset()) if c not in preferred]
        return await hedged_request(
            preferred + others,
            lambda c: self._connection(*c),
            lambda conn: self._timed_request(conn, request, timeout_s),
            self.delays.hedge_delay_s(self._answer_rtt_s),
        )

    async def _timed_request(
        self, conn: BrokerConnection, request: Request[R], timeout_s: float
    ) -> R:
        """``conn.request``, remembering how long the answer took; the connection closed
        under it (by another request's failure, not by the client closing) is a failure
        of that connection."""
        started_s = trio.current_time()
        try:
            response = await conn.request(request, timeout_s)
        except ClientClosedError as exc:
            if self._closed:
                raise
            raise ConnectionFailedError(str(exc)) from exc
        self._answer_rtt_s = trio.current_time() - started_s
        return response

    # -- metadata -------------------------------------------------------------------------

    async def refresh_metadata(
        self, topics: Iterable[str] | None = None, auto_create: bool = False
    ) -> MetadataResponse:
        """Fetch metadata (all topics when None) and merge it into ``self.metadata``;
        ``auto_create``: named topics that do not exist are created, where the nodes'
        ``auto.create.topics.enable`` allows it.

        Concurrent calls are coalesced: a caller that waited for another task's refresh of a
        superset of its topics takes that answer instead of asking again (unless it asks to
        create topics, which that refresh may not have).
        """
        wanted = None if topics is None else frozenset(topics)
        version = self.metadata.version
        async with self._refresh_lock:
            last = self._last_refresh
            fresh = last is not None and last[0] > version and not auto_create
            if last is not None and fresh and _covers(last[1], wanted):
                return last[2]
            response = await self._fetch_metadata(
                wanted, self.request_timeout_s, auto_create=auto_create
            )
            self._last_refresh = (self.metadata.version, wanted, response)
            return response

    async def _fetch_metadata(
        self,
        wanted: frozenset[str] | None,
        timeout_s: float,
        avoid: set[int] | None = None,
        auto_create: bool = False,
    ) -> MetadataResponse:
        names = None if wanted is None else sorted(wanted)
        request = MetadataRequest(names, self.metadata_offset, auto_create)
        response: MetadataResponse
        response, address = await self._request_any(request, timeout_s, avoid, frozenset())
        if response.metadata_offset < request.min_metadata_offset:
            response = await self._fresher_answer(request, response, address, timeout_s)
        self.saw_metadata_offset(response.metadata_offset)
        self.metadata.update(response, wanted)
        for b in self.metadata.brokers.values():
            self._node_addresses[(b.host, b.port)] = b.node_id
        # First the leader-bound requests whose leader moved (their owners retry them at the
        # new leaders), then connections to nodes that left the cluster (fenced) are closed.
        self._leader_checks.check()
        departed_keys = [
            k
            for k in self._connections
            if isinstance(k, int) or (isinstance(k, tuple) and k[:1] == ("control",))
        ]
        for key in departed_keys:
            node_id = self._node_of(key)
            if node_id is not None and node_id not in self.metadata.brokers:
                self._connections.pop(key).close()
        return response

    async def _fresher_answer(
        self,
        request: MetadataRequest,
        stale: MetadataResponse,
        address: tuple[str, int],
        timeout_s: float,
    ) -> MetadataResponse:
        """The node at ``address`` could not catch up with what this client has seen (cut
        off from the quorum?): ask one other node, keeping the fresher answer."""
        if not self.metadata.brokers:  # learn the other nodes from the stale answer
            self.metadata.brokers = {b.node_id: b for b in stale.brokers}
        try:
            other, _ = await self._request_any(request, timeout_s, None, frozenset({address}))
        except (ConnectionFailedError, ClientTimeoutError):
            return stale
        fresher: MetadataResponse = other
        return fresher if fresher.metadata_offset > stale.metadata_offset else stale

    # -- leader-bound requests (leader_checks.py) -----------------------------------------

    def watch_request(
        self,
        node_id: int,
        partitions: Iterable[TP],
        on_moved: OnMoved,
        expected_wait_s: float = 0.0,
    ) -> int:
        """Register a request in flight to ``node_id`` for ``partitions`` (sent under the
        leader epochs the metadata has now). Once the metadata names another leader (or a
        newer epoch) for some of them, ``on_moved(those partitions)`` runs (synchronously,
        once per partition): the caller abandons them and retries at the new leader. While
        the request waits longer than ``expected_wait_s`` + ``leader_check_ms``, this client
        refreshes metadata in the background to find out. Call :meth:`unwatch` when the
        request ends. Usable by any leader-bound call (produce, fetch, offset lookups)."""
        return self._leader_checks.watch_request(node_id, partitions, on_moved, expected_wait_s)

    def unwatch(self, token: int) -> None:
        self.leader_watch.unwatch(token)

    async def leader_request(
        self,
        conn: BrokerConnection,
        node_id: int,
        request: Request[R],
        partitions: Iterable[TP],
        timeout_s: float,
        expected_wait_s: float = 0.0,
    ) -> R:
        """``conn.request(request, timeout_s)``, abandoned as soon as the metadata names a
        new leader for any of ``partitions``: then LeaderMovedError (retry at once, at the
        leader the metadata names now)."""
        return await self._leader_checks.leader_request(
            conn, node_id, request, partitions, timeout_s, expected_wait_s
        )

    async def _refresh_for_leader_check(self, topics: frozenset[str], avoid: set[int]) -> None:
        timeout_s = max(LEADER_CHECK_TIMEOUT_S, LEADER_CHECK_TIMEOUT_RTTS * self._answer_rtt_s)
        await self._fetch_metadata(topics, min(self.request_timeout_s, timeout_s), avoid)

    def leader_for(self, tp: TopicPartition | tuple[str, int]) -> int | None:
        return self.metadata.leader_for(tp)

    def partition_count(self, topic: str) -> int | None:
        return self.metadata.partition_count(topic)

    async def wait_for_topic(
        self, topic: str, timeout_s: float, backoff_s: float = 0.05, auto_create: bool = False
    ) -> int:
        """Partition count of ``topic``, refreshing metadata until it exists or time is up.

        Raises UnknownTopicOrPartitionError (or the last error) after ``timeout_s``. With
        ``auto_create`` a missing topic is created where the nodes allow it, and where they
        do not, UnknownTopicOrPartitionError comes at once with the node's reason.
        """
        count = self.partition_count(topic)
        if count is not None:
            return count
        last: RilletError = UnknownTopicOrPartitionError(f"topic {topic!r} does not exist")
        with trio.move_on_after(timeout_s):
            while True:
                response = None
                try:
                    response = await self.refresh_metadata([topic], auto_create)
                except REFRESH_FAILURES as exc:
                    last = exc
                count = self.partition_count(topic)
                if count is not None:
                    return count
                code = self.metadata.topic_errors.get(topic)
                if code is not None:
                    last = error_for(code, _topic_error_message(topic, response))
                    if auto_create and _not_created(code, response):
                        raise error_for(code, _topic_error_message(topic, response, NOT_CREATED))
                    if not code.retriable:
                        raise last
                # Nothing announces a topic's creation: poll, backing off.
                await trio.sleep(backoff_s)
                backoff_s = min(backoff_s * 2, MAX_METADATA_BACKOFF_S)
        raise last


NOT_CREATED = (
    "topic {!r} does not exist, and the node did not create it (auto.create.topics.enable)"
)


def _topic_error_message(
    topic: str, response: MetadataResponse | None, otherwise: str = "topic {!r}"
) -> str:
    """The node's reason for a topic's error, else ``otherwise`` naming the topic."""
    for t in response.topics if response is not None else ():
        if t.name == topic and t.error_message:
            return t.error_message
    return otherwise.format(topic)


def _not_created(code: ErrorCode, response: MetadataResponse | None) -> bool:
    """Whether a node asked to create a topic answered that it does not exist: its
    auto.create.topics.enable is off (or it predates auto-creation), so waiting is futile."""
    return code is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and response is not None


def _single_leaf(group: BaseExceptionGroup[Any]) -> BaseException | None:
    """The only exception inside (possibly nested) groups, or None if there are several."""
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        if len(exc.exceptions) != 1:
            return None
        exc = exc.exceptions[0]
    return exc


def _covers(done: frozenset[str] | None, wanted: frozenset[str] | None) -> bool:
    if done is None:
        return True
    return wanted is not None and wanted <= done
