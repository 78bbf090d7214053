"""Routes a decoded request to its handler and shapes what the connection must send.

A handler returns an :data:`Outcome`: its response, the coroutine that will produce it
(:class:`~rillet.broker.handlers.deferred.Deferred`), work to finish in request order first
(:class:`InOrder`), a :class:`Refused` (one top-level error), or :class:`Unanswered` (no
response, for acks=0). Either listener's
front end hands over a typed request (``dispatch_request``); a native request's header is
checked first (``dispatch``). Every exception a handler raises is
logged and answered with UNKNOWN_SERVER_ERROR: one bad request never takes the connection,
let alone the node, down.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Generic, Protocol, TypeAlias, TypeGuard, TypeVar

from rillet.broker.handlers import broker_admin, producer_admin, raft_voters, transactions
from rillet.broker.handlers.acls import (
    handle_create_acls,
    handle_delete_acls,
    handle_describe_acls,
)
from rillet.broker.handlers.classic_groups import (
    handle_classic_describe_groups,
    handle_classic_heartbeat,
    handle_classic_leave,
    handle_classic_list_groups,
    handle_join_group,
    handle_sync_group,
)
from rillet.broker.handlers.cluster import (
    handle_allocate_producer_ids,
    handle_alter_partition,
    handle_broker_heartbeat,
    handle_broker_registration,
    handle_describe_quorum,
    handle_metadata_fetch,
)
from rillet.broker.handlers.context import BrokerContext
from rillet.broker.handlers.deferred import Deferred
from rillet.broker.handlers.driving_reply import ReshapedReply
from rillet.broker.handlers.features import handle_update_features
from rillet.broker.handlers.fetch import handle_fetch, handle_session_fetch
from rillet.broker.handlers.group_deletion import (
    handle_delete_group_offsets,
    handle_delete_groups,
)
from rillet.broker.handlers.groups import (
    handle_describe_groups,
    handle_find_coordinator,
    handle_heartbeat,
    handle_leave,
    handle_list_groups,
    handle_offset_commit,
    handle_offset_fetch,
)
from rillet.broker.handlers.in_order import InOrder
from rillet.broker.handlers.leader_epochs import handle_offset_for_leader_epoch
from rillet.broker.handlers.list_offsets import handle_list_offsets
from rillet.broker.handlers.log_dirs import (
    handle_alter_replica_log_dirs,
    handle_describe_log_dirs,
)
from rillet.broker.handlers.metadata import handle_metadata_request
from rillet.broker.handlers.partition_counts import handle_create_partitions
from rillet.broker.handlers.produce import handle_produce
from rillet.broker.handlers.producer_ids import handle_init_producer_id
from rillet.broker.handlers.reassignments import (
    handle_alter_reassignments,
    handle_elect_leaders,
    handle_list_reassignments,
)
from rillet.broker.handlers.record_deletion import handle_delete_records
from rillet.broker.handlers.refused import Refused
from rillet.broker.handlers.topic_config_changes import handle_alter_topic_configs
from rillet.broker.handlers.topics import handle_create_topics, handle_delete_topics
from rillet.broker.handlers.unanswered import Unanswered
from rillet.broker.handlers.user_credentials import (
    handle_alter_user_scram_credentials,
    handle_describe_user_scram_credentials,
)
from rillet.broker.replica.replication.fetch_session import (
    FetchSessionError,
    LeaderFetchSession,
    partition_limit,
)
from rillet.broker.security.authorizer import Authorizer
from rillet.broker.security.forwarded_caller import naming_the_client
from rillet.broker.security.request_authorization import RequestAuthorizer
from rillet.broker.security.session import Session
from rillet.wire import acl_messages as am
from rillet.wire import broker_admin_messages as bam
from rillet.wire import classic_group_messages as cgm
from rillet.wire import cluster_messages as cm
from rillet.wire import feature_messages as fm
from rillet.wire import group_messages as gm
from rillet.wire import leader_epoch_messages as lem
from rillet.wire import log_dir_messages as ldm
from rillet.wire import messages as m
from rillet.wire import producer_admin_messages as pam
from rillet.wire import raft_voter_messages as rvm
from rillet.wire import reassignment_messages as ram
from rillet.wire import record_deletion_messages as rdm
from rillet.wire import sasl_messages as sm
from rillet.wire import transaction_messages as tm
from rillet.wire import user_messages as um
from rillet.wire.api import ApiKey
from rillet.wire.cluster_messages import BrokerHeartbeatRequest
from rillet.wire.error_codes import ErrorCode
from rillet.wire.forwarding import ForwardedFor
from rillet.wire.group_messages import ConsumerGroupHeartbeatRequest
from rillet.wire.messages import (
    API_OF_REQUEST,
    REQUEST_TYPES,
    ApiVersionRange,
    ApiVersionsRequest,
    ApiVersionsResponse,
    FetchRequest,
)
from rillet.wire.protocol import PROTOCOL_VERSION, RequestHeader

log = logging.getLogger(__name__)

Q = TypeVar("Q")
R = TypeVar("R")

# What a handler gives back for a request answered by an R.
Outcome: TypeAlias = R | Deferred[R] | InOrder[R] | Refused | Unanswered


@dataclass(frozen=True, slots=True)
class Route(Generic[Q, R]):
    """An api's request type and its handler; building one type-checks that the handler
    takes that request (and infers the response it answers with)."""

    request_type: type[Q]
    handler: Callable[[BrokerContext, Q], Outcome[R]]

    def __call__(self, ctx: BrokerContext, body: object) -> Outcome[R]:
        """Run the handler on a decoded body (the codec decoded it as this api's type)."""
        if not isinstance(body, self.request_type):
            raise TypeError(f"{type(body).__name__} is not a {self.request_type.__name__}")
        return self.handler(ctx, body)


class Handler(Protocol):
    """A :class:`Route` of any api, as the table holds it."""

    @property
    def request_type(self) -> type: ...

    def __call__(self, ctx: BrokerContext, body: object) -> Outcome[object]: ...


@dataclass(slots=True)
class PendingReply:
    """A response to send, in request order: ready now, or once ``waiting`` completes.
    ``message`` is of the response type of the request's api (the connection's encoder
    checks it)."""

    correlation_id: int
    message: object = None
    waiting: Deferred[object] | None = None
    error: ErrorCode | None = None
    error_message: str | None = None
    # Work the connection finishes before reading its next request (handlers/in_order.py).
    in_order: Deferred[object] | None = None

    async def settle(self) -> None:
        """Run the in-order work; its result becomes the message or the ``waiting`` one.
        Work that fails is answered UNKNOWN_SERVER_ERROR, as a handler that fails at once
        is: the connection serves on."""
        if self.in_order is None:
            return
        work, self.in_order = self.in_order, None
        try:
            result = await work
        except Exception:
            log.exception("in-order work of request %d failed", self.correlation_id)
            self.error = ErrorCode.UNKNOWN_SERVER_ERROR
            return
        if is_deferred(result):
            self.waiting = result
        else:
            self.message = result


def is_deferred(result: R | Deferred[R]) -> TypeGuard[Deferred[R]]:
    """Whether a handler's answer is still to come (a coroutine, or a wrapper of one)."""
    return hasattr(result, "__await__")


def _api_versions(ctx: BrokerContext, req: ApiVersionsRequest) -> ApiVersionsResponse:
    return ApiVersionsResponse(
        [ApiVersionRange(int(api), PROTOCOL_VERSION, PROTOCOL_VERSION) for api in HANDLERS]
    )


HANDLERS: dict[ApiKey, Handler] = {
    ApiKey.PRODUCE: Route(m.ProduceRequest, handle_produce),
    ApiKey.FETCH: Route(m.FetchRequest, handle_fetch),
    ApiKey.LIST_OFFSETS: Route(m.ListOffsetsRequest, handle_list_offsets),
    ApiKey.METADATA: Route(m.MetadataRequest, handle_metadata_request),
    ApiKey.CREATE_TOPICS: Route(m.CreateTopicsRequest, handle_create_topics),
    ApiKey.DELETE_TOPICS: Route(m.DeleteTopicsRequest, handle_delete_topics),
    ApiKey.API_VERSIONS: Route(m.ApiVersionsRequest, _api_versions),
    ApiKey.DESCRIBE_QUORUM: Route(cm.DescribeQuorumRequest, handle_describe_quorum),
    ApiKey.ADD_RAFT_VOTER: Route(rvm.AddRaftVoterRequest, raft_voters.handle_add_raft_voter),
    ApiKey.REMOVE_RAFT_VOTER: Route(
        rvm.RemoveRaftVoterRequest, raft_voters.handle_remove_raft_voter
    ),
    ApiKey.OBSERVE_RAFT: Route(rvm.ObserveRaftRequest, raft_voters.handle_observe_raft),
    ApiKey.DESCRIBE_LOG_DIRS: Route(ldm.DescribeLogDirsRequest, handle_describe_log_dirs),
    ApiKey.ALTER_REPLICA_LOG_DIRS: Route(
        ldm.AlterReplicaLogDirsRequest, handle_alter_replica_log_dirs
    ),
    ApiKey.BROKER_REGISTRATION: Route(cm.BrokerRegistrationRequest, handle_broker_registration),
    ApiKey.BROKER_HEARTBEAT: Route(cm.BrokerHeartbeatRequest, handle_broker_heartbeat),
    ApiKey.METADATA_FETCH: Route(cm.MetadataFetchRequest, handle_metadata_fetch),
    ApiKey.ALTER_PARTITION: Route(cm.AlterPartitionRequest, handle_alter_partition),
    ApiKey.ALLOCATE_PRODUCER_IDS: Route(
        cm.AllocateProducerIdsRequest, handle_allocate_producer_ids
    ),
    ApiKey.INIT_PRODUCER_ID: Route(m.InitProducerIdRequest, handle_init_producer_id),
    ApiKey.ADD_PARTITIONS_TO_TXN: Route(
        tm.AddPartitionsToTxnRequest, transactions.handle_add_partitions_to_txn
    ),
    ApiKey.END_TXN: Route(tm.EndTxnRequest, transactions.handle_end_txn),
    ApiKey.LIST_TRANSACTIONS: Route(
        tm.ListTransactionsRequest, transactions.handle_list_transactions
    ),
    ApiKey.DESCRIBE_TRANSACTIONS: Route(
        tm.DescribeTransactionsRequest, transactions.handle_describe_transactions
    ),
    ApiKey.ADD_OFFSETS_TO_TXN: Route(
        tm.AddOffsetsToTxnRequest, transactions.handle_add_offsets_to_txn
    ),
    ApiKey.TXN_OFFSET_COMMIT: Route(
        tm.TxnOffsetCommitRequest, transactions.handle_txn_offset_commit
    ),
    ApiKey.TXN_MARKERS_WRITTEN: Route(
        tm.TxnMarkersWrittenRequest, transactions.handle_txn_markers_written
    ),
    ApiKey.DESCRIBE_PRODUCERS: Route(
        pam.DescribeProducersRequest, producer_admin.handle_describe_producers
    ),
    ApiKey.WRITE_TXN_MARKERS: Route(
        pam.WriteTxnMarkersRequest, producer_admin.handle_write_txn_markers
    ),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: Route(
        lem.OffsetForLeaderEpochRequest, handle_offset_for_leader_epoch
    ),
    ApiKey.FIND_COORDINATOR: Route(gm.FindCoordinatorRequest, handle_find_coordinator),
    ApiKey.CONSUMER_GROUP_HEARTBEAT: Route(gm.ConsumerGroupHeartbeatRequest, handle_heartbeat),
    ApiKey.LEAVE_GROUP: Route(gm.LeaveGroupRequest, handle_leave),
    ApiKey.OFFSET_COMMIT: Route(gm.OffsetCommitRequest, handle_offset_commit),
    ApiKey.OFFSET_FETCH: Route(gm.OffsetFetchRequest, handle_offset_fetch),
    ApiKey.LIST_GROUPS: Route(gm.ListGroupsRequest, handle_list_groups),
    ApiKey.DESCRIBE_GROUPS: Route(gm.DescribeGroupsRequest, handle_describe_groups),
    ApiKey.DELETE_GROUPS: Route(gm.DeleteGroupsRequest, handle_delete_groups),
    ApiKey.OFFSET_DELETE: Route(gm.DeleteGroupOffsetsRequest, handle_delete_group_offsets),
    ApiKey.CREATE_PARTITIONS: Route(m.CreatePartitionsRequest, handle_create_partitions),
    ApiKey.DELETE_RECORDS: Route(rdm.DeleteRecordsRequest, handle_delete_records),
    ApiKey.CREATE_ACLS: Route(am.CreateAclsRequest, handle_create_acls),
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: Route(
        ram.AlterReassignmentsRequest, handle_alter_reassignments
    ),
    ApiKey.LIST_PARTITION_REASSIGNMENTS: Route(
        ram.ListReassignmentsRequest, handle_list_reassignments
    ),
    ApiKey.ELECT_LEADERS: Route(ram.ElectLeadersRequest, handle_elect_leaders),
    ApiKey.UPDATE_FEATURES: Route(fm.UpdateFeaturesRequest, handle_update_features),
    ApiKey.ALTER_BROKER_CONFIGS: Route(
        bam.AlterBrokerConfigsRequest, broker_admin.handle_alter_broker_configs
    ),
    ApiKey.UNREGISTER_BROKER: Route(
        bam.UnregisterBrokerRequest, broker_admin.handle_unregister_broker
    ),
    # Reached only on a listener without SASL (the connection answers them otherwise).
    ApiKey.SASL_HANDSHAKE: Route(
        sm.SaslHandshakeRequest,
        lambda ctx, req: sm.SaslHandshakeResponse(ErrorCode.UNSUPPORTED_SASL_MECHANISM, []),
    ),
    ApiKey.SASL_AUTHENTICATE: Route(
        sm.SaslAuthenticateRequest,
        lambda ctx, req: sm.SaslAuthenticateResponse(
            ErrorCode.ILLEGAL_SASL_STATE, "this listener has no SASL mechanisms", b""
        ),
    ),
    ApiKey.DESCRIBE_ACLS: Route(am.DescribeAclsRequest, handle_describe_acls),
    ApiKey.DELETE_ACLS: Route(am.DeleteAclsRequest, handle_delete_acls),
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: Route(
        um.AlterUserScramCredentialsRequest, handle_alter_user_scram_credentials
    ),
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: Route(
        um.DescribeUserScramCredentialsRequest, handle_describe_user_scram_credentials
    ),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: Route(m.AlterTopicConfigsRequest, handle_alter_topic_configs),
    ApiKey.JOIN_GROUP: Route(cgm.ClassicJoinGroupRequest, handle_join_group),
    ApiKey.SYNC_GROUP: Route(cgm.ClassicSyncGroupRequest, handle_sync_group),
    ApiKey.HEARTBEAT: Route(cgm.ClassicHeartbeatRequest, handle_classic_heartbeat),
    ApiKey.CLASSIC_LEAVE_GROUP: Route(cgm.ClassicLeaveGroupRequest, handle_classic_leave),
    ApiKey.CLASSIC_DESCRIBE_GROUPS: Route(
        cgm.ClassicDescribeGroupsRequest, handle_classic_describe_groups
    ),
    ApiKey.CLASSIC_LIST_GROUPS: Route(cgm.ClassicListGroupsRequest, handle_classic_list_groups),
}
assert all(route.request_type is REQUEST_TYPES[api][0] for api, route in HANDLERS.items())


# Session keys of what a connection's loss means (group members are keyed by themselves).
_BROKER = "broker heartbeat"
_FOLLOWER = "replica fetch"
# A fetch session reads every partition at least this often: a safety net only. A caught-up
# follower's standing in the ISR follows the session's rounds, not these reads
# (replication.fetch_session); at 10,000 partitions a refresh every second was most of what
# a leader read.
SESSION_REFRESH_MS = 30_000


class Dispatcher:
    def __init__(self, ctx: BrokerContext) -> None:
        self.ctx = ctx
        settings = ctx.config.authorizer
        self.authorization = (
            RequestAuthorizer(Authorizer(settings.super_user_set), lambda: ctx.metadata.state.acls)
            if settings.enabled
            else None
        )

    def proves_secret(self, cluster_id: str, auth: bytes) -> bool:
        return self.ctx.metadata.auth.check(cluster_id, auth) is None

    def broker_connection_lost(self, broker_id: int, broker_epoch: int) -> None:
        """A broker's heartbeat connection closed: tell the controller, if it runs here."""
        controller = self.ctx.metadata.controller
        if controller is not None:
            controller.broker_connection_lost(broker_id, broker_epoch)

    def members_connection_lost(self, members: set[tuple[str, str]]) -> None:
        """Consumer-group members heartbeating over a connection that closed."""
        controller = self.ctx.metadata.controller
        if controller is not None:
            for group_id, member_id in sorted(members):
                controller.member_connection_lost(group_id, member_id)

    def replica_connection_lost(self, replica_id: int) -> None:
        """A follower's replica-fetch connection closed."""
        self.ctx.replicas.follower_connection_lost(replica_id)

    def _note_connection(self, body: object, session: Session) -> None:
        """What the loss of this request's connection will mean, registered on its session
        (run by ``Session.close``): the broker heartbeating over it is gone (the controller
        need not wait a whole session), the follower fetching over it is gone (its leaders
        drop it from their ISRs soon), the group members heartbeating over it are gone
        (their coordinator expires them after a short grace). Brokers and followers only
        count once they prove the cluster secret."""
        if isinstance(body, BrokerHeartbeatRequest):
            if body.shutting_down:
                session.forget(_BROKER)
            elif self.proves_secret(body.cluster_id, body.auth):
                broker = (body.broker_id, body.broker_epoch)
                session.on_close(_BROKER, lambda: self.broker_connection_lost(*broker), broker)
        elif isinstance(body, FetchRequest) and body.replica_id >= 0:
            replica_id = body.replica_id
            if session.tag_of(_FOLLOWER) != replica_id and self.proves_secret(
                self.ctx.metadata.auth.cluster_id, body.replica_auth
            ):
                session.on_close(
                    _FOLLOWER, lambda: self.replica_connection_lost(replica_id), replica_id
                )
        elif isinstance(body, ConsumerGroupHeartbeatRequest) and body.member_id:
            member = (body.group_id, body.member_id)
            session.on_close(member, lambda: self.members_connection_lost({member}))

    def _in_fetch_session(
        self, session: Session, request: FetchRequest
    ) -> Callable[[], Deferred[m.FetchResponse]]:
        """A follower's fetch as the full request it stands for, read by the handler that
        reads only the partitions that may have news and answers only those with news
        (replication.fetch_session)."""
        ctx = self.ctx
        fetch_session = session.fetch_session
        if fetch_session is None:
            fetch_session = session.fetch_session = LeaderFetchSession(
                SESSION_REFRESH_MS, partition_limit(ctx.config.replication.fetch_max_partitions)
            )
        full, named = fetch_session.expand(request)
        replicas = ctx.replicas
        keeps = partial(fetch_session.keeps, named=named, source_of=lambda key: replicas.get(*key))
        return partial(handle_session_fetch, ctx, full, fetch_session.to_read, keeps)

    def dispatch(
        self, header: RequestHeader, body: object, session: Session | None = None
    ) -> PendingReply | Unanswered:
        """Route one native request: its header's api and version are checked first."""
        refusal = header_refusal(header)
        if refusal is not None:
            return refusal
        return self.dispatch_request(header.correlation_id, body, session)

    def dispatch_request(
        self, correlation_id: int, body: object, session: Session | None = None
    ) -> PendingReply | Unanswered:
        """Route one typed request, from either listener's front end; ``session`` is the
        connection's (who asks, from where)."""
        cid = correlation_id
        api = API_OF_REQUEST[type(body)]
        route = HANDLERS.get(api)
        if route is None:
            return PendingReply(cid, error=ErrorCode.UNKNOWN_API, error_message=api.name)
        if session is not None:
            body = naming_the_client(body, session)  # in case it is forwarded
        reshape: Callable[[object], object] | None = None
        if self.authorization is not None:
            caller = session or Session("native", "")
            verdict = self.authorization.check(api, body, caller)
            if verdict is not None and verdict.error is not None:
                log.info("refused %s: %s", api.name, verdict.message)
                return PendingReply(cid, error=verdict.error, error_message=verdict.message)
            reshape = verdict.reshape if verdict is not None else None
        if session is not None:  # only for a request allowed: it names who may leave
            self._note_connection(body, session)
        in_session = None
        if session is not None and _is_proven_follower_fetch(body, session):
            try:
                in_session = self._in_fetch_session(session, body)
            except FetchSessionError as exc:
                log.warning("fetch session of replica %d: %s", body.replica_id, exc)
                no_session = ErrorCode.FETCH_SESSION_ID_NOT_FOUND
                return PendingReply(cid, message=m.FetchResponse([], no_session))
        try:
            result = self._handle(route, body, session, in_session)
        except Exception:
            log.exception("handler for %s failed", api.name)
            return PendingReply(cid, error=ErrorCode.UNKNOWN_SERVER_ERROR)
        if isinstance(result, Unanswered):
            return result
        if isinstance(result, Refused):
            return PendingReply(cid, error=result.error, error_message=result.message)
        if isinstance(result, InOrder):
            work = result.work
            return PendingReply(cid, in_order=work if reshape is None else _in_order(work, reshape))
        if is_deferred(result):
            if reshape is not None:
                return PendingReply(cid, waiting=ReshapedReply(result, reshape))
            return PendingReply(cid, waiting=result)
        return PendingReply(cid, message=result if reshape is None else reshape(result))

    def _handle(
        self,
        route: Handler,
        body: object,
        session: Session | None,
        in_session: Callable[[], Deferred[m.FetchResponse]] | None,
    ) -> Outcome[object]:
        """The handler's outcome; Produce (with the connection's refusals), Metadata (with
        the asker's right to create topics) and a follower's fetch in its fetch session
        take more than the request."""
        if in_session is not None:
            return in_session()
        if session is not None and type(body) is m.ProduceRequest:
            return handle_produce(self.ctx, body, refusals=session.produce_refusals)
        if self.authorization is not None and type(body) is m.MetadataRequest:
            asker = session or Session("native", "")
            return handle_metadata_request(
                self.ctx,
                body,
                may_create=self.authorization.creator(asker),
                asker=ForwardedFor(asker.principal, asker.host),
            )
        return route(self.ctx, body)


def header_refusal(header: RequestHeader) -> PendingReply | None:
    """The error answer to a native request whose version is not this node's (None: serve
    it)."""
    if header.version != PROTOCOL_VERSION:
        return PendingReply(
            header.correlation_id,
            error=ErrorCode.UNSUPPORTED_VERSION,
            error_message=f"version {header.version} of {header.api.name} is not supported",
        )
    return None


def _is_proven_follower_fetch(body: object, session: Session) -> TypeGuard[FetchRequest]:
    """A follower's fetch on a connection that proved the cluster secret for it (the only
    ones that get a fetch session: a stranger makes the node remember nothing)."""
    return (
        type(body) is FetchRequest
        and body.replica_id >= 0
        and session.tag_of(_FOLLOWER) == body.replica_id
    )


async def _in_order(work: Deferred[object], reshape: Callable[[object], object]) -> object:
    """In-order work whose answer (or the coroutine producing it) is trimmed like others."""
    result = await work
    if is_deferred(result):
        return ReshapedReply(result, reshape)
    return reshape(result)
