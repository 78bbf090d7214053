"""Whose authority a forwarded change is decided with.

A change that needs the controller (topics, partitions, topic configs, ACLs, SCRAM
credentials) may be sent to any node; one that is not the controller forwards it, once, over
its node-authenticated link. Being a node grants the internal apis only, never a client api,
so the controller must not decide such a request as the node that carried it: the node that
received it from the client names that client in it (``forwarded_for``, replacing whatever
the client wrote there), and the controller authorizes a forwarded request that arrived on a
node-authenticated connection as the client it names, as Kafka's controller authorizes a
forwarded envelope as the principal inside it. Kafka's DescribeQuorum changes nothing but
is forwarded the same way, to the Raft leader, which alone knows how far every voter is.
Any other request, from a node or not, is authorized as the connection's own principal.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rillet.broker.security.session import Session
from rillet.wire import messages as m
from rillet.wire.acl_messages import CreateAclsRequest, DeleteAclsRequest
from rillet.wire.broker_admin_messages import AlterBrokerConfigsRequest, UnregisterBrokerRequest
from rillet.wire.cluster_messages import DescribeQuorumRequest
from rillet.wire.feature_messages import UpdateFeaturesRequest
from rillet.wire.forwarding import ForwardedFor
from rillet.wire.raft_voter_messages import AddRaftVoterRequest, RemoveRaftVoterRequest
from rillet.wire.reassignment_messages import AlterReassignmentsRequest, ElectLeadersRequest
from rillet.wire.user_messages import AlterUserScramCredentialsRequest

# Looked up on every request (a set lookup of its type costs a quarter of an isinstance
# against seven classes); message classes are never subclassed.
FORWARDABLE = frozenset(
    {
        m.CreateTopicsRequest,
        m.DeleteTopicsRequest,
        m.CreatePartitionsRequest,
        m.AlterTopicConfigsRequest,
        CreateAclsRequest,
        DeleteAclsRequest,
        AlterUserScramCredentialsRequest,
        AlterReassignmentsRequest,
        ElectLeadersRequest,
        AddRaftVoterRequest,
        RemoveRaftVoterRequest,
        UpdateFeaturesRequest,
        AlterBrokerConfigsRequest,
        UnregisterBrokerRequest,
        DescribeQuorumRequest,  # Kafka's, answered by the Raft leader (not a change)
    }
)


def naming_the_client(request: Any, session: Session) -> Any:
    """A client's forwardable request with the client named in it (as a node would forward
    it); any other request, and every request from a node, as it is."""
    if session.node_id is not None or type(request) not in FORWARDABLE:
        return request
    return replace(request, forwarded_for=ForwardedFor(session.principal, session.host))


def deciding_session(request: Any, session: Session) -> Session:
    """Who ``request`` is authorized as: a request a node forwarded, as the client it names
    (anonymous when it names none); any other, as the connection's session."""
    if session.node_id is None or type(request) not in FORWARDABLE or not request.forwarded:
        return session
    client = request.forwarded_for
    if client is None:
        return Session(session.listener, session.host)
    return Session(session.listener, client.host, client.principal)
