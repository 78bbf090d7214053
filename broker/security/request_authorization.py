"""Which ACL each request needs, and what a denial looks like (sans-I/O).

Every public api is checked here, before its handler runs, for both listeners: a Kafka
request reaches the dispatcher as the native request it translates to, so one table covers
both. The operations are Kafka's (its authorizer's, api by api), so an ACL written for a
Kafka cluster allows and denies the same requests here:

- topics: Produce WRITE; Fetch and OffsetCommit READ; ListOffsets, OffsetForLeaderEpoch,
  OffsetFetch and Metadata DESCRIBE; CreateTopics CREATE (on the cluster or the topic);
  DeleteTopics and DeleteRecords DELETE; CreatePartitions ALTER; config changes
  ALTER_CONFIGS;
- groups: joining, heartbeats, leaving and commits READ; FindCoordinator, OffsetFetch and
  DescribeGroups DESCRIBE; DeleteGroups DELETE;
- the cluster: DescribeQuorum, DescribeAcls and DescribeUserScramCredentials DESCRIBE;
  CreateAcls, DeleteAcls, AlterUserScramCredentials and AlterReplicaLogDirs ALTER; InitProducerId
  IDEMPOTENT_WRITE (or WRITE on some topic, as Kafka allows since 2.8).

A request naming several resources is refused whole when one of them is denied (with the
error of that resource's type). Metadata, OffsetFetch of every topic and ListGroups are not
refused but trimmed: what the principal may not describe is left out, as Kafka does, so a
client never learns the names of topics and groups it may not see.

Being a node (a connection that completed the node handshake) grants the internal apis,
which have their own gate (``internal_api_gate``), and nothing else: a client api from a
node is checked here as from any client, under the connection's principal, and a change a
node forwarded to the controller as the client it was forwarded for (``forwarded_caller``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from rillet.broker.security.authorizer import Authorizer
from rillet.broker.security.forwarded_caller import deciding_session
from rillet.broker.security.internal_api_gate import acting_node
from rillet.broker.security.session import Session
from rillet.metadata_quorum.acl_registry import AclRegistry
from rillet.wire import group_messages as gm
from rillet.wire import messages as m
from rillet.wire.acls import CLUSTER_NAME, Operation, Permission, ResourceType
from rillet.wire.api import ApiKey
from rillet.wire.error_codes import ErrorCode

DENIAL_CODES = {
    ResourceType.TOPIC: ErrorCode.AUTHORIZATION_FAILED,  # Kafka's TOPIC_AUTHORIZATION_FAILED
    ResourceType.GROUP: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ResourceType.CLUSTER: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    ResourceType.TRANSACTIONAL_ID: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
}

Need = tuple[Operation, ResourceType, str]
MAX_CACHED_DECISIONS = 100_000


@dataclass(frozen=True, slots=True)
class Verdict:
    """A refusal (``error``, with a one-line ``message``) or, for an allowed request, a
    function that trims its response (``reshape``)."""

    error: ErrorCode | None = None
    message: str = ""
    reshape: Callable[[Any], Any] | None = None


def _topics(names: Iterable[str], operation: Operation) -> list[Need]:
    return [(operation, ResourceType.TOPIC, n) for n in dict.fromkeys(names)]


def _group(group_id: str, operation: Operation) -> list[Need]:
    return [(operation, ResourceType.GROUP, group_id)]


def _transactional_id(transactional_id: str, operation: Operation) -> list[Need]:
    return [(operation, ResourceType.TRANSACTIONAL_ID, transactional_id)]


def _cluster(operation: Operation) -> list[Need]:
    return [(operation, ResourceType.CLUSTER, CLUSTER_NAME)]


W, R, D = Operation.WRITE, Operation.READ, Operation.DESCRIBE

# What each api needs, from its request (the special cases are methods below).
NEEDS: dict[ApiKey, Callable[[Any], list[Need]]] = {
    ApiKey.PRODUCE: lambda r: _topics((p.topic for p in r.partitions), W),
    ApiKey.FETCH: lambda r: _topics((p.topic for p in r.partitions), R),
    ApiKey.LIST_OFFSETS: lambda r: _topics((p.topic for p in r.partitions), D),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: lambda r: _topics((p.topic for p in r.partitions), D),
    ApiKey.DELETE_TOPICS: lambda r: _topics(r.topics, Operation.DELETE),
    ApiKey.DELETE_RECORDS: lambda r: _topics((p.topic for p in r.partitions), Operation.DELETE),
    ApiKey.CREATE_PARTITIONS: lambda r: _topics((t.name for t in r.topics), Operation.ALTER),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: lambda r: _topics(
        (t.name for t in r.topics), Operation.ALTER_CONFIGS
    ),
    ApiKey.FIND_COORDINATOR: lambda r: (
        [n for k in (r.key, *r.more_keys) for n in _group(k, D)]
        if r.key_type == 0
        else [n for k in (r.key, *r.more_keys) for n in _transactional_id(k, D)]
        if r.key_type == 1
        else []
    ),
    ApiKey.CONSUMER_GROUP_HEARTBEAT: lambda r: _group(r.group_id, R),
    ApiKey.JOIN_GROUP: lambda r: _group(r.group_id, R),
    ApiKey.SYNC_GROUP: lambda r: _group(r.group_id, R),
    ApiKey.HEARTBEAT: lambda r: _group(r.group_id, R),
    ApiKey.LEAVE_GROUP: lambda r: _group(r.group_id, R),
    ApiKey.CLASSIC_LEAVE_GROUP: lambda r: _group(r.group_id, R),
    ApiKey.OFFSET_COMMIT: lambda r: (
        _group(r.group_id, R) + _topics((o.topic for o in r.offsets), R)
    ),
    ApiKey.OFFSET_FETCH: lambda r: (
        _group(r.group_id, D) + _topics((t.topic for t in r.partitions or ()), D)
    ),
    ApiKey.DESCRIBE_GROUPS: lambda r: [n for g in r.group_ids for n in _group(g, D)],
    ApiKey.CLASSIC_DESCRIBE_GROUPS: lambda r: [n for g in r.group_ids for n in _group(g, D)],
    ApiKey.DELETE_GROUPS: lambda r: [n for g in r.group_ids for n in _group(g, Operation.DELETE)],
    ApiKey.OFFSET_DELETE: lambda r: (
        _group(r.group_id, Operation.DELETE) + _topics((t.topic for t in r.partitions), R)
    ),
    ApiKey.ADD_PARTITIONS_TO_TXN: lambda r: (
        _transactional_id(r.transactional_id, W) + _topics((p.topic for p in r.partitions), W)
    ),
    ApiKey.END_TXN: lambda r: _transactional_id(r.transactional_id, W),
    ApiKey.ADD_OFFSETS_TO_TXN: lambda r: (
        _transactional_id(r.transactional_id, W) + _group(r.group_id, R)
    ),
    ApiKey.TXN_OFFSET_COMMIT: lambda r: (
        _transactional_id(r.transactional_id, W)
        + _group(r.group_id, R)
        + _topics((o.topic for o in r.offsets), R)
    ),
    ApiKey.DESCRIBE_TRANSACTIONS: lambda r: [
        n for t in r.transactional_ids for n in _transactional_id(t, D)
    ],
    ApiKey.LIST_TRANSACTIONS: lambda r: [],  # trimmed
    ApiKey.DESCRIBE_PRODUCERS: lambda r: _topics((p.topic for p in r.partitions), R),
    ApiKey.WRITE_TXN_MARKERS: lambda r: _cluster(Operation.CLUSTER_ACTION),
    ApiKey.DESCRIBE_QUORUM: lambda r: _cluster(D),
    ApiKey.DESCRIBE_LOG_DIRS: lambda r: _cluster(D),
    ApiKey.ALTER_REPLICA_LOG_DIRS: lambda r: _cluster(Operation.ALTER),
    ApiKey.DESCRIBE_ACLS: lambda r: _cluster(D),
    ApiKey.CREATE_ACLS: lambda r: _cluster(Operation.ALTER),
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: lambda r: _cluster(Operation.ALTER),
    ApiKey.ADD_RAFT_VOTER: lambda r: _cluster(Operation.ALTER),
    ApiKey.REMOVE_RAFT_VOTER: lambda r: _cluster(Operation.ALTER),
    ApiKey.LIST_PARTITION_REASSIGNMENTS: lambda r: _cluster(D),
    ApiKey.ELECT_LEADERS: lambda r: _cluster(Operation.ALTER),
    ApiKey.UPDATE_FEATURES: lambda r: _cluster(Operation.ALTER if r.level > 0 else D),
    ApiKey.ALTER_BROKER_CONFIGS: lambda r: _cluster(Operation.ALTER_CONFIGS),
    ApiKey.UNREGISTER_BROKER: lambda r: _cluster(Operation.ALTER),
    ApiKey.DELETE_ACLS: lambda r: _cluster(Operation.ALTER),
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: lambda r: _cluster(D),
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: lambda r: _cluster(Operation.ALTER),
    ApiKey.METADATA: lambda r: [],  # trimmed instead (see RequestAuthorizer.check)
    ApiKey.LIST_GROUPS: lambda r: [],  # trimmed
    ApiKey.CLASSIC_LIST_GROUPS: lambda r: [],  # trimmed
    ApiKey.API_VERSIONS: lambda r: [],
}
SPECIAL = frozenset({ApiKey.CREATE_TOPICS, ApiKey.INIT_PRODUCER_ID})


class RequestAuthorizer:
    """Decides requests against the ACLs of the node's metadata view (read at each check,
    so a committed ACL change applies to the next request on every connection)."""

    def __init__(self, authorizer: Authorizer, acls: Callable[[], AclRegistry]) -> None:
        self.authorizer = authorizer
        self.acls = acls
        # Decisions on the current ACLs, so a busy connection's produce costs one lookup
        # per topic, not a walk over every ACL; dropped when the ACLs change (a new registry
        # or a new version) or when it holds MAX_CACHED_DECISIONS.
        self._decisions: dict[tuple[str, str, Need], bool] = {}
        self._decided_on: tuple[AclRegistry | None, int] = (None, -1)

    def allowed(self, session: Session, need: Need) -> bool:
        registry = self.acls()
        decided_registry, decided_version = self._decided_on
        if decided_registry is not registry or decided_version != registry.version:
            self._decisions.clear()
            self._decided_on = (registry, registry.version)
        key = (session.principal, session.host, need)
        decision = self._decisions.get(key)
        if decision is None:
            operation, resource_type, name = need
            decision = self.authorizer.authorize(
                registry.of_type(resource_type),
                session.principal,
                session.host,
                operation,
                resource_type,
                name,
            )
            if len(self._decisions) >= MAX_CACHED_DECISIONS:
                self._decisions.clear()
            self._decisions[key] = decision
        return decision

    def check(self, api: ApiKey, request: Any, session: Session) -> Verdict | None:
        """None: allowed as it is. Otherwise a refusal, or the trimming of its answer."""
        if session.node_id is not None:
            if acting_node(request) is not None:
                return None  # an internal api, for the node proved: internal_api_gate decided
            session = deciding_session(request, session)
        if session.principal in self.authorizer.super_users:
            return None
        if api == ApiKey.CREATE_TOPICS:
            if self.allowed(session, (Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)):
                return None
            return self._first_denied(
                session, _topics((t.name for t in request.topics), Operation.CREATE)
            )
        if api == ApiKey.INIT_PRODUCER_ID:
            if request.transactional_id is not None:  # Kafka: WRITE on the transactional id
                return self._first_denied(session, _transactional_id(request.transactional_id, W))
            return self._idempotent_write(session)
        if api == ApiKey.METADATA:
            return self._metadata(request, session)
        if api in (ApiKey.LIST_GROUPS, ApiKey.CLASSIC_LIST_GROUPS):
            return self._list_groups(session)
        if api == ApiKey.OFFSET_FETCH and request.more_groups:
            return self._batched_offsets(request, session)
        if api == ApiKey.LIST_TRANSACTIONS:
            return Verdict(reshape=lambda r: self._trim_transactions(r, session))
        needs = NEEDS.get(api)
        if needs is None:
            return None  # internal apis: internal_api_gate decides
        verdict = self._first_denied(session, needs(request))
        if verdict is None and api == ApiKey.OFFSET_FETCH and request.partitions is None:
            return Verdict(reshape=lambda r: self._trim_offsets(r, session))
        return verdict

    def creator(self, session: Session) -> Callable[[str], bool]:
        """Whether asking for an unknown topic may create it (auto-creation): as Kafka, the
        principal needs DESCRIBE on the topic and CREATE on the cluster or on the topic;
        otherwise the topic is answered TOPIC_AUTHORIZATION_FAILED and not created."""
        if session.principal in self.authorizer.super_users:
            return lambda name: True

        def may_create(name: str) -> bool:
            return self.allowed(session, (D, T, name)) and (
                self.allowed(session, (Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME))
                or self.allowed(session, (Operation.CREATE, T, name))
            )

        return may_create

    def _first_denied(self, session: Session, needs: list[Need]) -> Verdict | None:
        for need in needs:
            if not self.allowed(session, need):
                operation, resource_type, name = need
                return Verdict(
                    DENIAL_CODES[resource_type],
                    f"{session.principal} may not {operation.name} "
                    f"{resource_type.name.lower()} {name!r}",
                )
        return None

    def _idempotent_write(self, session: Session) -> Verdict | None:
        if self.allowed(session, (Operation.IDEMPOTENT_WRITE, ResourceType.CLUSTER, CLUSTER_NAME)):
            return None
        for b in self.acls().of_type(ResourceType.TOPIC):
            if (
                b.permission == Permission.ALLOW
                and b.operation in (Operation.WRITE, Operation.ALL)
                and b.principal in (session.principal, "User:*")
                and b.host in (session.host, "*")
            ):
                return None  # some topic may be written: idempotence is allowed (Kafka 2.8+)
        return Verdict(
            ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            f"{session.principal} may not IDEMPOTENT_WRITE (and writes no topic)",
        )

    def _trim_transactions(self, response: Any, session: Session) -> Any:
        """ListTransactions: only the ids the principal may DESCRIBE (as Kafka)."""
        kept = [
            t
            for t in response.transactions
            if self.allowed(session, (D, ResourceType.TRANSACTIONAL_ID, t.transactional_id))
        ]
        return replace(response, transactions=kept)

    def _metadata(self, request: m.MetadataRequest, session: Session) -> Verdict:
        def trim(response: m.MetadataResponse) -> m.MetadataResponse:
            if request.topics is None:  # every topic: the hidden ones are left out
                topics = [t for t in response.topics if self.allowed(session, (D, T, t.name))]
            else:  # named ones: the hidden ones say so (and reveal nothing else)
                topics = [
                    t
                    if self.allowed(session, (D, T, t.name))
                    else m.TopicMetadata(t.name, ErrorCode.AUTHORIZATION_FAILED, [])
                    for t in response.topics
                ]
            return replace(response, topics=topics)

        return Verdict(reshape=trim)

    def _list_groups(self, session: Session) -> Verdict | None:
        if self.allowed(session, (D, ResourceType.CLUSTER, CLUSTER_NAME)):
            return None

        def trim(response: Any) -> Any:  # ListGroupsResponse or ClassicListGroupsResponse
            groups = [g for g in response.groups if self.allowed(session, (D, G, g.group_id))]
            return replace(response, groups=groups)

        return Verdict(reshape=trim)

    def _batched_offsets(self, request: gm.OffsetFetchRequest, session: Session) -> Verdict:
        """Several groups (Kafka's OffsetFetch v8+): each answered, or refused, on its own, as
        Kafka does; offsets of every partition are trimmed to the topics it may describe."""
        asked = [(request.group_id, request.partitions)]
        asked += [(g.group_id, g.partitions) for g in request.more_groups]
        refusals = [
            self._first_denied(session, NEEDS[ApiKey.OFFSET_FETCH](gm.OffsetFetchRequest(g, p)))
            for g, p in asked
        ]

        def answer(
            refusal: Verdict | None, every: bool, code: int, offsets: list[gm.FetchedOffset]
        ) -> tuple[int, list[gm.FetchedOffset]]:
            if refusal is not None and refusal.error is not None:
                return int(refusal.error), []
            if every:
                offsets = [o for o in offsets if self.allowed(session, (D, T, o.topic))]
            return code, offsets

        def trim(response: gm.OffsetFetchResponse) -> gm.OffsetFetchResponse:
            code, offsets = answer(
                refusals[0], asked[0][1] is None, response.error_code, response.offsets
            )
            more = [
                gm.GroupOffsets(g.group_id, *answer(why, p is None, g.error_code, g.offsets))
                for g, why, (_, p) in zip(
                    response.more_groups, refusals[1:], asked[1:], strict=True
                )
            ]
            return replace(response, error_code=code, offsets=offsets, more_groups=more)

        return Verdict(reshape=trim)

    def _trim_offsets(self, response: gm.OffsetFetchResponse, session: Session) -> Any:
        offsets = [o for o in response.offsets if self.allowed(session, (D, T, o.topic))]
        return replace(response, offsets=offsets)


T, G = ResourceType.TOPIC, ResourceType.GROUP
