"""One client connection on either listener: the trio driver of the connection protocol.

The protocol (broker/network/connection_protocol.py) decides everything between a byte and the
dispatcher; the listener's front end (broker/network/native_front_end.py,
broker/kafka/listener_front_end.py) splits frames and decodes and encodes. This driver only
moves bytes and runs what the protocol asks for: a reader task and a writer task. The
reader reads within the node's request-bytes budget and deadlines
(broker/network/request_budget.py),
decodes each frame (a large one in a worker thread: broker/network/decode_offload.py) and
dispatches each request at once, so appends happen in the order requests arrive; replies
go through a bounded channel to the writer (broker/network/reply_writer.py), which waits for each
in turn and sends it: responses leave in request order, and the channel bound is the
per-connection limit on requests in flight. Work a handler must finish before the next
request (handlers/in_order.py) and SASL password checks are awaited before the next read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

import trio

from rillet.broker.cluster.node_handshake import NodeAuthServer
from rillet.broker.dispatcher import Dispatcher
from rillet.broker.network import connection_events as ev
from rillet.broker.network.connection_protocol import ConnectionProtocol
from rillet.broker.network.native_front_end import NativeFrontEnd
from rillet.broker.network.outgoing import Outgoing, discard, materialize, ready_parts
from rillet.broker.network.reply_writer import ReplyWriter, serve_connection
from rillet.broker.network.request_budget import (
    BudgetedReader,
    ReadDeadline,
    ReadPolicy,
    ReadTimers,
)
from rillet.broker.network.served_stream import ServedStream, peer_address, peer_certificate
from rillet.broker.security.sasl.exchange import credential_lookup
from rillet.broker.security.session import peer_session
from rillet.wire.frame import BlobPart

log = logging.getLogger(__name__)


class Connection:
    def __init__(
        self,
        stream: ServedStream,
        dispatcher: Dispatcher,
        max_frame_bytes: int,
        max_in_flight: int,
        receive_bytes: int,
        policy: ReadPolicy | None = None,
        reserved: bool = False,
        on_node_authenticated: Callable[[], None] = lambda: None,
        sasl_mechanisms: tuple[str, ...] = (),
        front_end: Callable[[str], ev.FrontEnd] | None = None,
    ) -> None:
        """``front_end(peer_host)``: the listener's (the native one by default; only its
        login apis include the node handshake). ``reserved``: admitted beyond the client
        connection limits, so it may only run the node handshake (within the policy's
        deadline); ``on_node_authenticated`` is called once it has. ``sasl_mechanisms``:
        clients must authenticate with one of these first (nodes with the node handshake
        instead)."""
        self._stream = stream
        self._dispatcher = dispatcher
        self._max_in_flight = max_in_flight
        self._on_node_authenticated = on_node_authenticated
        policy = policy or ReadPolicy.unlimited()
        self.peer, peer_host = peer_address(stream)
        ends = front_end(peer_host) if front_end is not None else NativeFrontEnd(max_frame_bytes)
        self.session = session = peer_session(ends.listener, peer_host, peer_certificate(stream))
        ctx = dispatcher.ctx
        sasl = None
        if sasl_mechanisms:
            metadata = ctx.metadata
            lookup = credential_lookup(lambda: metadata.state.scram)
            sasl = ctx.logins.exchange(sasl_mechanisms, lookup, session)
        auth = ctx.metadata.auth  # the handshake is served where the front end reads it
        node_auth = NodeAuthServer(auth.handshake_key, auth.cluster_id)
        self._name = f"{ends.listener} connection {self.peer}"
        self.protocol = ConnectionProtocol(
            ends, session, policy, max_frame_bytes, receive_bytes, sasl, node_auth, reserved,
            peer=self.peer,
        )  # fmt: skip
        timers = ReadTimers(policy.idle_timeout_s, policy.frame_timeout_s, trio.current_time())
        if reserved:
            timers.must_authenticate_by = trio.current_time() + policy.node_handshake_timeout_s
        self._reader = BudgetedReader(
            stream, policy.budget, receive_bytes, timers, classify=self.protocol.read_class
        )

    async def serve(self) -> None:
        """Serve until the peer closes, misbehaves or the node shuts down; never raises."""
        writer = ReplyWriter[Outgoing](
            self._stream, self._max_in_flight, materialize, ready_parts, self._sent, discard
        )
        await serve_connection(
            writer, partial(self._read_loop, writer), self._name, self._reader, self.session
        )

    def _sent(self, out: Outgoing, parts: list[BlobPart]) -> None:
        self.protocol.sent(out, parts, trio.current_time())

    async def _read_loop(self, writer: ReplyWriter[Outgoing]) -> None:
        protocol = self.protocol
        while True:
            if protocol.muted_until_s > trio.current_time():  # over a byte-rate quota
                await trio.sleep_until(protocol.muted_until_s)
            try:
                data = await self._reader.receive()
            except ReadDeadline as exc:
                self._closing(ev.Close(str(exc), logging.INFO if exc.idle else logging.WARNING))
                return
            if not data:
                return
            protocol.receive_data(data)
            frames = 0
            while True:
                frame = protocol.next_frame()
                if frame is None:
                    break
                if isinstance(frame, ev.Close):
                    self._closing(frame)
                    return
                frames += 1
                if not await self._serve_frame(frame, writer):
                    return
            self._reader.decoded(protocol.pending_bytes, frames)

    async def _serve_frame(self, frame: ev.Frame, writer: ReplyWriter[Outgoing]) -> bool:
        """Decode and serve one frame; False once the connection must close."""
        protocol = self.protocol
        decode = partial(protocol.front_end.decode, frame.data)
        try:
            if frame.offload:
                request = await protocol.policy.offload.run(len(frame.data), decode)
            else:
                request = decode()
        except ev.CloseConnection as exc:
            self._closing(ev.Close(str(exc), exc.level))
            return False
        action: ev.Action | None = protocol.decoded(request, trio.current_time())
        if isinstance(action, ev.Dispatch):
            result = self._dispatcher.dispatch_request(
                action.request.correlation_id, action.request.body, self.session
            )
            action = protocol.dispatched(action, result)
        elif isinstance(action, ev.Login):  # the password check, before the next request
            step = await self._dispatcher.ctx.logins.authenticate(
                action.exchange, action.token, self.session
            )
            action = protocol.logged_in_step(action, step)
        if action is None:
            return True
        if isinstance(action, ev.Close):
            self._closing(action)
            return False
        if isinstance(action, ev.NodeAuthenticated):
            self._reader.timers.must_authenticate_by = None
            self._on_node_authenticated()
        assert isinstance(action, ev.Send | ev.NodeAuthenticated)
        pending = action.out.pending
        if pending is not None and pending.in_order is not None:
            await pending.settle()  # before the next request (handlers/in_order.py)
        await writer.put(action.out)
        return True

    def _closing(self, close: ev.Close) -> None:
        log.log(close.level, "closing %s: %s", self._name, close.reason)
