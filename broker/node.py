"""The node process: the composition root that wires the quorum, storage and handlers.

Start-up binds the listeners, serves the native one at once (voters must answer each other's
brokers before any of them is ready), joins the Raft quorum when this node is a voter,
registers the broker with the controller, waits until its metadata has caught up, it is
unfenced and its partitions are open, and only then serves the Kafka listener and reports
ready; until its metadata has caught up, the native listener refuses metadata questions
(handlers/metadata.py). SIGTERM and SIGINT first ask the controller to move this broker's
leaderships (controlled shutdown), then stop accepting, cancel request tasks and close every
log cleanly (a clean-shutdown marker lets the next start skip full re-validation). After
SIGKILL, the next start recovers from the logs and the Raft journal.
"""

from __future__ import annotations

import fcntl
import gc
import json
import logging
import math
import os
import random
import signal
import ssl
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import trio

from rillet.broker.cluster.broker_lifecycle import CONTROLLED_SHUTDOWN_TIMEOUT_S, BrokerLifecycle
from rillet.broker.cluster.cluster_auth import ClusterAuth
from rillet.broker.cluster.controller_link import ControllerLink
from rillet.broker.cluster.metadata_view import MetadataView
from rillet.broker.cluster.node_secret import node_secret
from rillet.broker.cluster.quorum_setup import (
    build_quorum,
    observer_address,
    resolve_voters,
    runs_raft,
)
from rillet.broker.cluster.raft_observer import follow_voters
from rillet.broker.cluster.remote_metadata_log import RemoteMetadataLog
from rillet.broker.config import NodeConfig
from rillet.broker.config.limits_config import parse_overrides
from rillet.broker.dispatcher import Dispatcher
from rillet.broker.errors import BrokerError
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.fetch_sessions import FetchSessionCache
from rillet.broker.http.decision_journal import DecisionJournal, JournalingLog
from rillet.broker.http.endpoint import (
    HttpEndpoint,
    access_policy,
    http_tls_on,
    open_http_listeners,
)
from rillet.broker.http.metered_dispatcher import MeteredDispatcher
from rillet.broker.http.node_probe import NodeProbe
from rillet.broker.http.request_metrics import RAFT_APPEND_BUCKETS_S, LocalHistogram
from rillet.broker.network.client_quotas import ClientQuotas
from rillet.broker.network.connection import Connection
from rillet.broker.network.connection_limits import ConnectionLimiter, Slot
from rillet.broker.network.request_budget import ReadPolicy
from rillet.broker.network.served_stream import ServedStream, peer_host, tls_accept
from rillet.broker.replica.log_cleaner import LogCleaner
from rillet.broker.replica.log_scrubber import LogScrubber
from rillet.broker.replica.partition_reconciler import PartitionReconciler
from rillet.broker.replica.producer_ids import ProducerIdSource
from rillet.broker.replica.replica_manager import ReplicaManager
from rillet.broker.replica.replica_repair import ReplicaRepairer
from rillet.broker.replica.replication.isr_manager import ISR_CHECK_INTERVAL_MS, IsrManager
from rillet.broker.replica.replication.replica_fetcher import ReplicaFetcherManager
from rillet.broker.replica.replication.stranded_leaders import StrandedLeaderWatch
from rillet.broker.replica.replication.throttled_replicas import ThrottledReplicas
from rillet.broker.replica.txn_marker_writer import TxnMarkerWriter
from rillet.broker.runtime.clock import SYSTEM_CLOCK, Clock
from rillet.broker.runtime.heap_freezer import run_heap_freezer
from rillet.broker.runtime.injected_faults import NO_FAULTS, InjectedFaults
from rillet.broker.runtime.loop_lag import LagTracker, monitor_loop_lag
from rillet.broker.runtime.open_files import raise_open_file_limit, segment_capacity
from rillet.broker.runtime.slow_steps import watch_slow_steps
from rillet.broker.security.sasl.login_guard import LoginGuard
from rillet.broker.security.tls_contexts import TlsContexts
from rillet.launcher.private_files import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, tighten
from rillet.metadata_quorum.controller import ControllerConfig
from rillet.metadata_quorum.controller_service import ControllerService
from rillet.metadata_quorum.features import LOG_COMPACTION, RAFT_DIRECTORY_IDS
from rillet.metadata_quorum.follower import MetadataFollower
from rillet.raft.quorum import Quorum
from rillet.raft.transport import PeerTls

log = logging.getLogger(__name__)

LOCK_FILE = ".lock"


class DataDirLock:
    """An exclusive flock on the data directory: two nodes must never share one. The
    directory is its owner's alone (made 0700; one left open by an older version is
    narrowed, with a warning): the Raft log in it carries users' SCRAM salts and keys."""

    def __init__(self, data_dir: Path) -> None:
        data_dir.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
        self._fd = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise BrokerError(f"data dir {data_dir} is in use by another node") from None
        # Who holds it: `rillet scrub --data-dir` signals the running node.
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, f"{os.getpid()}\n".encode(), 0)
        narrowed = tighten(data_dir)
        if narrowed:
            log.warning(
                "data dir %s: %d files and directories were open to other users; "
                "now its owner's only",
                data_dir,
                narrowed,
            )

    def release(self) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)


class Node:
    """One rillet node: a Raft voter and broker (combined), or a broker only."""

    def __init__(
        self,
        config: NodeConfig,
        ready_file: Path | None = None,
        clock: Clock = SYSTEM_CLOCK,
        faults: InjectedFaults = NO_FAULTS,
    ) -> None:
        """``faults``: only a test's own entry point injects any."""
        self.config = config
        self._faults = faults
        self.ready_file = ready_file
        self.clock = clock
        self.port: int | None = None
        self.kafka_port: int | None = None
        self.http_port: int | None = None
        self._journal = DecisionJournal()  # recent controller decisions, for the console
        # Metadata entries' propose-to-commit times on this node as controller (/metrics).
        self._raft_append = LocalHistogram(RAFT_APPEND_BUCKETS_S)
        limits = config.limits
        self._limiter = ConnectionLimiter(
            limits.max_connections,
            limits.max_connections_per_ip,
            parse_overrides(limits.max_connections_per_ip_overrides),
            limits.node_connection_reserve,
        )
        self._read_policy = ReadPolicy.for_limits(limits, ClientQuotas.from_config(config.quotas))
        self._refused_logged_at = -math.inf
        # TLS on every listener and inter-node link when [tls] names a certificate.
        self.tls = TlsContexts(config.tls) if config.tls.enabled else None
        # Who may read the HTTP endpoint (reads http.auth_token_file: checked at start).
        self._http_access = access_policy(config) if config.http.enabled else None
        self.loop_lag = LagTracker()  # the worst event-loop stalls, logged as they happen

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        cfg = self.config
        open_files = raise_open_file_limit()
        log.info(
            "open-file limit %d: room for about %d log segments beside %d connections",
            open_files,
            segment_capacity(open_files, cfg.limits.max_connections),
            cfg.limits.max_connections,
        )
        lock = DataDirLock(cfg.data_dir)
        manager = ReplicaManager(cfg, self.clock)
        quorum: Quorum | None = None
        try:
            secret = node_secret(cfg.quorum, cfg.node_id, cfg.data_dir)  # configured or kept
            listeners = await trio.open_tcp_listeners(cfg.listener.port, host=cfg.listener.host)
            self.port = port = listeners[0].socket.getsockname()[1]
            kafka_listeners = await self._open_kafka_listeners()
            http_listeners = await open_http_listeners(cfg.http)
            voters = resolve_voters(cfg, port)
            auth = ClusterAuth(cfg.cluster_id, secret)
            if runs_raft(cfg, voters):  # a voter, or an observer (quorum.observer)
                quorum = build_quorum(
                    cfg, voters, secret, trio.lowlevel.current_trio_token(), self._raft_tls()
                )
            async with trio.open_nursery() as nursery:

                def controller_link(purpose: str) -> ControllerLink:
                    return ControllerLink(
                        nursery,
                        voters.listeners,
                        cfg.quorum.request_timeout_ms / 1000,
                        local_hint=_leader_of(quorum),
                        local_change=_leadership_change_of(quorum),
                        client_id=f"rillet-broker-{cfg.node_id}-{purpose}",
                        authenticate=partial(
                            auth.authenticate,
                            node_id=cfg.node_id,
                            timeout_s=cfg.quorum.request_timeout_ms / 1000,
                        ),
                        tls=self._tls_client,
                    )

                link = controller_link("requests")
                # Registration and heartbeats on connections of their own (as Kafka's broker
                # keeps a heartbeat channel): ISR proposals in flight on the shared ones
                # could fill a connection's max_in_flight_requests_per_connection, and the
                # controller would read no heartbeat until they were decided — with 10,000
                # new partitions, long enough to fence every broker.
                heartbeat_link = controller_link("heartbeat")
                if quorum is not None:
                    await nursery.start(quorum.run)  # our own engine's tasks (no-op otherwise)
                    links = [link, heartbeat_link]
                    own = voters.raft.get(cfg.node_id) or observer_address(cfg)
                    nursery.start_soon(follow_voters, cfg, quorum, links, own)
                view = self._metadata_view(quorum, link, auth)
                lifecycle = BrokerLifecycle(
                    cfg,
                    view,
                    heartbeat_link,
                    port,
                    -1 if self.kafka_port is None else self.kafka_port,
                )
                reconciler = PartitionReconciler(cfg.node_id, manager, view.follower)
                view.wait_reconciled = reconciler.wait_reconciled
                fetchers = ReplicaFetcherManager(
                    cfg.node_id,
                    manager,
                    view,
                    cfg.replication,
                    cfg.quorum.request_timeout_ms / 1000,
                    routes=voters.listeners,
                    tls=self._tls_client,
                )
                reconciler.on_reconciled(fetchers.reconcile)
                isr = IsrManager(
                    cfg,
                    manager,
                    link,
                    auth,
                    lambda: lifecycle.broker_epoch,
                    lifecycle.hears_controller,
                )
                stranded = StrandedLeaderWatch(
                    manager,
                    cfg.replication.replica_lag_time_max_ms,
                    ISR_CHECK_INTERVAL_MS,
                    lambda: lifecycle.broker_epoch is not None,
                    lifecycle.hears_controller,
                )
                repairer = ReplicaRepairer(
                    cfg,
                    manager,
                    link,
                    auth,
                    lambda: lifecycle.broker_epoch,
                    on_repaired=fetchers.reconcile,
                )
                reconciler.on_reconciled(repairer.wake)
                scrubber = LogScrubber(cfg.tasks, manager, cfg.data_dir)
                producer_ids = ProducerIdSource(
                    cfg.node_id,
                    link,
                    auth,
                    lambda: lifecycle.broker_epoch,
                    cfg.quorum.request_timeout_ms / 1000,
                )
                logins = LoginGuard(cfg.sasl)
                sessions = FetchSessionCache(
                    cfg.kafka_listener.max_incremental_fetch_session_cache_slots, random.Random()
                )
                ctx = BrokerContext(
                    cfg,
                    manager,
                    port,
                    view,
                    producer_ids,
                    self._faults,
                    logins=logins,
                    kafka_fetch_sessions=sessions,
                    leader_throttle=ThrottledReplicas(cfg.node_id, leader=True),
                )
                dispatcher = Dispatcher(ctx)
                kafka_dispatcher = dispatcher
                if http_listeners:
                    endpoint = HttpEndpoint(
                        NodeProbe(
                            cfg,
                            manager,
                            view,
                            lifecycle,
                            lambda: self._limiter.counted + self._limiter.reserved,
                            self._journal,
                            self.loop_lag,
                            raft_append=self._raft_append,
                            sasl_failures=logins.failures,
                            fetch_sessions=sessions,
                        ),
                        self._http_access,
                        self.tls.http_server if self.tls and http_tls_on(cfg) else None,
                    )
                    manager.on_fsync_s = endpoint.requests.observe_fsync
                    dispatcher = MeteredDispatcher(
                        ctx, endpoint.requests, "native", endpoint.probe.applied_by_broker
                    )
                    kafka_dispatcher = MeteredDispatcher(ctx, endpoint.requests, "kafka")
                    self.http_port = await nursery.start(endpoint.run, http_listeners)
                nursery.start_soon(self._watch_signals, nursery.cancel_scope, lifecycle)
                nursery.start_soon(monitor_loop_lag, self.loop_lag)
                if cfg.tasks.slow_task_step_ms > 0:
                    nursery.start_soon(watch_slow_steps, cfg.tasks.slow_task_step_ms)
                nursery.start_soon(view.follower.run)
                if view.controller is not None:
                    nursery.start_soon(view.controller.run)
                await nursery.start(trio.serve_listeners, self._handler_for(dispatcher), listeners)
                nursery.start_soon(lifecycle.run)
                nursery.start_soon(reconciler.run, lifecycle.caught_up)
                nursery.start_soon(fetchers.run)
                nursery.start_soon(isr.run)
                nursery.start_soon(stranded.run)
                nursery.start_soon(repairer.run)
                nursery.start_soon(scrubber.run)
                nursery.start_soon(
                    TxnMarkerWriter(
                        cfg.node_id,
                        manager,
                        view,
                        link,
                        auth,
                        cfg.quorum.request_timeout_ms / 1000,
                        self._faults,
                    ).run
                )
                # Cleaned logs hold batches release 0.1.0 cannot read (empty batches,
                # delete horizons): no cleaning before every node reads them.
                nursery.start_soon(
                    _after_level, view.follower, LOG_COMPACTION, LogCleaner(cfg.tasks, manager).run
                )
                if quorum is not None:
                    nursery.start_soon(
                        _after_level,
                        view.follower,
                        RAFT_DIRECTORY_IDS,
                        partial(quorum.allow_new_message_forms, True),
                    )
                nursery.start_soon(manager.run_flush_task)
                nursery.start_soon(manager.run_high_watermark_checkpoint_task)
                nursery.start_soon(manager.run_retention_task)
                nursery.start_soon(manager.run_deleted_files_task)
                nursery.start_soon(manager.purge_deleted_dirs)
                nursery.start_soon(run_heap_freezer)
                await lifecycle.unfenced.wait()
                await reconciler.wait_reconciled(view.state.last_applied_index)
                if kafka_listeners:
                    # Only now, as a Kafka broker opens its client listeners once caught up
                    # and unfenced: a Kafka client asks any broker for metadata and believes
                    # it, so a node still behind would make it drop topics and partitions.
                    # Until then connections wait in the kernel's accept queue.
                    await nursery.start(
                        trio.serve_listeners,
                        self._handler_for(kafka_dispatcher, kafka=True),
                        kafka_listeners,
                    )
                # Everything allocated so far (config, open logs, code) lives for the whole
                # run: move it out of the collector's sight so GC pauses stay short.
                gc.collect()
                gc.freeze()
                self._announce_ready()
                task_status.started(port)
        finally:
            await manager.close_all()
            if quorum is not None:
                quorum.close()
            lock.release()
            log.info("node %d stopped", cfg.node_id)

    def _metadata_view(
        self, quorum: Quorum | None, link: ControllerLink, auth: ClusterAuth
    ) -> MetadataView:
        q = self.config.quorum
        if quorum is None:
            remote = RemoteMetadataLog(link, auth, q.request_timeout_ms / 1000)
            journaling = JournalingLog(remote, self._journal)
            view = MetadataView(self.config.node_id, MetadataFollower(journaling), auth)
        else:
            follower = MetadataFollower(
                JournalingLog(quorum, self._journal), q.snapshot_every_records
            )
            controller = ControllerService(
                quorum,
                follower,
                ControllerConfig(
                    q.broker_session_timeout_ms,
                    auto_leader_rebalance=q.auto_leader_rebalance_enable,
                    leader_rebalance_interval_ms=q.leader_rebalance_interval_ms,
                    connection_lost_grace_ms=q.broker_connection_lost_grace_ms,
                    new_controller_grace_ms=q.new_controller_grace_ms,
                    reannounce_window_ms=max(1_000, 4 * q.broker_heartbeat_interval_ms),
                    broker_heartbeat_interval_ms=q.broker_heartbeat_interval_ms,
                    classic_groups=self.config.groups.classic(),
                    max_records_per_batch=q.max_records_per_batch,
                ),
                random.Random(),
                # Leases and sessions: a wall clock stepped hours must not move them.
                self.clock.steady_ms,
                q.controller_tick_ms,
                on_commit_s=self._raft_append.observe,
                election_timeout_min_ms=q.election_timeout_min_ms,
            )
            view = MetadataView(self.config.node_id, follower, auth, quorum, controller)
        view.link = link
        return view

    async def _open_kafka_listeners(self) -> list[trio.SocketListener]:
        kafka = self.config.kafka_listener
        if not kafka.enabled:
            return []
        # Loaded here, before any task runs, and only when the listener is on (it is off by
        # default): the Kafka protocol's modules take a good part of a node's import time.
        import rillet.broker.kafka.connection  # noqa: F401

        listeners = await trio.open_tcp_listeners(kafka.port, host=kafka.host)
        self.kafka_port = listeners[0].socket.getsockname()[1]
        return listeners

    def _handler_for(
        self,
        dispatcher: Dispatcher,
        kafka: bool = False,
    ) -> Any:
        limits = self.config.limits
        limiter, policy, tls = self._limiter, self._read_policy, self.tls
        handshake_timeout_s = self.config.tls.handshake_timeout_ms / 1000

        async def handle(tcp: trio.SocketStream) -> None:
            host = peer_host(tcp)
            admission = limiter.admit(host, may_reserve=not kafka)
            if admission is None:
                self._log_refused(host)
                await trio.aclose_forcefully(tcp)
                return
            try:
                stream: ServedStream = tcp
                if tls is not None:
                    secured = await tls_accept(tcp, tls.server(), handshake_timeout_s)
                    if secured is None:
                        return
                    stream = secured
                front_end = None
                if kafka:
                    from rillet.broker.kafka.connection import kafka_front_end  # loaded

                    front_end = kafka_front_end(dispatcher.ctx, limits.max_frame_bytes, policy)
                conn = Connection(
                    stream,
                    dispatcher,
                    limits.max_frame_bytes,
                    limits.max_in_flight_requests_per_connection,
                    limits.receive_buffer_bytes,
                    policy,
                    reserved=admission.slot is Slot.RESERVED,
                    on_node_authenticated=partial(limiter.promote_to_node, admission),
                    sasl_mechanisms=(
                        self.config.kafka_listener if kafka else self.config.listener
                    ).sasl_mechanism_list,
                    front_end=front_end,
                )
                await conn.serve()
            finally:
                limiter.release(admission)

        return handle

    def _raft_tls(self) -> PeerTls | None:
        tls = self.tls
        return None if tls is None else PeerTls(tls.server, tls.client)

    def _tls_client(self) -> ssl.SSLContext | None:
        """The context for this node's connections to other nodes (reloaded certificates
        included), or None without TLS."""
        return None if self.tls is None else self.tls.client()

    def _log_refused(self, host: str) -> None:
        """A refused connection is logged at most once a second (a flood must not flood
        the log); the line says how many were refused since the last one."""
        now = self.clock.monotonic_s()
        if now - self._refused_logged_at >= 1.0:
            self._refused_logged_at = now
            limits = self.config.limits
            log.warning(
                "refusing connections (%d so far; last from %s): max_connections=%d, "
                "max_connections_per_ip=%d for that address",
                self._limiter.refused,
                host,
                limits.max_connections,
                self._limiter.limit_for(host),
            )

    def _announce_ready(self) -> None:
        info = {
            "event": "ready",
            "node_id": self.config.node_id,
            "host": self.config.advertised_host,
            "port": self.port,
            "pid": os.getpid(),
            "kafka_port": self.kafka_port,
            "http_port": self.http_port,
        }
        log.info("node %d listening on %s:%d", self.config.node_id, info["host"], self.port)
        if self.kafka_port is not None:
            host = self.config.kafka_advertised_host
            log.info("node %d: kafka listener on %s:%d", self.config.node_id, host, self.kafka_port)
        if self.ready_file is not None:
            tmp = self.ready_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(info))
            os.replace(tmp, self.ready_file)

    async def _watch_signals(self, scope: trio.CancelScope, lifecycle: BrokerLifecycle) -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                log.info("received %s, shutting down", signal.Signals(signum).name)
                # Controlled shutdown: hand leaderships over before the port closes. A
                # second signal skips the wait.
                with trio.move_on_after(CONTROLLED_SHUTDOWN_TIMEOUT_S) as wait:
                    async with trio.open_nursery() as inner:
                        inner.start_soon(_cancel_on_next_signal, signals, inner.cancel_scope)
                        await lifecycle.controlled_shutdown()
                        inner.cancel_scope.cancel()
                if wait.cancelled_caught:
                    log.warning("controlled shutdown timed out")
                scope.cancel()
                return


async def _cancel_on_next_signal(signals: Any, scope: trio.CancelScope) -> None:
    async for _ in signals:
        scope.cancel()
        return


async def _after_level(
    follower: MetadataFollower, level: int, then: Callable[[], Awaitable[None] | None]
) -> None:
    """Run ``then`` once the cluster's feature level reaches ``level``."""
    await follower.wait_feature_level(level)
    result = then()
    if result is not None:
        await result


def _leader_of(quorum: Quorum | None) -> Callable[[], int | None] | None:
    if quorum is None:
        return None
    return lambda: quorum.leadership().leader_id


def _leadership_change_of(quorum: Quorum | None) -> Callable[[], Awaitable[object]] | None:
    """The wait for the quorum's next leadership change (the controller links' event)."""
    if quorum is None:
        return None
    return lambda: quorum.wait_for_leadership_change(quorum.leadership())
